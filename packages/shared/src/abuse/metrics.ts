import { Counter, Gauge, type Registry } from 'prom-client';

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
    requestLimitsLocal: new Gauge({
      name: 'request_limits_local',
      help: '0 while request limits are counted in the shared Redis (or none is configured); N while Redis does not answer and this process counts in its own memory at 1/N of each limit (N: STORE_API_PROCESSES)',
      aggregator: 'max',
      registers: [registry],
    }),
  };
}

/**
 * A request limit as one of `processes` store-API processes counts it in its own memory while the shared counts
 * (Redis) do not answer: its share, rounded down (at least 1), so all of them together allow no more than the limit.
 * Conservative: a fan whose requests all reach one process is limited sooner, for as long as Redis is away.
 */
export function localShareOfLimit(limit: number, processes: number): number {
  return Math.max(1, Math.floor(limit / Math.max(1, processes)));
}

export type AbuseMetrics = ReturnType<typeof createAbuseMetrics>;
