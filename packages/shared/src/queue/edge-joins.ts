// Joins an edge sends to the origin many to a request (`POST /edge/joins`): the contract between the edge worker
// (apps/edge/src/join-batch.ts) and the store API (apps/store-api/src/routes/queue/edge-joins.ts). Each join of a
// batch is the fan's own request, headers and all, as the edge would have forwarded it alone; the origin runs each
// through everything `POST /events/:id/queue` runs and answers each with what it would have answered alone. Web
// Crypto only, no Node imports (the worker bundles this file).
import { openPayload, signPayload, TokenError, type TokenKey } from '../tokens/signing.js';

/** The origin's route for a batch of joins. */
export const EDGE_JOINS_PATH = '/edge/joins';
/** The header carrying the batch's signature: a token (signPayload) over the body's SHA-256. */
export const EDGE_JOINS_HEADER = 'x-onsale-edge-joins';
/**
 * The answer's type an edge asks for (its Accept) to have each join's answer as soon as that join is done: one JSON
 * line a join, `{ i, status, headers, body }` (i: its place in the batch), in the order they finish, instead of one
 * `{ answers }` once the batch's slowest join is done. A join of a batch then waits for its own answer only.
 */
export const EDGE_JOINS_STREAM = 'application/x-ndjson';
/** Most joins in one batch. */
export const EDGE_JOINS_MAX = 100;
/** How old (or how far ahead of the origin's clock) a batch's signature may be. */
export const EDGE_JOINS_MAX_AGE_MS = 60_000;
/** A join's path: `POST /events/:id/queue`, with its query (a presale tier) if any; nothing else may be batched. */
export const EDGE_JOIN_PATH = /^\/events\/[^/?#]+\/queue(?:\?[^#]*)?$/;
/** The longest path (with its query) a batched join may have; a longer one is sent alone. */
export const EDGE_JOIN_PATH_MAX = 2048;

/** One fan's join: its path (and query) and its headers as the origin would have received them from the edge. */
export interface EdgeJoin {
  path: string;
  headers: Record<string, string>;
}

/** What the origin answered one join: status, the headers the fan gets, the body as sent. */
export interface EdgeJoinAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One line of a streamed batch answer (EDGE_JOINS_STREAM): the answer of the batch's join at place `i`. */
export interface EdgeJoinAnswerLine extends EdgeJoinAnswer {
  i: number;
}

export interface EdgeJoinsBody {
  joins: EdgeJoin[];
}

export interface EdgeJoinsAnswer {
  answers: EdgeJoinAnswer[];
}

const utf8 = new TextEncoder();

/** SHA-256 of a text, hex (Web Crypto: the edge's way; the origin may pass its own synchronous digest to openEdgeJoins). */
export async function sha256Hex(text: string): Promise<string> {
  const d = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', utf8.encode(text)));
  let hex = '';
  for (const b of d) hex += (b < 16 ? '0' : '') + b.toString(16);
  return hex;
}

/** The batch's signature: the body's digest and the time, signed with the queue token key (only an edge holds it). */
export async function signEdgeJoins(key: TokenKey, body: string, now: number): Promise<string> {
  return signPayload(key, { kind: 'edge-joins', at: now, sha256: await sha256Hex(body) });
}

/**
 * Checks a batch's signature against its body's digest: TOKEN_MALFORMED / TOKEN_FORGED as for tokens (a digest that
 * is not the body's is forged), TOKEN_EXPIRED when older than EDGE_JOINS_MAX_AGE_MS (or as far ahead).
 */
export async function openEdgeJoins(key: TokenKey, signature: string, bodySha256Hex: string, now: number): Promise<void> {
  const p = (await openPayload(key, signature)) as { kind?: unknown; at?: unknown; sha256?: unknown } | null;
  if (typeof p !== 'object' || p === null || p.kind !== 'edge-joins' || typeof p.at !== 'number' || typeof p.sha256 !== 'string')
    throw new TokenError('TOKEN_MALFORMED');
  if (p.sha256 !== bodySha256Hex) throw new TokenError('TOKEN_FORGED');
  if (Math.abs(now - p.at) > EDGE_JOINS_MAX_AGE_MS) throw new TokenError('TOKEN_EXPIRED', 'the batch is too old');
}

/** A batch's body as the origin accepts it (1 to EDGE_JOINS_MAX joins, each a join's path and string headers), or null. */
export function parseEdgeJoins(value: unknown): EdgeJoinsBody | null {
  const joins = (value as { joins?: unknown } | null)?.joins;
  if (!Array.isArray(joins) || joins.length === 0 || joins.length > EDGE_JOINS_MAX) return null;
  for (const j of joins as unknown[]) {
    if (typeof j !== 'object' || j === null) return null;
    const { path, headers } = j as { path?: unknown; headers?: unknown };
    if (typeof path !== 'string' || path.length > EDGE_JOIN_PATH_MAX || !EDGE_JOIN_PATH.test(path)) return null;
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return null;
    for (const v of Object.values(headers)) if (typeof v !== 'string') return null;
  }
  return { joins: joins as EdgeJoin[] };
}
