// The timeouts a request meets on its way through the product, in the order they must fire so that every request
// gets an answer: a request that waits too long in a store process is answered 503 with Retry-After by its own
// budget before any socket timeout can close it unanswered.
//
//   pool wait (DB_POOL_WAIT_MS, 3 s) < request budget (REQUEST_BUDGET_MS, 4 s)
//     < the edge's timeout for the fans' routes (EDGE_FAN_TIMEOUT_MS, 5 s)
//     < the server's socket timeouts (idle socket 10 s, whole request received 15 s)
//     < the edge's timeout for the other routes (EDGE_PROXY_TIMEOUT_MS, 12 s) < common clients' timeouts (30 s and up)
//
// Keep-alive is the other way round: the server keeps an idle keep-alive connection (72 s) longer than the clients and
// proxies that pool connections to it (undici: 4 s), so a client never sends a request on a connection the server is
// closing at that moment.

/** The store API's HTTP server timeouts (Fastify's connectionTimeout, requestTimeout, keepAliveTimeout), ms. */
export const STORE_SERVER_TIMEOUTS = {
  /** A socket with no traffic for this long is closed (Node's server.timeout): it must come after the budget. */
  connectionTimeoutMs: 10_000,
  /** The whole request (headers and body) must have arrived within this (Node's requestTimeout; answered 408). */
  requestTimeoutMs: 15_000,
  /** An idle keep-alive connection is kept this long between requests. */
  keepAliveTimeoutMs: 72_000,
} as const;

/** What the event loop may lag between a budget's end and its answer, below the socket timeout (ms). */
export const BUDGET_MARGIN_MS = 2_000;

/**
 * Checks that the timeouts fire in order: the pool wait before the request budget, the budget (with a margin for a
 * lagging event loop) before the server closes an idle socket. `requestBudgetMs` 0 (off) passes only outside
 * production. Throws naming the settings.
 */
export function checkTimeoutOrder(t: { poolWaitMs: number; requestBudgetMs: number; production: boolean }): void {
  const socketMs = STORE_SERVER_TIMEOUTS.connectionTimeoutMs;
  if (t.requestBudgetMs === 0) {
    if (t.production)
      throw new Error(
        'REQUEST_BUDGET_MS=0 (no request budget) is refused when NODE_ENV=production: a request that waits past the socket timeout would be closed unanswered',
      );
    return;
  }
  if (t.requestBudgetMs <= t.poolWaitMs)
    throw new Error(
      `REQUEST_BUDGET_MS (${t.requestBudgetMs}) must be above DB_POOL_WAIT_MS (${t.poolWaitMs}): a request that waited its whole pool wait must still have time to be answered`,
    );
  if (t.requestBudgetMs > socketMs - BUDGET_MARGIN_MS)
    throw new Error(
      `REQUEST_BUDGET_MS (${t.requestBudgetMs}) must be at most ${socketMs - BUDGET_MARGIN_MS}: the server closes a socket idle for ${socketMs} ms, and a request past its budget must be answered before that`,
    );
}
