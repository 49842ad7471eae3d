// What an edge / CDN worker runs to answer a status poll without calling the origin: verify a queue token,
// compare it with the published watermark, and sign admission tokens. Web Crypto only; the imports are
// ./fairness.js, ../tokens/signing.js (the token format, key and error, shared with the other signed codes) and
// ../events/limits.js, which import nothing. Keep it that way: edge.test.ts bundles this file and runs it in a bare
// context.
import { permutePositionNow } from './fairness.js';
import { openPayload, signPayload, TokenError, type TokenKey } from '../tokens/signing.js';

// The token primitives, with the queue's token rules: what the edge worker and the store API import from here.
export { createTokenKey, openPayload, signPayload, TokenError, type TokenErrorCode, type TokenKey } from '../tokens/signing.js';

const subtle = () => globalThis.crypto.subtle;
const utf8 = new TextEncoder();

/** A fan's place in one event's queue. Times are seconds since the epoch. */
export interface QueueTokenClaims {
  kind: 'queue';
  eventId: string;
  accountId: string;
  /** hashDevice(deviceId, accountId): the token only works from that device. */
  deviceHash: string;
  /** 0-based join order. PREOPEN: index into the pre-open cohort; FIFO: continues after the cohort. */
  joinIndex: number;
  cohort: 'PREOPEN' | 'FIFO';
  /** A presale tier's queue (its allocation id); absent: the event's own queue. */
  queueId?: string;
  /**
   * How often the place had moved to another of the account's devices when this token was issued (absent: never).
   * A token with fewer moves than the place now has is an earlier device's: its polls answer POSITION_MOVED.
   */
  moves?: number;
  iat: number;
  exp: number;
}

/** Entry to the store for one event (ADMISSION_TOKEN_TTL_SECONDS). Times are seconds since the epoch. */
export interface AdmissionTokenClaims {
  kind: 'admission';
  eventId: string;
  accountId: string;
  deviceHash: string;
  /** The 1-based queue position that was admitted. */
  position: number;
  /** Admitted through a presale tier's queue: the tier's code (holds take that tier's seats); absent: the general sale. */
  tier?: string;
  /**
   * A token for one hold (issued with the hold, living as long as the hold can): it opens the routes of that hold
   * only, never a new hold, so a fan who held at minute 9 pays at minute 12 while shopping time stays 10 minutes.
   */
  holdId?: string;
  iat: number;
  exp: number;
}

/** Either kind of token. */
export type TokenClaims = QueueTokenClaims | AdmissionTokenClaims;

/** How long an admission token lives: 10 minutes ("A fan's request path" in docs/architecture.md). */
export const ADMISSION_TOKEN_TTL_SECONDS = 600;

function toHex(buf: ArrayBuffer | Uint8Array): string {
  let out = '';
  for (const b of buf instanceof Uint8Array ? buf : new Uint8Array(buf)) out += b.toString(16).padStart(2, '0');
  return out;
}

/**
 * The device id rule (X-Device-Id): 8-200 visible ASCII characters, any id a client makes up once and keeps (the
 * fan page's is `web-<uuid>`). Queue and admission tokens are bound to its hash with the account, so the same id
 * must be accepted everywhere a token is issued or checked: the store API's routes, the domain, the edge worker.
 */
export const DEVICE_ID_MIN_LENGTH = 8;
export const DEVICE_ID_MAX_LENGTH = 200;
/** The characters a device id may use: visible ASCII, no spaces. */
export const DEVICE_ID_CHARACTERS = /^[\x21-\x7e]+$/;
/** What a client is told when its device id breaks the rule. */
export const DEVICE_ID_RULE = `X-Device-Id must be ${DEVICE_ID_MIN_LENGTH}-${DEVICE_ID_MAX_LENGTH} visible ASCII characters`;
/** Whether `v` is a well-formed device id. */
export const isDeviceId = (v: unknown): v is string =>
  typeof v === 'string' && v.length >= DEVICE_ID_MIN_LENGTH && v.length <= DEVICE_ID_MAX_LENGTH && DEVICE_ID_CHARACTERS.test(v);

/** SHA-256 hex of a domain-separated, length-prefixed (account, device) pair: what tokens are bound to. */
export async function hashDevice(deviceId: string, accountId: string, sha256Sync?: (data: Uint8Array) => Uint8Array): Promise<string> {
  if (sha256Sync) return hashDeviceSync(deviceId, accountId, sha256Sync);
  return toHex(await subtle().digest('SHA-256', deviceHashInput(deviceId, accountId)));
}

/** hashDevice with a synchronous SHA-256 (a Node origin's), without a promise. */
export function hashDeviceSync(deviceId: string, accountId: string, sha256Sync: (data: Uint8Array) => Uint8Array): string {
  return toHex(sha256Sync(deviceHashInput(deviceId, accountId)));
}

/** The text a device hash is the SHA-256 of (its UTF-8 bytes): domain-separated, each part length-prefixed. */
export const deviceHashText = (deviceId: string, accountId: string) =>
  `onsale/device-hash/v1\n${accountId.length}:${accountId}\n${deviceId.length}:${deviceId}`;

const deviceHashInput = (deviceId: string, accountId: string) => utf8.encode(deviceHashText(deviceId, accountId));

const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 256;
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** The claims in canonical key order, or null when they are not a well-formed queue or admission token. */
function wellFormed(c: unknown): TokenClaims | null {
  if (typeof c !== 'object' || c === null) return null;
  const o = c as Record<string, unknown>;
  if (!isText(o.eventId) || !isText(o.accountId) || typeof o.deviceHash !== 'string' || !/^[0-9a-f]{64}$/.test(o.deviceHash)) return null;
  if (!isCount(o.iat) || !isCount(o.exp)) return null;
  const common = { eventId: o.eventId, accountId: o.accountId, deviceHash: o.deviceHash };
  if (o.kind === 'queue') {
    if (!isCount(o.joinIndex) || (o.cohort !== 'PREOPEN' && o.cohort !== 'FIFO')) return null;
    if (o.queueId !== undefined && !isText(o.queueId)) return null;
    if (o.moves !== undefined && !isCount(o.moves)) return null;
    return {
      kind: 'queue',
      ...common,
      joinIndex: o.joinIndex,
      cohort: o.cohort,
      ...(o.queueId !== undefined ? { queueId: o.queueId } : {}),
      ...(o.moves !== undefined ? { moves: o.moves } : {}),
      iat: o.iat,
      exp: o.exp,
    };
  }
  if (o.kind === 'admission') {
    if (!isCount(o.position) || o.position < 1) return null;
    if (o.tier !== undefined && !isText(o.tier)) return null;
    if (o.holdId !== undefined && !isText(o.holdId)) return null;
    return {
      kind: 'admission',
      ...common,
      position: o.position,
      ...(o.tier !== undefined ? { tier: o.tier } : {}),
      ...(o.holdId !== undefined ? { holdId: o.holdId } : {}),
      iat: o.iat,
      exp: o.exp,
    };
  }
  return null;
}

/**
 * Signs claims as `base64url(JSON claims).base64url(HMAC-SHA256(key, first part))`. Times in the claims are
 * seconds since the epoch; the caller sets iat and exp. Throws TOKEN_MALFORMED for claims that would not verify.
 */
export async function signToken(key: TokenKey, claims: TokenClaims): Promise<string> {
  const canonical = wellFormed(claims);
  if (!canonical) throw new TokenError('TOKEN_MALFORMED', 'refusing to sign malformed claims');
  return signPayload(key, canonical);
}

/** What a route expects of a token. `now` is milliseconds since the epoch (Date.now()), compared with exp x 1000. */
export interface TokenExpectation<K extends TokenClaims['kind']> {
  kind: K;
  eventId: string;
  accountId?: string;
  deviceHash?: string;
  /** Admission tokens: the hold the route is about (a token for one hold opens that hold only); absent: no hold. */
  holdId?: string;
  now?: number;
}

/**
 * Verifies a token and returns its claims, or throws a TokenError. Checks, in order: shape (TOKEN_MALFORMED),
 * signature (TOKEN_FORGED; the payload is parsed only after the signature holds), kind (TOKEN_WRONG_KIND),
 * event (TOKEN_WRONG_EVENT), account (TOKEN_WRONG_ACCOUNT), device (TOKEN_WRONG_DEVICE), expiry (TOKEN_EXPIRED).
 * Binding is checked before expiry so a shared token is reported as shared even when it is also old.
 */
export async function verifyToken(key: TokenKey, token: string, expected: TokenExpectation<'queue'>): Promise<QueueTokenClaims>;
export async function verifyToken(key: TokenKey, token: string, expected: TokenExpectation<'admission'>): Promise<AdmissionTokenClaims>;
export async function verifyToken(key: TokenKey, token: string, expected: TokenExpectation<TokenClaims['kind']>): Promise<TokenClaims> {
  const claims = wellFormed(await openPayload(key, token));
  if (!claims) throw new TokenError('TOKEN_MALFORMED');
  return checkClaims(claims, expected);
}

/**
 * The binding and expiry checks of verifyToken on claims whose signature has already been verified (a verifier
 * may cache verified claims by token and re-run only these): kind, event, account, device, expiry, in that order.
 */
export function checkClaims<C extends TokenClaims>(claims: C, expected: TokenExpectation<TokenClaims['kind']>): C {
  if (claims.kind !== expected.kind) throw new TokenError('TOKEN_WRONG_KIND');
  if (claims.eventId !== expected.eventId) throw new TokenError('TOKEN_WRONG_EVENT');
  if (expected.accountId !== undefined && claims.accountId !== expected.accountId) throw new TokenError('TOKEN_WRONG_ACCOUNT');
  if (expected.deviceHash !== undefined && claims.deviceHash !== expected.deviceHash) throw new TokenError('TOKEN_WRONG_DEVICE');
  if (claims.kind === 'admission' && claims.holdId !== undefined && claims.holdId !== expected.holdId)
    throw new TokenError('TOKEN_WRONG_HOLD');
  if ((expected.now ?? Date.now()) >= claims.exp * 1000) throw new TokenError('TOKEN_EXPIRED');
  return claims;
}

/**
 * The token a new hold comes with: the fan's admission, for that hold only, living until the hold can live no
 * longer (its expiry, one extension of up to `maxExtensionSeconds`, and a payment window), or as long as the
 * admission it came from if that is later.
 */
export function holdAdmissionClaims(
  admission: AdmissionTokenClaims,
  holdId: string,
  holdExpiresAtMs: number,
  maxExtensionSeconds: number,
  nowMs: number,
): AdmissionTokenClaims {
  const iat = Math.floor(nowMs / 1000);
  const exp = Math.max(admission.exp, Math.ceil(holdExpiresAtMs / 1000) + maxExtensionSeconds + HOLD_PAYMENT_WINDOW_SECONDS);
  return { ...admission, holdId, iat, exp };
}

/** How long past its expiry a hold may still be in payment (the checkout's payment window). */
export const HOLD_PAYMENT_WINDOW_SECONDS = 120;

export { MAX_HOLD_EXTENSION_SECONDS } from '../events/limits.js';

/**
 * The admission token's claims for a fan let in without passing the queue (a lottery winner's invitation, a
 * claimed waitlist offer): the waiting room's own token, bound to the account and the device, at `position`. It
 * lives ADMISSION_TOKEN_TTL_SECONDS, or until `notAfterSeconds` if that is sooner. `nowMs`: Date.now().
 */
export function directAdmissionClaims(input: {
  eventId: string;
  accountId: string;
  deviceHash: string;
  position: number;
  nowMs: number;
  notAfterSeconds?: number;
}): AdmissionTokenClaims {
  const iat = Math.floor(input.nowMs / 1000);
  const exp = iat + ADMISSION_TOKEN_TTL_SECONDS;
  return {
    kind: 'admission',
    eventId: input.eventId,
    accountId: input.accountId,
    deviceHash: input.deviceHash,
    position: input.position,
    iat,
    exp: input.notAfterSeconds === undefined ? exp : Math.min(exp, input.notAfterSeconds),
  };
}

/** The admission token's claims for a fan the status rule admitted (10-minute life). `nowMs`: Date.now(). */
export function admissionClaimsFor(queue: QueueTokenClaims, position: number, nowMs: number, tier?: string): AdmissionTokenClaims {
  const iat = Math.floor(nowMs / 1000);
  return {
    kind: 'admission',
    eventId: queue.eventId,
    accountId: queue.accountId,
    deviceHash: queue.deviceHash,
    position,
    ...(tier !== undefined ? { tier } : {}),
    iat,
    exp: iat + ADMISSION_TOKEN_TTL_SECONDS,
  };
}

/** A queue's own state as its watermark publishes it (what the edges and the store API answer fans from). */
export const WATERMARK_STATES = ['OPEN', 'PAUSED', 'SOLD_OUT', 'LAST_CHANCE', 'NOT_OPEN'] as const;

/** The one number per queue that crosses to the edges, with the queue's state. */
export interface WatermarkState {
  /** The queue's id: the event's, or a presale tier's (QueueTokenClaims.queueId). */
  eventId: string;
  /** Every 1-based position <= this is admitted. */
  admittedThrough: number;
  state: (typeof WATERMARK_STATES)[number];
  ratePerMin: number;
  /** When the watermark last changed, ms since the epoch. */
  updatedAt: number;
  /** When the controller last proved it is alive, ms since the epoch. Stale means PAUSED (fail closed). */
  heartbeatAt: number;
  /** The pre-open cohort's size; null until the open is sealed. */
  cohortSize: number | null;
  /** The seed, revealed at the open; null before. */
  seedHex: string | null;
  /**
   * [[epoch ms, admittedThrough], ...], oldest first, at most one point per 10 s over the last 30 minutes: when
   * each position was reached. Absent or empty: positions never expire.
   */
  history?: readonly (readonly [number, number])[];
  /** How long a reached position stays claimable (default POSITION_CLAIM_WINDOW_MS). */
  claimWindowMs?: number;
}

/** A position reached this long ago and not used expires; the fan joins again at the back. */
export const POSITION_CLAIM_WINDOW_MS = 10 * 60 * 1000;

/**
 * When the watermark first reached `position` (ms since the epoch), from the published history: the first point at
 * or past it (a position reached before the oldest point counts from that point). Null when there is no history.
 */
export function positionReachedAt(position: number, w: WatermarkState): number | null {
  const h = w.history;
  if (!h || h.length === 0) return null;
  for (const [at, through] of h) if (through >= position) return at;
  return null;
}

/**
 * A fan's 1-based queue position. PREOPEN: null until the cohort is sealed and the seed revealed, then
 * permutePosition(seed, cohortSize, joinIndex) + 1 (null for a join index outside the sealed cohort, which the
 * sealing must never produce). FIFO: joinIndex + 1, join indexes continuing after the cohort.
 */
export async function queuePosition(claims: QueueTokenClaims, w: WatermarkState): Promise<number | null> {
  return queuePositionNow(claims, w);
}

/** queuePosition without a promise when it needs no new HMAC round (FIFO, an unsealed cohort, rounds computed). */
export function queuePositionNow(claims: QueueTokenClaims, w: WatermarkState): number | null | Promise<number | null> {
  if (claims.cohort === 'FIFO') return claims.joinIndex + 1;
  if (w.cohortSize === null || w.seedHex === null || claims.joinIndex >= w.cohortSize) return null;
  const slot = permutePositionNow(w.seedHex, w.cohortSize, claims.joinIndex);
  return typeof slot === 'number' ? slot + 1 : slot.then((x) => x + 1);
}

/** The queue states fans read, in the order a sale goes through them. */
export const QUEUE_STATES = ['WAITING', 'PAUSED', 'ADMITTED', 'LAST_CHANCE', 'SOLD_OUT'] as const;
/** A fan-facing queue state. */
export type QueueStatusState = (typeof QUEUE_STATES)[number];

/** The answer to one status poll. `admit` true means: issue an admission token now. */
export interface QueueStatus {
  state: QueueStatusState;
  /** The position was reached longer ago than the claim window and was not used: the fan must join again. */
  expired?: boolean;
  position: number | null;
  admittedThrough: number;
  estWaitSeconds: number | null;
  /** Seconds until the next poll (the Retry-After header). */
  retryAfterSeconds: number;
  admit: boolean;
}

/** Options for computeStatus. `jitter` returns [0, 1) (default Math.random). */
export interface StatusOptions {
  heartbeatStaleMs?: number;
  jitter?: () => number;
}

/** How long without a controller heartbeat before the queue counts as paused. */
export const DEFAULT_HEARTBEAT_STALE_MS = 5000;
/** Poll interval while waiting: 15-30 s with jitter (the reference sale in docs/architecture.md). */
export const POLL_SECONDS = { min: 15, max: 30, nearFront: 5, paused: 30 } as const;

/**
 * The status-poll rule, failing closed. In order: SOLD_OUT when the event is sold out (never admits, so it is
 * safe to show even when the heartbeat is stale, and it must reach every poller); PAUSED when an operator paused;
 * before the open (NOT_OPEN) everyone is WAITING (nobody is admitted then anyway); PAUSED when the controller
 * heartbeat is older than heartbeatStaleMs: nobody is admitted; otherwise ADMITTED when position <=
 * admittedThrough; else WAITING (or LAST_CHANCE while held seats may still return). Polls come back every 15-30 s with
 * jitter, sooner when the turn is estimated sooner (at the estimate, at least 5 s: retryAfterWaiting), every 5 s in
 * LAST_CHANCE, after 30 s while paused. Throws TOKEN_WRONG_EVENT when the token and watermark disagree.
 * `now` is milliseconds since the epoch.
 */
export async function computeStatus(
  claims: QueueTokenClaims,
  w: WatermarkState,
  now: number,
  opts: StatusOptions = {},
): Promise<QueueStatus> {
  return computeStatusNow(claims, w, now, opts);
}

/**
 * computeStatus without a promise when the position needs no new HMAC round (most polls). Throws TOKEN_WRONG_EVENT
 * rather than rejecting. The answers are object literals (no spread of a common part): on the hottest path a spread
 * followed by more properties costs V8 a slow object clone, microseconds a poll.
 */
export function computeStatusNow(
  claims: QueueTokenClaims,
  w: WatermarkState,
  now: number,
  opts: StatusOptions = {},
): QueueStatus | Promise<QueueStatus> {
  if ((claims.queueId ?? claims.eventId) !== w.eventId) throw new TokenError('TOKEN_WRONG_EVENT');
  const staleMs = opts.heartbeatStaleMs ?? DEFAULT_HEARTBEAT_STALE_MS;
  const jitter = Math.min(1, Math.max(0, (opts.jitter ?? Math.random)()));
  const waitingRetry = Math.round(POLL_SECONDS.min + jitter * (POLL_SECONDS.max - POLL_SECONDS.min));
  const position = queuePositionNow(claims, w);
  if (position !== null && typeof position === 'object') return position.then((p) => statusRule(claims, w, now, staleMs, waitingRetry, p));
  return statusRule(claims, w, now, staleMs, waitingRetry, position);
}

const answer = (
  position: number | null,
  admittedThrough: number,
  state: QueueStatusState,
  estWaitSeconds: number | null,
  retryAfterSeconds: number,
): QueueStatus => ({ position, admittedThrough, admit: false, state, estWaitSeconds, retryAfterSeconds });

function statusRule(
  claims: QueueTokenClaims,
  w: WatermarkState,
  now: number,
  staleMs: number,
  waitingRetry: number,
  position: number | null,
): QueueStatus {
  const admittedThrough = w.admittedThrough;
  if (w.state === 'SOLD_OUT') return answer(position, admittedThrough, 'SOLD_OUT', null, POLL_SECONDS.paused);
  if (w.state === 'PAUSED') return answer(position, admittedThrough, 'PAUSED', null, POLL_SECONDS.paused);
  // Before the open nobody is admitted whatever the controller does, so a missing heartbeat changes nothing there.
  if (w.state === 'NOT_OPEN') return answer(position, admittedThrough, 'WAITING', null, waitingRetry);
  if (now - w.heartbeatAt > staleMs) return answer(position, admittedThrough, 'PAUSED', null, POLL_SECONDS.paused);

  if (position !== null && position <= admittedThrough) {
    // The clock starts when the position was reached, or when the fan took it (the token's iat), whichever is later.
    const reached = positionReachedAt(position, w);
    const reachedAt = reached === null ? null : Math.max(reached, claims.iat * 1000);
    if (reachedAt !== null && now - reachedAt > (w.claimWindowMs ?? POSITION_CLAIM_WINDOW_MS))
      return {
        position,
        admittedThrough,
        admit: false,
        state: 'WAITING',
        expired: true,
        estWaitSeconds: null,
        retryAfterSeconds: POLL_SECONDS.nearFront,
      };
    return { position, admittedThrough, admit: true, state: 'ADMITTED', estWaitSeconds: 0, retryAfterSeconds: POLL_SECONDS.nearFront };
  }

  const state = w.state === 'LAST_CHANCE' ? 'LAST_CHANCE' : 'WAITING';
  // Open but the cohort not yet sealed (the first seconds after the open): the position is moments away.
  if (position === null) return answer(position, admittedThrough, state, null, POLL_SECONDS.nearFront);
  const ahead = position - admittedThrough;
  const rate = w.ratePerMin > 0 && Number.isFinite(w.ratePerMin) ? w.ratePerMin : 0;
  const est = rate > 0 ? Math.ceil((ahead / rate) * 60) : null;
  // The turn, counted from the watermark's last move (the positions accrue in between): what the poll is aimed at.
  const turnIn = rate > 0 ? Math.max(0, Math.ceil((ahead / rate) * 60 - Math.max(0, now - w.updatedAt) / 1000)) : null;
  return answer(position, admittedThrough, state, est, retryAfterWaiting(state, turnIn, waitingRetry));
}

/**
 * When a waiting fan polls again, seconds. Never more than POLL_SECONDS.max: a position reached stays the fan's for
 * the claim window (10 minutes) and the admission controller counts it as a fan on the way in for its arrival window
 * (POLL_SECONDS.max plus 10 s of slack), so a fan who polls as told always finds its turn kept. Aimed at the turn: when the
 * estimated wait is shorter than the usual 15-30 s the fan comes back at that moment (at least POLL_SECONDS.nearFront
 * later), so a client polling sooner than told gains at most the near-front interval and meets the per-account limit.
 * In LAST_CHANCE the end is near (the seats held may come back or sell): every fan polls as if near the front, and
 * hears SOLD_OUT within that interval.
 */
export function retryAfterWaiting(state: 'WAITING' | 'LAST_CHANCE', estWaitSeconds: number | null, waitingRetry: number): number {
  if (state === 'LAST_CHANCE') return POLL_SECONDS.nearFront;
  const usual = Math.min(POLL_SECONDS.max, Math.max(POLL_SECONDS.min, waitingRetry));
  if (estWaitSeconds === null) return usual;
  return Math.max(POLL_SECONDS.nearFront, Math.min(usual, estWaitSeconds));
}
