import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  EDGE_JOINS_HEADER,
  EDGE_JOINS_MAX,
  EDGE_JOINS_PATH,
  EDGE_JOINS_STREAM,
  openEdgeJoins,
  parseEdgeJoins,
  TokenError,
  type EdgeJoin,
  type QueueService,
  type EdgeJoinAnswer,
  type TokenKey,
} from '@onsale/shared/queue';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import { requestTimer } from '@onsale/shared/metrics';
import { errorResponses, serviceUnavailableSchema } from '../schemas.js';
import { compiledSerializer } from '../compiled-serializer.js';
import type { Answer } from '../../errors.js';
import { joinAnswer, joinHeadersAccepted, joinResponses } from './index.js';
import { joinChecks } from './join-checks.js';

/** A batch's body: at most EDGE_JOINS_MAX joins of a fan's headers each (the store's header limit is 16 KB a request). */
const BODY_LIMIT = EDGE_JOINS_MAX * 32 * 1024;

/** Headers of an answer that belong to its connection, not to the answer: the edge's own answer to the fan sets them. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date']);

/** A join whose path and headers pass the join route's checks as they are (no escapes to decode, nothing to refuse). */
const PLAIN_JOIN_PATH = /^\/events\/([A-Za-z0-9_.~-]{1,64})\/queue(?:\?tier=([A-Za-z0-9_.~-]{1,32}))?$/;
const LOWER_CASE = /^[a-z0-9-]+$/;
/** Header names LOWER_CASE accepted (a crowd's browsers send a few dozen): a join's names are looked up, not matched. */
const lowerCaseNames = new Set<string>();
const isLowerCase = (name: string) => {
  if (lowerCaseNames.has(name)) return true;
  if (!LOWER_CASE.test(name)) return false;
  if (lowerCaseNames.size < 1000 && name.length <= 64) lowerCaseNames.add(name);
  return true;
};
/** The join route's own statistics key (its histogram entry: each join of a batch is counted as the join it is). */
const JOIN_ROUTE = { key: 'POST /events/:id/queue', url: '/events/:id/queue' };

/**
 * The address Fastify gives a request (req.ip) from the address it came from and its X-Forwarded-For, under the
 * store's trustProxy (false, true, or the addresses believed), as Fastify's own request builds it (lib/request.js).
 */
export function fastifyIpOf(trustProxy: boolean | string[]) {
  if (!trustProxy) return (remoteAddress: string | undefined) => remoteAddress;
  const compiled = trustProxy === true ? () => true : proxyAddr.compile(trustProxy);
  // Whether the connection's own address is trusted, decided once per address (every join of a batch asks it of the
  // edge's address; the list's answer depends on the address alone); the fans' forwarded addresses are asked as ever.
  const trustedHop = new Map<string, boolean>();
  const trust = (address: string, i: number) => {
    if (i !== 0) return compiled(address, i);
    let t = trustedHop.get(address);
    if (t === undefined) {
      t = compiled(address, i);
      if (trustedHop.size < 1000) trustedHop.set(address, t);
    }
    return t;
  };
  return (remoteAddress: string | undefined, forwardedFor: string | undefined) => {
    const raw = { headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }, socket: { remoteAddress } };
    const all = proxyAddr.all(raw as unknown as Parameters<typeof proxyAddr.all>[0], trust);
    return all[all.length - 1];
  };
}

/** A join of a batch the store runs itself (the rest are run through the whole server, as their own request). */
interface PlainJoin {
  eventId: string;
  tier: string | undefined;
  headers: Record<string, string>;
}

/**
 * The join as the join route would read it, when its path and headers pass that route's checks as they are; null
 * for anything else (escapes in the path, another query, a header name in capitals, a header the route refuses): such
 * a join is run through the whole server instead, and gets the route's own refusal in its own order.
 */
function plainJoin(j: EdgeJoin): PlainJoin | null {
  const m = PLAIN_JOIN_PATH.exec(j.path);
  if (!m) return null;
  for (const name of Object.keys(j.headers)) if (!isLowerCase(name)) return null;
  // A request without them never comes from an edge's batch (the edge sends such a join alone); inject adds both.
  if (j.headers['user-agent'] === undefined || !joinHeadersAccepted(j.headers)) return null;
  return { eventId: m[1]!, tier: m[2], headers: j.headers.host === undefined ? { ...j.headers, host: 'localhost:80' } : j.headers };
}

const answersSchema = z.object({
  answers: z.array(z.object({ status: z.number(), headers: z.record(z.string(), z.string()), body: z.string() })),
});

/**
 * `POST /edge/joins`: joins an edge worker collected from fans arriving together, sent as one request (the edge's
 * origin request per join was most of what a join through it cost). Only an edge may send one: the body's SHA-256 is
 * signed with the queue token secret (signEdgeJoins). The batch passes what the store does for a request as a whole
 * (load shedding, as a join would be shed; the request budget) once. Each plain join (nearly all) is then run here as
 * the join route's hooks run it (plainJoinRunner: the request limits by the fan's address, trusted exactly as the
 * batch's own connection is, the account check, the limits by account, the bot gate on the fan's own headers, the
 * join's own rules and the join batcher), without a request of its own: `inject` per join cost more of the store's CPU
 * than the join. A join that is not plain (an escape in its path, a header the route refuses) is run through the
 * whole server as its own request. The joins start in the batch's order (the order the edge received them) and each
 * is answered what it would have been alone: its status, headers and body (edge-joins.test.ts compares them).
 */
export const edgeJoinsRoutes: FastifyPluginAsyncZod<{
  tokenKey: TokenKey;
  now: () => number;
  queue: QueueService;
  trustProxy: boolean | string[];
  /** REQUEST_BUDGET_MS (0: none): a streamed batch's joins still unanswered then are answered 503 request_budget. */
  requestBudgetMs?: number;
}> = async (app, { tokenKey, now, queue, trustProxy, requestBudgetMs = 0 }) => {
  const runJoin = plainJoinRunner(app, queue, trustProxy);
  // The body is read as text: its digest is what the edge signed.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_req, body, done) => done(null, body));
  app.post(
    EDGE_JOINS_PATH,
    {
      config: { public: true },
      bodyLimit: BODY_LIMIT,
      serializerCompiler: compiledSerializer,
      schema: {
        tags: ['edge'],
        summary: `Joins an edge worker collected, up to ${EDGE_JOINS_MAX} in one request, each answered as POST /events/:id/queue would have answered it alone`,
        description:
          `The body is \`{ joins: [{ path, headers }] }\` (each path a join's, /events/:id/queue with its query), signed by the edge in ${EDGE_JOINS_HEADER} ` +
          "(signEdgeJoins: the body's SHA-256 under the queue token secret). Each join runs through everything the join route runs, in order; " +
          "the answer lists, in the same order, each join's status, headers and body. Refusals of the whole batch: 401 TOKEN_MALFORMED | TOKEN_FORGED | TOKEN_EXPIRED (field " +
          `${EDGE_JOINS_HEADER}), 400 VALIDATION_FAILED (not a batch of joins), 503 when shed as a join would be.`,
        security: [],
        response: { 200: answersSchema, ...errorResponses, 503: serviceUnavailableSchema },
      },
    },
    async (req, reply) => {
      const text = typeof req.body === 'string' ? req.body : '';
      const signature = req.headers[EDGE_JOINS_HEADER];
      try {
        await openEdgeJoins(
          tokenKey,
          typeof signature === 'string' ? signature : '',
          createHash('sha256').update(text).digest('hex'),
          now(),
        );
      } catch (e) {
        if (e instanceof TokenError) return reply.status(401).send({ error: e.code, message: e.message, field: EDGE_JOINS_HEADER });
        throw e;
      }
      let batch;
      try {
        batch = parseEdgeJoins(JSON.parse(text));
      } catch {
        batch = null;
      }
      if (!batch)
        return reply.status(400).send({
          error: 'VALIDATION_FAILED',
          message: `body: 1-${EDGE_JOINS_MAX} joins, each { path: /events/:id/queue, headers: strings }`,
          field: 'body',
        });
      const remoteAddress = req.socket.remoteAddress;
      // Started one after the other in the batch's order, run together (their inserts share the join batcher's
      // statement). A plain join (nearly all) is run here; anything else through the whole server as its own request.
      const running = batch.joins.map((j) => {
        const plain = plainJoin(j);
        return plain ? runJoin(plain, remoteAddress, req.log) : injected(app, j, remoteAddress);
      });
      if (req.headers.accept === EDGE_JOINS_STREAM) return streamAnswers(app, reply, running, requestBudgetMs);
      return { answers: await Promise.all(running) };
    },
  );
};

/**
 * A batch's answers streamed (EDGE_JOINS_STREAM): each join's line written as soon as that join is done, so that a
 * join does not wait for the batch's slowest (one waiting long for a pooled connection held every other join of its
 * batch, and the edge's place for the next batch, in the stadium's mix). What the budget (REQUEST_BUDGET_MS) gives a
 * request alone, each join gets here: one still running when the batch's budget ends is answered 503 request_budget
 * then (its late answer dropped, as a request's is). A join whose run failed gets the error handler's answer.
 */
function streamAnswers(app: FastifyInstance, reply: FastifyReply, running: Promise<EdgeJoinAnswer>[], budgetMs: number) {
  const out = new PassThrough();
  const answered = new Array<boolean>(running.length).fill(false);
  let left = running.length;
  let budget: ReturnType<typeof setTimeout> | undefined;
  // The lines of joins done in the same turn (a batch's joins mostly finish together, when the join batcher's
  // statement returns) leave in one write: a write a join cost the store a chunk and a system call each.
  let pending = '';
  const flush = () => {
    const lines = pending;
    pending = '';
    if (lines === '' || out.destroyed || out.writableEnded) return;
    out.write(lines);
    if (left === 0) out.end();
  };
  const write = (i: number, a: EdgeJoinAnswer) => {
    if (answered[i]) return;
    answered[i] = true;
    left--;
    if (!out.destroyed && !out.writableEnded) {
      if (pending === '') setImmediate(flush);
      // JSON.stringify({ i, status, headers, body }) written in parts: the body, JSON already, is quoted once.
      pending += `{"i":${i},"status":${a.status},"headers":${JSON.stringify(a.headers)},"body":${JSON.stringify(a.body)}}\n`;
    }
    if (left === 0) clearTimeout(budget);
  };
  running.forEach((p, i) => {
    p.then(
      (a) => write(i, a),
      (e: unknown) => write(i, plainAnswer(app.errorAnswer(e, reply.log))),
    );
  });
  if (budgetMs > 0 && left > 0)
    budget = setTimeout(
      () => {
        for (let i = 0; i < running.length; i++) if (!answered[i]) write(i, plainAnswer(app.overBudgetAnswer()));
      },
      Math.max(0, budgetMs - reply.elapsedTime),
    );
  out.once('close', () => clearTimeout(budget));
  // An empty line first: the answer's head leaves now (Fastify sends a stream's head with its first bytes), so the
  // budget of the batch as a whole never answers it; each join's budget is kept above.
  out.write('\n');
  return reply.header('content-type', EDGE_JOINS_STREAM).header('cache-control', 'no-store').send(out);
}

/** An answer of the store's error handler as a batch's join answer (the body as JSON.stringify writes it). */
const plainAnswer = (a: { status: number; headers: Record<string, string>; body: unknown }): EdgeJoinAnswer => ({
  status: a.status,
  headers: { ...a.headers, 'content-type': 'application/json; charset=utf-8' },
  body: JSON.stringify(a.body),
});

/** A join run through the whole server as its own request (`inject`), answered as it was. */
async function injected(app: FastifyInstance, j: EdgeJoin, remoteAddress: string | undefined): Promise<EdgeJoinAnswer> {
  const r = await app.inject({ method: 'POST', url: j.path, headers: j.headers, ...(remoteAddress ? { remoteAddress } : {}) });
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers))
    if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
  return { status: r.statusCode, headers, body: r.payload };
}

/**
 * Runs a plain join of a batch as the server runs the join route, without a request of its own: the join's checks
 * (joinChecks: the same function the route's hooks call, so the order lives in one place; the fan's address is
 * Fastify's req.ip from the batch's address and the fan's X-Forwarded-For), then the join; each refusal the one the
 * route would send, each answer written by the route's serializer for its status and counted under the join route. What
 * the store does for a request as a whole (load shedding, the request budget) was done once, for the batch.
 */
function plainJoinRunner(app: FastifyInstance, queue: QueueService, trustProxy: boolean | string[]) {
  const ipOf = fastifyIpOf(trustProxy);
  const observe = requestTimer(app.metrics.httpDuration);
  const serializers = new Map<number, (data: unknown) => string>(
    Object.entries({ ...joinResponses, 429: errorResponses[400] }).map(([status, schema]) => [
      Number(status),
      compiledSerializer({ schema }),
    ]),
  );
  const checks = joinChecks(app);
  // The join route's checks in their order (join-checks.ts), the route's validation being plainJoin's, then the join.
  const admitAndJoin = async (j: PlainJoin, remoteAddress: string | undefined): Promise<Answer> => {
    const sender = await checks.beforeValidation(ipOf(remoteAddress, j.headers['x-forwarded-for']), j.headers.authorization);
    if ('refusal' in sender) return sender.refusal;
    await checks.afterValidation(j.eventId, sender, j.headers);
    const a = await joinAnswer(queue, sender.accountId, j.eventId, j.tier, j.headers as typeof j.headers & { 'x-device-id': string });
    return { status: 200, ...a };
  };
  return async (j: PlainJoin, remoteAddress: string | undefined, log: FastifyBaseLogger): Promise<EdgeJoinAnswer> => {
    const started = performance.now();
    let a: Answer;
    try {
      a = await admitAndJoin(j, remoteAddress);
    } catch (e) {
      a = app.errorAnswer(e, log);
    }
    observe(JOIN_ROUTE.key, 'POST', JOIN_ROUTE.url, a.status, (performance.now() - started) / 1000);
    const body = (serializers.get(a.status) ?? JSON.stringify)(a.body);
    return { status: a.status, headers: { ...a.headers, 'content-type': 'application/json; charset=utf-8' }, body };
  };
}
