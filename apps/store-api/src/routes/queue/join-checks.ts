import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Answer } from '../../errors.js';

/** The join route. Its checks are the ones below, run by its own hooks: the generic plugins' hooks leave it alone. */
export const JOIN_ROUTE_KEY = 'POST /events/:id/queue';

/** Who a join is from, once the checks before validation passed: its account and its counts on the join limits. */
export interface JoinSender {
  accountId: string;
  requestCounts: { account: number; ip: number } | null;
}

/**
 * The join route's checks, in their order: the one home of that order. The route's own hooks run them for a join
 * sent alone (`hooks`), and the edge's batch route for each join of a batch run without a request of its own
 * (plainJoinRunner in edge-joins.ts), so the two answer alike (edge-joins.test.ts compares them):
 *
 * 1. the request limits by the fan's address (`429 RATE_LIMITED`, scope ip): a flood from one address is refused
 *    before any token is verified;
 * 2. the account check: the account token verified, its account recorded the first time this process sees it
 *    (`401`);
 * 3. the request limits by account (`429`, scope account);
 * - then the route's validation of its params, query and headers (Fastify's for a request; for a batch's join,
 *   plainJoin's checks, which send anything they do not accept through the whole server instead);
 * 4. the bot gate on the fan's own headers and counts (`403 CHALLENGE_REQUIRED`, `409 JOIN_DEFERRED`, ...).
 *
 * Then the join itself (joinAnswer). Every refusal is the answer the route sends; an error thrown is the error
 * handler's answer.
 */
export function joinChecks(app: FastifyInstance) {
  /** Checks 1-3, before the route's validation: who the join is from, or the refusal to send. */
  const beforeValidation = async (ip: string | undefined, authorization: string | undefined): Promise<JoinSender | { refusal: Answer }> => {
    let requestCounts: JoinSender['requestCounts'] = null;
    const byIp = await app.requestLimits.count('join', 'ip', { ip, accountId: '' });
    if (byIp) {
      requestCounts = { account: 0, ip: byIp.used };
      if (byIp.refusal) return { refusal: byIp.refusal };
    }
    const accountId = await app.fanAccount(authorization);
    const byAccount = await app.requestLimits.count('join', 'account', { ip, accountId });
    if (byAccount) {
      requestCounts = { account: byAccount.used, ip: requestCounts?.ip ?? 0 };
      if (byAccount.refusal) return { refusal: byAccount.refusal };
    }
    return { accountId, requestCounts };
  };
  /** Check 4, after the route's validation: the bot gate (absent with BOT_GATE_ENABLED=false). */
  const afterValidation = async (eventId: string, sender: JoinSender, headers: FastifyRequest['headers']): Promise<void> => {
    await app.joinGate?.({ eventId, accountId: sender.accountId, headers, requestCounts: sender.requestCounts });
  };
  /** The same checks as the join route's hooks: 1-3 on its request, 4 before its handler (after validation). */
  const hooks = {
    onRequest: async (req: FastifyRequest, reply: FastifyReply) => {
      const r = await beforeValidation(req.ip, req.headers.authorization);
      if ('refusal' in r) return reply.code(r.refusal.status).headers(r.refusal.headers).send(r.refusal.body);
      req.accountId = r.accountId;
      req.requestCounts = r.requestCounts;
    },
    preHandler: async (req: FastifyRequest) => {
      await afterValidation((req.params as { id: string }).id, { accountId: req.accountId, requestCounts: req.requestCounts }, req.headers);
    },
  };
  return { beforeValidation, afterValidation, hooks };
}
