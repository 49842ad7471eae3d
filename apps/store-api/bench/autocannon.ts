import { createRequire } from 'node:module';

// autocannon (a dev dependency of the workspace root) without type declarations of its own: the part of its API the
// benchmarks use, typed here.
export interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (req: AutocannonRequest) => AutocannonRequest;
}
export interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
  '2xx': number;
}
type Autocannon = (o: {
  url: string;
  connections: number;
  duration: number;
  pipelining?: number;
  /** Requests a second across all connections (default: as fast as they are answered). */
  overallRate?: number;
  requests?: AutocannonRequest[];
  headers?: Record<string, string>;
}) => Promise<AutocannonResult>;

const require = createRequire(import.meta.url);
export const autocannon = require('autocannon') as Autocannon;

/** The figures a benchmark prints of one autocannon run. */
export function figures(r: AutocannonResult) {
  return {
    reqPerSec: Math.round(r.requests.total / r.duration),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    maxMs: r.latency.max,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}
