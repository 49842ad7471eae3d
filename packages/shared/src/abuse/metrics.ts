import { Counter, type Registry } from 'prom-client';

/** Abuse-control counters, registered on an app's own registry: rate-limit refusals and the join gate's decisions. */
export function createAbuseMetrics(registry: Registry) {
  return {
    rateLimited: new Counter({
      name: 'rate_limited_total',
      help: 'Requests refused with 429, by route group and scope (account or ip)',
      labelNames: ['route', 'scope'] as const,
      registers: [registry],
    }),
    joinGate: new Counter({
      name: 'bot_gate_decisions_total',
      help: 'Queue joins by bot-gate decision (PASS, SOLVED, CHALLENGED, DEFERRED, DEFERRAL_SERVED, HAS_POSITION, REFUSED)',
      labelNames: ['decision'] as const,
      registers: [registry],
    }),
  };
}

export type AbuseMetrics = ReturnType<typeof createAbuseMetrics>;
