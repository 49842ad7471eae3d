import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  EDGE_JOINS_HEADER,
  EDGE_JOINS_MAX,
  EDGE_JOINS_PATH,
  openEdgeJoins,
  parseEdgeJoins,
  TokenError,
  type EdgeJoinAnswer,
  type TokenKey,
} from '@onsale/shared/queue';
import { errorResponses, serviceUnavailableSchema } from '../schemas.js';
import { compiledSerializer } from '../compiled-serializer.js';

/** A batch's body: at most EDGE_JOINS_MAX joins of a fan's headers each (the store's header limit is 16 KB a request). */
const BODY_LIMIT = EDGE_JOINS_MAX * 32 * 1024;

/** Headers of an answer that belong to its connection, not to the answer: the edge's own answer to the fan sets them. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date']);

const answersSchema = z.object({
  answers: z.array(z.object({ status: z.number(), headers: z.record(z.string(), z.string()), body: z.string() })),
});

/**
 * `POST /edge/joins`: joins an edge worker collected from fans arriving together, sent as one request (the edge's
 * origin request per join was most of what a join through it cost). Only an edge may send one: the body's SHA-256 is
 * signed with the queue token secret (signEdgeJoins). Each join is run as the request it is, through the whole
 * server (`inject`: the load shedding, the request limits by the fan's address, the account check, the bot gate on the
 * fan's own headers, the join's own rules and the join batcher), from the address this request came from, so the
 * store trusts the fan's X-Forwarded-For exactly as it would have had the edge forwarded the join alone. The joins
 * start in the batch's order (the order the edge received them) and each is answered what it would have been alone.
 */
export const edgeJoinsRoutes: FastifyPluginAsyncZod<{ tokenKey: TokenKey; now: () => number }> = async (app, { tokenKey, now }) => {
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
      // Started one after the other in the batch's order, run together (their inserts share the join batcher's statement).
      const answers = await Promise.all(
        batch.joins.map((j) =>
          app.inject({ method: 'POST', url: j.path, headers: j.headers, ...(remoteAddress ? { remoteAddress } : {}) }),
        ),
      );
      return {
        answers: answers.map((r): EdgeJoinAnswer => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(r.headers))
            if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
          return { status: r.statusCode, headers, body: r.payload };
        }),
      };
    },
  );
};
