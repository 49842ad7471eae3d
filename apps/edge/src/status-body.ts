// What a status answer is built from, kept per message and per Accept-Language value rather than worked out per poll:
// most polls carry the same few messages (one per state, event and language) and the same few Accept-Language values.
import type { EdgeQueueState, QueueFacts, StatusAnswer } from '@onsale/shared/queue/edge-state';
import { negotiateLanguage, type FanLanguage } from '@onsale/shared/queue/copy';

/** A number as JSON.stringify writes it: a finite number (joined as its digits), else null. */
const jsonNumber = (n: number | null): number | string => (n !== null && Number.isFinite(n) ? n : 'null');

/** Bounded memo tables: past the bound a table starts again (the values are recomputed, never wrong). */
const MEMO_BOUND = 1000;
const prefixes = new Map<string, Map<string, string>>();
let prefixCount = 0;
const languages = new Map<string, FanLanguage>();

/**
 * The body's start up to the position's value (`{"state":…,"message":…,"position":`), as JSON, built once per state
 * and message rather than per poll.
 */
function bodyPrefix(state: string, message: string): string {
  let byMessage = prefixes.get(state);
  if (byMessage === undefined) {
    if (prefixes.size >= MEMO_BOUND) prefixes.clear();
    prefixes.set(state, (byMessage = new Map<string, string>()));
  }
  let p = byMessage.get(message);
  if (p === undefined) {
    if (prefixCount >= MEMO_BOUND) {
      prefixes.clear();
      prefixes.set(state, byMessage);
      byMessage.clear();
      prefixCount = 0;
    }
    p = `{"state":${JSON.stringify(state)},"message":${JSON.stringify(message)},"position":`;
    byMessage.set(message, p);
    prefixCount++;
  }
  return p;
}

/**
 * The parts a body is joined from, reused by every poll (the worker runs one request's code at a time, and
 * statusBody neither awaits nor calls out): joined, they make the body in one string of its length, where
 * concatenating them would build a string for each step and then flatten the last (about 550 bytes a body against
 * 300, measured in Node).
 */
const parts: (string | number)[] = ['', 0, ',"admittedThrough":', 0, ',"estWaitSeconds":', 0, '}'];

/**
 * The status answer's body: the same text as JSON.stringify of `{ state, message, position, admittedThrough,
 * estWaitSeconds, admissionToken, waitlist }` (fields in that order, the undefined ones left out), built from a
 * kept start (the state's and message's JSON) and the numbers, not serialised per poll (`status-body.test.ts` holds
 * the two equal).
 */
export function statusBody(answer: StatusAnswer, admissionToken: string | undefined): string {
  let tail = '}';
  if (admissionToken !== undefined || answer.waitlist !== undefined) {
    tail = '';
    if (admissionToken !== undefined) tail += `,"admissionToken":${JSON.stringify(admissionToken)}`;
    if (answer.waitlist !== undefined) tail += `,"waitlist":${JSON.stringify(answer.waitlist)}`;
    tail += '}';
  }
  parts[0] = bodyPrefix(answer.state, answer.message);
  parts[1] = jsonNumber(answer.position);
  parts[3] = jsonNumber(answer.admittedThrough);
  parts[5] = jsonNumber(answer.estWaitSeconds);
  parts[6] = tail;
  return parts.join('');
}

/** The response header that says who answered (`hit`: the edge alone). */
export const EDGE_HEADER = 'x-onsale-edge';

/** A status answer's headers, as a record (what each answer is built with when its set is not kept). */
function statusHeaderRecord(retryAfterSeconds: number, language: FanLanguage, ageSeconds: number): Record<string, string> {
  return {
    'content-type': 'application/json; charset=utf-8',
    [EDGE_HEADER]: 'hit',
    'retry-after': String(retryAfterSeconds),
    'cache-control': 'no-store',
    'content-language': language,
    vary: 'Accept-Language',
    'x-onsale-watermark-age': String(ageSeconds),
  };
}

/** Kept response inits by language, then by `retryAfterSeconds * 4096 + ageSeconds`; cleared past MEMO_BOUND. */
const statusInits = new Map<string, Map<number, ResponseInit>>();
let statusInitCount = 0;

/**
 * The init of a status answer (200 and its seven headers), kept per (Retry-After, language, watermark age): a poll's
 * headers are one of a few such sets, and a `Headers` object built once is copied by the runtime in C++ rather than
 * converted from a JS object's properties on every poll. workerd's `Response` copies the headers it is given, so
 * the kept object is never the answer's own and nothing can change it.
 */
export function statusInit(retryAfterSeconds: number, language: FanLanguage, ageSeconds: number): ResponseInit {
  if (!(
    Number.isInteger(retryAfterSeconds) &&
    retryAfterSeconds >= 0 &&
    retryAfterSeconds < 100_000 &&
    ageSeconds >= 0 &&
    ageSeconds < 4096
  ))
    return { status: 200, headers: statusHeaderRecord(retryAfterSeconds, language, ageSeconds) };
  let byKey = statusInits.get(language);
  if (byKey === undefined) {
    if (statusInits.size >= MEMO_BOUND) statusInits.clear();
    statusInits.set(language, (byKey = new Map<number, ResponseInit>()));
  }
  const key = retryAfterSeconds * 4096 + ageSeconds;
  let init = byKey.get(key);
  if (init === undefined) {
    if (statusInitCount >= MEMO_BOUND) {
      statusInits.clear();
      statusInits.set(language, byKey);
      byKey.clear();
      statusInitCount = 0;
    }
    init = { status: 200, headers: new Headers(statusHeaderRecord(retryAfterSeconds, language, ageSeconds)) };
    byKey.set(key, init);
    statusInitCount++;
  }
  return init;
}

/**
 * negotiateLanguage of an Accept-Language value, worked out once per distinct value of up to 256 characters (a
 * browser sends the same one on every poll).
 */
export function fanLanguage(accept: string | null): FanLanguage {
  if (accept === null || accept.length > 256) return negotiateLanguage(accept);
  let language = languages.get(accept);
  if (language === undefined) {
    language = negotiateLanguage(accept);
    if (languages.size >= MEMO_BOUND) languages.clear();
    languages.set(accept, language);
  }
  return language;
}

/** The facts last built by `publishedFacts`, and what they were built from. */
let lastFacts: { q: EdgeQueueState; publishedAt: number; now: number; facts: QueueFacts } | undefined;

/**
 * A queue's facts as the origin published them, its controller's heartbeat moved onto this isolate's clock as of
 * `now` (judged as of when the origin published the state, on the origin's own clock: the state's age is the edge's
 * own rule, EDGE_STALE_SECONDS, and no clock skew between the two counts). The same object is handed out again for
 * the same queue state, publication and `now` (workerd's clock moves between requests, not within one: at thousands
 * of polls a second most share the millisecond of the poll before), rather than built, two objects of seventeen
 * fields, for every poll: the status rule only reads them (nothing downstream writes to them), and a poll's
 * allocations are what set how often the isolate's young generation is collected.
 */
export function publishedFacts(q: EdgeQueueState, publishedAt: number, now: number): QueueFacts {
  const last = lastFacts;
  if (last !== undefined && last.q === q && last.publishedAt === publishedAt && last.now === now) return last.facts;
  const w = q.watermark;
  // (Built field by field rather than spread with an override, as the shared status rule builds its answers.)
  const facts: QueueFacts = {
    watermark: {
      eventId: w.eventId,
      admittedThrough: w.admittedThrough,
      state: w.state,
      ratePerMin: w.ratePerMin,
      updatedAt: w.updatedAt,
      heartbeatAt: now - Math.max(0, publishedAt - w.heartbeatAt),
      cohortSize: w.cohortSize,
      seedHex: w.seedHex,
      history: w.history,
      claimWindowMs: w.claimWindowMs,
    },
    copy: q.copy,
    copyByLanguage: q.copyByLanguage,
    listingId: q.listingId,
    tier: q.tier,
    tierName: q.tierName,
    closesAt: q.closesAt,
  };
  lastFacts = { q, publishedAt, now, facts };
  return facts;
}
