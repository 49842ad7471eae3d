// What the origin publishes for edges, and the answer to a status poll built from it: one rule, run by the store
// API (QueueService) and by the edge worker (apps/edge). Web Crypto only, like edge.ts: its imports are
// ./edge.js, ./fairness.js and ./copy.js, none of which imports Node.
import {
  computeStatusNow,
  signPayload,
  openPayload,
  TokenError,
  type QueueStatus,
  type QueueTokenClaims,
  type StatusOptions,
  type TokenKey,
  type WatermarkState,
} from './edge.js';
import type { FanLanguage, QueueCopy } from './copy.js';

/** One queue of an event (its own, or a presale tier's) as the status answer needs it. */
export interface QueueFacts {
  watermark: WatermarkState;
  /** The event's words per state (English). */
  copy: QueueCopy;
  /** The event's words per state in every fan language (English is `copy`). */
  copyByLanguage?: Partial<Record<FanLanguage, QueueCopy>>;
  listingId: string;
  /** A presale tier's queue: the tier's code and name (admission tokens carry the code); null for the event's own. */
  tier: string | null;
  tierName: string | null;
  /** A presale's close (ms since the epoch); null for an event's own queue. */
  closesAt: number | null;
  /**
   * The places that moved to another device, as [join index, moves]: a queue token issued with fewer moves is an
   * earlier device's (placeMovedAway). Absent or empty: no place has moved.
   */
  moves?: [number, number][];
}

/** A queue in the edge state document: its facts and its id (the queue token's `queueId ?? eventId`). */
export interface EdgeQueueState extends QueueFacts {
  queueId: string;
}

/**
 * Everything an edge needs to answer an event's status polls and watermark reads without the origin: every queue
 * of the event, and the event's presale tiers (codes in sale order, each with its queue; empty without tiers).
 * Published by the store API at `GET /events/:id/edge-state`; nothing in it is secret (the seed appears only
 * after its reveal at the open).
 */
export interface EdgeEventState {
  eventId: string;
  tiers: { code: string; queueId: string; general: boolean }[];
  queues: EdgeQueueState[];
  /** When the origin built this document (ms since the epoch). */
  generatedAt: number;
}

const moveMaps = new WeakMap<[number, number][], Map<number, number>>();

/**
 * The one-place rule across devices: a place moves to the device its fan last joined from (QueueService.join), and
 * the queue token of an earlier device (issued with fewer moves than the place now has) no longer holds it. Answered
 * from the queue's facts in memory, as the rest of the status rule; the store API and the edge both refuse such a
 * poll with 409 POSITION_MOVED, and the fan's page says where the place went.
 */
export function placeMovedAway(claims: QueueTokenClaims, q: Pick<QueueFacts, 'moves'>): boolean {
  const list = q.moves;
  if (!list || list.length === 0) return false;
  let byIndex = moveMaps.get(list);
  if (!byIndex) {
    byIndex = new Map(list);
    moveMaps.set(list, byIndex);
  }
  return (byIndex.get(claims.joinIndex) ?? 0) > (claims.moves ?? 0);
}

/** What a fan's page is told when the place moved to another device. */
export const POSITION_MOVED_MESSAGE =
  'your place in line moved to another device where this account joined; continue there, or join again here to bring it back';

/** A status with the event's words for its state; when sold out, where to join the listing's waitlist. */
export type StatusAnswer = QueueStatus & { message: string; waitlist?: { listingId: string; join: string } };

/**
 * The status rule (computeStatus) with the words a fan reads: the event's copy for the state, or, for a presale's
 * queue that no longer sells, why (its window closed, or its seats went). `now` is ms since the epoch.
 */
export async function answerStatus(
  claims: QueueTokenClaims,
  q: QueueFacts,
  now: number,
  opts: StatusOptions = {},
  language?: FanLanguage,
): Promise<StatusAnswer> {
  return answerStatusNow(claims, q, now, opts, language);
}

/** answerStatus without a promise when the status rule needs none (see computeStatusNow); throws rather than rejects. */
export function answerStatusNow(
  claims: QueueTokenClaims,
  q: QueueFacts,
  now: number,
  opts: StatusOptions = {},
  language?: FanLanguage,
): StatusAnswer | Promise<StatusAnswer> {
  const status = computeStatusNow(claims, q.watermark, now, opts);
  return status instanceof Promise ? status.then((s) => withWords(s, q, now, language)) : withWords(status, q, now, language);
}

function withWords(status: QueueStatus, q: QueueFacts, now: number, language: FanLanguage | undefined): StatusAnswer {
  const closed = q.closesAt !== null && now >= q.closesAt;
  const message =
    status.state === 'SOLD_OUT' && q.tier
      ? closed
        ? `The ${q.tierName} presale has ended; its unsold seats go to the next sale. Join the general sale's queue.`
        : `The ${q.tierName} presale has sold out. Join the general sale's queue.`
      : ((language && q.copyByLanguage?.[language]) || q.copy)[status.state];
  // The status's own fields in their order, then the words (literals, not a spread: see computeStatusNow).
  const a: StatusAnswer =
    status.expired === undefined
      ? {
          position: status.position,
          admittedThrough: status.admittedThrough,
          admit: status.admit,
          state: status.state,
          estWaitSeconds: status.estWaitSeconds,
          retryAfterSeconds: status.retryAfterSeconds,
          message,
        }
      : {
          position: status.position,
          admittedThrough: status.admittedThrough,
          admit: status.admit,
          state: status.state,
          expired: status.expired,
          estWaitSeconds: status.estWaitSeconds,
          retryAfterSeconds: status.retryAfterSeconds,
          message,
        };
  if (status.state === 'SOLD_OUT') a.waitlist = { listingId: q.listingId, join: `/listings/${q.listingId}/waitlist` };
  return a;
}

/** The body of `GET /events/:id/watermark`: public and cacheable. */
export function publicWatermark(w: WatermarkState): {
  admittedThrough: number;
  state: WatermarkState['state'];
  ratePerMin: number;
  updatedAt: string;
} {
  return { admittedThrough: w.admittedThrough, state: w.state, ratePerMin: w.ratePerMin, updatedAt: new Date(w.updatedAt).toISOString() };
}

/** Admission tokens an edge issued, reported to the origin in batches (the admission controller counts them). */
export interface EdgeClaimsReport {
  kind: 'edge-claims';
  /** Random, unique per report: the origin counts a report once. */
  id: string;
  /** When the edge sent it (ms since the epoch); the origin refuses reports older than EDGE_REPORT_MAX_AGE_MS. */
  at: number;
  claims: { queueId: string; accountId: string }[];
}

/** How old (or how far ahead of the origin's clock) a claims report may be. */
export const EDGE_REPORT_MAX_AGE_MS = 60_000;
/**
 * Most claims in one report: at the longest ids a claim may carry (256 characters each) a signed report stays under
 * EDGE_REPORT_MAX_LENGTH (1,000 x 539 bytes of JSON, 4/3 of it in base64url: about 720,000 characters).
 */
export const EDGE_REPORT_MAX_CLAIMS = 1_000;
/**
 * The longest signed report the origin opens (the `POST /edge/claims` body's bound). Reports were once opened with the
 * tokens' 4,096 characters: about 30 claims. A report with more (an edge admitting more than that in its second)
 * was refused TOKEN_MALFORMED and dropped, and the admission controller never counted those fans (issue 28).
 */
export const EDGE_REPORT_MAX_LENGTH = 1_000_000;

/** Signs a claims report with the queue token key (only a holder of the secret can report admissions). */
export function signClaimsReport(key: TokenKey, claims: EdgeClaimsReport['claims'], now: number): Promise<string> {
  const id = globalThis.crypto.randomUUID();
  return signPayload(key, { kind: 'edge-claims', id, at: now, claims } satisfies EdgeClaimsReport);
}

const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 256;
const isUuid = (v: unknown): v is string =>
  typeof v === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v);

/**
 * Opens a signed claims report: TOKEN_MALFORMED / TOKEN_FORGED as for tokens, TOKEN_EXPIRED when it is older than
 * EDGE_REPORT_MAX_AGE_MS (or as far in the future). The caller remembers ids to count each report once.
 */
export async function openClaimsReport(key: TokenKey, signed: string, now: number): Promise<EdgeClaimsReport> {
  const r = (await openPayload(key, signed, EDGE_REPORT_MAX_LENGTH)) as Partial<EdgeClaimsReport> | null;
  if (
    typeof r !== 'object' ||
    r === null ||
    r.kind !== 'edge-claims' ||
    !isText(r.id) ||
    typeof r.at !== 'number' ||
    !Array.isArray(r.claims)
  )
    throw new TokenError('TOKEN_MALFORMED');
  if (
    r.claims.length > EDGE_REPORT_MAX_CLAIMS ||
    // A queue id is a UUID (the origin writes claims by it: one that is not would fail every write of the batch).
    !r.claims.every((c) => typeof c === 'object' && c !== null && isUuid(c.queueId) && isText(c.accountId))
  )
    throw new TokenError('TOKEN_MALFORMED');
  if (Math.abs(now - r.at) > EDGE_REPORT_MAX_AGE_MS) throw new TokenError('TOKEN_EXPIRED', 'the report is too old');
  return { kind: 'edge-claims', id: r.id, at: r.at, claims: r.claims.map((c) => ({ queueId: c.queueId, accountId: c.accountId })) };
}
