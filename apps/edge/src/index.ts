// The edge worker (Cloudflare Workers, module syntax): answers status polls and watermark reads itself from the
// signed queue token and a cached watermark, and passes every other request to the store API unchanged. Its only
// export is the handler: workerd takes every named export of a module worker for an entrypoint.
import {
  admissionClaimsFor,
  checkClaims,
  createTokenKey,
  DEVICE_ID_RULE,
  hashDevice,
  isDeviceId,
  POLL_SECONDS,
  signToken,
  TokenError,
  verifyToken,
  type QueueTokenClaims,
  type TokenKey,
} from '@onsale/shared/queue/edge';
import {
  answerStatusNow,
  placeMovedAway,
  POSITION_MOVED_MESSAGE,
  publicWatermark,
  type EdgeQueueState,
  type StatusAnswer,
} from '@onsale/shared/queue/edge-state';
import { bearerToken, WebAccountTokenVerifier } from '@onsale/shared/auth/edge';
import type { FanLanguage } from '@onsale/shared/queue/copy';
import { DomainError, HTTP_STATUS_OF } from '@onsale/shared';
import { loadEdgeConfig, type EdgeConfig, type EdgeEnv } from './config.js';
import { EventStateCache, type KnownState, type WaitUntil } from './state-cache.js';
import { ClaimsReporter } from './claims.js';
import { OriginBreaker } from './breaker.js';
import { MemoryCache, type Kept } from './memory-cache.js';
import { EdgeJoinBatcher, originError, type JoinTicket } from './join-batch.js';
import { EDGE_JOIN_PATH, EDGE_JOIN_PATH_MAX, type EdgeJoin, type EdgeJoinAnswer } from '@onsale/shared/queue/edge-joins';
import { EDGE_HEADER, fanLanguage, publishedFacts, statusBody, statusInit } from './status-body.js';

export type { EdgeEnv } from './config.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATUS_PATH = /^\/events\/([^/]+)\/queue\/status$/;
const WATERMARK_PATH = /^\/events\/([^/]+)\/watermark$/;

/** Everything one isolate keeps: settings, keys, caches. Built once per isolate (per bindings object). */
interface Edge {
  config: EdgeConfig;
  states: EventStateCache;
  key: Promise<TokenKey> | null;
  /** The key once imported. */
  keyNow?: TokenKey;
  accounts: WebAccountTokenVerifier | null;
  claims: ClaimsReporter | null;
  /** Verified queue tokens (a fan polls with the same one): signature once, binding and expiry every time. */
  tokens: Map<string, QueueTokenClaims>;
  devices: Map<string, string>;
  /** A fan's poll as it was answered before, by queue token: the same inputs need none of their checks again. */
  fans: Map<string, KnownFan>;
  /** Where cacheable origin answers are kept: the Cache API, the isolate's memory (workerd serve), or nowhere. */
  cache: EdgeCache | undefined;
  breaker: OriginBreaker;
  /** Joins sent to the origin many to a request (null: each join proxied alone; EDGE_JOIN_BATCH=off or no queue secret). */
  joins: EdgeJoinBatcher | null;
  /** The origin requests under way that fill the isolate's cache, by URL: concurrent misses wait on the one. */
  fills: Map<string, PendingFill>;
}

/**
 * What a status poll that passed every check carried, kept by its queue token: a later poll with the same URL,
 * `Authorization` and `X-Device-Id` (the same strings) passed the same input checks, its account token and queue token
 * verified and bound as before; what time can change is checked again on every poll (the account token's expiry,
 * through the verifier's own cache, and the queue token's binding and expiry).
 */
interface KnownFan {
  /** The request URL as it came (the same string: the same event id segment, read without parsing it again). */
  url: string;
  eventId: string;
  authorization: string;
  /** The account token as the verifier keeps it. */
  bearer: string;
  deviceId: string;
  claims: QueueTokenClaims;
  /**
   * What the queue token was checked against (checkClaims), kept so that a poll checks it again without building it:
   * the same account (the verifier's subject of the same account token), event and device hash; `now` set per poll.
   */
  expected: { kind: 'queue'; eventId: string; accountId: string; deviceHash: string; now: number };
}

/** The part of the Cache API the edge uses. */
interface EdgeCache {
  match(req: Request): Promise<Response | undefined>;
  put(req: Request, res: Response): Promise<void>;
}

let current: { env: EdgeEnv; edge: Edge | Error } | undefined;
let warned = false;

function edgeOf(env: EdgeEnv): Edge | Error {
  if (current?.env === env) return current.edge;
  let edge: Edge | Error;
  try {
    const config = loadEdgeConfig(env);
    const key = config.queueTokenSecret ? createTokenKey(config.queueTokenSecret) : null;
    const breaker = new OriginBreaker({
      failures: config.breakerFailures,
      openMs: config.breakerOpenMs,
      trialMs: Math.max(config.fanTimeoutMs, config.proxyTimeoutMs) + DEADLINE_MARGIN_MS,
    });
    edge = {
      config,
      key,
      states: new EventStateCache({
        originUrl: config.originUrl,
        ttlMs: config.watermarkTtlMs,
        originTimeoutMs: config.originTimeoutMs,
        // Between isolates through the Cache API; workerd serve runs one isolate, whose own map is the cache.
        cache: !config.memoryCache && typeof caches !== 'undefined' ? caches.default : undefined,
      }),
      accounts: config.authSecret ? new WebAccountTokenVerifier(config.authSecret) : null,
      claims: key ? new ClaimsReporter({ originUrl: config.originUrl, key, timeoutMs: config.originTimeoutMs }) : null,
      tokens: new Map(),
      devices: new Map(),
      fans: new Map(),
      cache: config.memoryCache ? new MemoryCache() : typeof caches !== 'undefined' ? caches.default : undefined,
      breaker,
      fills: new Map(),
      joins:
        key && config.joinBatchMax > 0
          ? new EdgeJoinBatcher({
              originUrl: config.originUrl,
              key: () => key,
              timeoutMs: config.fanTimeoutMs,
              breaker,
              maxBatch: config.joinBatchMax,
              aloneBelow: config.joinAloneBelow,
              maxWaitMs: config.joinBatchWaitMs,
              log: (m) => console.error(m),
            })
          : null,
    };
    if (config.misconfigured && !warned) {
      warned = true;
      console.error(`onsale edge: ${config.misconfigured}`);
    }
  } catch (e) {
    edge = e instanceof Error ? e : new Error(String(e));
    console.error(`onsale edge: ${edge.message}`);
  }
  current = { env, edge };
  return edge;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', [EDGE_HEADER]: 'hit', ...headers },
  });
}

/** An error as the store API words it: `{ error, message, field?, ... }` with the status of its kind. */
function errorResponse(e: unknown): Response {
  if (e instanceof TokenError) return json(HTTP_STATUS_OF[e.kind], { error: e.code, message: e.message, field: 'token' });
  if (e instanceof DomainError) {
    const status = HTTP_STATUS_OF[e.kind];
    const retry = e.details.retryAfterSeconds;
    return json(
      status,
      { error: e.code, message: e.message, ...e.details },
      retry !== undefined ? { 'retry-after': String(Number(retry)) } : {},
    );
  }
  console.error('onsale edge: unexpected error', e);
  return edgeFault();
}

/**
 * What a fan gets when the edge itself fails (a bug, a runtime limit, a promise that never settles): a JSON 503 with
 * Retry-After, never workerd's own 500 (a text/plain body on workerd serve, an empty one on Cloudflare), which a fan's page
 * cannot read and the house rule forbids. Built from constants so that building it cannot fail in turn.
 */
function edgeFault(): Response {
  return new Response(EDGE_FAULT_BODY, {
    status: 503,
    headers: { 'content-type': 'application/json; charset=utf-8', [EDGE_HEADER]: 'hit', 'retry-after': '5', 'cache-control': 'no-store' },
  });
}

const EDGE_FAULT_BODY = JSON.stringify({
  error: 'EDGE_FAULT',
  message: 'the waiting room could not answer just now; you keep your place: try again shortly',
  retryAfterSeconds: 5,
});

/**
 * The origin could not give a whole answer (refused, reset, timed out, or not the store API speaking), or the circuit
 * is open and it was not asked.
 */
function originUnavailable(retryAfterSeconds = 5, how: 'hit' | 'miss' = 'miss'): Response {
  return json(
    503,
    { error: 'ORIGIN_UNAVAILABLE', message: 'the store cannot be reached just now; try again shortly', retryAfterSeconds },
    { 'retry-after': String(retryAfterSeconds), 'cache-control': 'no-store', [EDGE_HEADER]: how },
  );
}

/**
 * The fans' routes (the store API's fan API and the fans' page): answered 503 within EDGE_FAN_TIMEOUT_MS when the
 * origin does not answer, so a fan's page retries after Retry-After instead of waiting on a hung origin. Any other path
 * (the API docs, /metrics, /healthz) waits EDGE_PROXY_TIMEOUT_MS.
 */
const FAN_ROUTE = /^\/(?:events|holds|listings|me|waitlist|e|fan|auth)(?:\/|$)/;

function validationFailed(field: string, message: string): Response {
  return json(400, {
    error: 'VALIDATION_FAILED',
    message: `${field}: ${message}`,
    field,
    issues: [{ field: field.replace(/^(params|headers|querystring)\./, ''), message }],
  });
}

const unavailable = () =>
  json(
    503,
    {
      error: 'WAITING_ROOM_UNAVAILABLE',
      message: 'the waiting room cannot be reached just now; you keep your place: try again shortly',
      retryAfterSeconds: 5,
    },
    { 'retry-after': '5' },
  );

const remember = <V>(m: Map<string, V>, k: string, v: V) => {
  if (m.size >= 200_000) m.delete(m.keys().next().value!);
  m.set(k, v);
};

// The caches answer without a promise when they hold the answer (most polls); the Web Crypto work is asynchronous.
function deviceHash(edge: Edge, deviceId: string, accountId: string): string | Promise<string> {
  const k = `${accountId}\n${deviceId}`;
  const h = edge.devices.get(k);
  if (h !== undefined) return h;
  return hashDevice(deviceId, accountId).then((hashed) => {
    remember(edge.devices, k, hashed);
    return hashed;
  });
}

function verifyQueueToken(
  edge: Edge,
  key: TokenKey,
  token: string,
  expected: { kind: 'queue'; eventId: string; accountId: string; deviceHash: string; now: number },
): QueueTokenClaims | Promise<QueueTokenClaims> {
  const hit = edge.tokens.get(token);
  if (hit) return checkClaims(hit, expected);
  return verifyToken(key, token, expected).then((claims) => {
    remember(edge.tokens, token, claims);
    return claims;
  });
}

/** The origin unreachable for longer than EDGE_STALE_SECONDS: PAUSED, the fan's place kept, nobody admitted. */
function failClosed(answer: StatusAnswer, q: EdgeQueueState, language?: FanLanguage): StatusAnswer {
  const { waitlist: _w, expired: _e, ...rest } = answer;
  return {
    ...rest,
    state: 'PAUSED',
    message: ((language && q.copyByLanguage?.[language]) || q.copy).PAUSED,
    estWaitSeconds: null,
    retryAfterSeconds: POLL_SECONDS.paused,
    admit: false,
  };
}

/** A path segment decoded, or null when its percent-encoding is malformed (decodeURIComponent throws URIError). */
function decodeSegment(raw: string): string | null {
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}

/** A status poll's input, checked in the store API's order after the account; or the refusal it gets. */
function statusInput(req: Request, eventIdRaw: string): { eventId: string; deviceId: string; queueToken: string } | Response {
  const eventId = decodeSegment(eventIdRaw);
  if (eventId === null) return validationFailed('params.id', 'malformed percent-encoding');
  if (eventId.length > 64) return validationFailed('params.id', 'Too big: expected string to have <=64 characters');
  const deviceId = req.headers.get('x-device-id');
  if (deviceId === null) return validationFailed('headers.x-device-id', 'Invalid input: expected string, received undefined');
  if (!isDeviceId(deviceId)) return validationFailed('headers.x-device-id', DEVICE_ID_RULE);
  const queueToken = req.headers.get('x-queue-token');
  if (queueToken === null) return validationFailed('headers.x-queue-token', 'Invalid input: expected string, received undefined');
  if (queueToken.length === 0) return validationFailed('headers.x-queue-token', 'X-Queue-Token is required');
  if (queueToken.length > 4096) return validationFailed('headers.x-queue-token', 'Too big: expected string to have <=4096 characters');
  return { eventId, deviceId, queueToken };
}

async function queueStatus(req: Request, eventIdRaw: string, edge: Edge, waitUntil: WaitUntil): Promise<Response> {
  const key = (edge.keyNow ??= await edge.key!);
  // The store API's order: the account first, then the route's input, then the queue token.
  const bearer = bearerToken(req.headers.get('authorization'));
  const accountId = edge.accounts!.known(bearer) ?? (await edge.accounts!.verify(bearer));
  const input = statusInput(req, eventIdRaw);
  if (input instanceof Response) return input;
  const { eventId, deviceId, queueToken } = input;

  const now = Date.now();
  const device = deviceHash(edge, deviceId, accountId);
  const verified = verifyQueueToken(edge, key, queueToken, {
    kind: 'queue',
    eventId,
    accountId,
    deviceHash: typeof device === 'string' ? device : await device,
    now,
  });
  const claims = verified instanceof Promise ? await verified : verified;
  const known = edge.states.fresh(eventId) ?? (await edge.states.get(eventId, waitUntil));
  if (!known) return unavailable();
  const facts = statusFacts(req, edge, claims, known, eventId, now);
  const { answer, q, language } = facts instanceof Promise ? await facts : facts;
  let admissionToken: string | undefined;
  if (answer.admit && answer.position !== null) {
    admissionToken = await signToken(key, admissionClaimsFor(claims, answer.position, now, q.tier ?? undefined));
    edge.claims?.add(q.queueId, accountId, waitUntil);
  }
  return statusResponse(answer, language, known, now, admissionToken);
}

/**
 * The same answer as queueStatus when the isolate already holds everything it needs (the key, the fan's account
 * token, device hash and queue token verified before, the event's state within its TTL, a fan not admitted now):
 * built without a promise, a timer or a URL object. Undefined when anything must be awaited: queueStatus answers
 * then, from the start (nothing before that point has an effect); NOT_A_POLL when the URL is not a status poll's that
 * can be read without parsing it (plainStatusId). A refusal is answered here as queueStatus answers it (the same checks
 * in the same order; a thrown refusal is the caller's errorResponse). A poll with the same URL, `Authorization`,
 * `X-Device-Id` and `X-Queue-Token` strings as one answered here before (`edge.fans`) skips the checks those strings
 * passed then (the URL's reading, the input's validation, the look-ups and the claims' bindings), and has what time
 * changes checked again: the account token's expiry and the queue token's expiry (checkClaims, with what it checked
 * then).
 */
function queueStatusNow(req: Request, rawUrl: string, edge: Edge, ctx: ExecutionContext): Response | undefined | typeof NOT_A_POLL {
  // (A poll's URL ends with the path when it has no query: the kept fan is looked for only then. The headers object
  // is read once: each read of req.headers is a call into the runtime.)
  const headers = req.headers;
  const queueTokenSent = rawUrl.endsWith(STATUS_SUFFIX) ? headers.get('x-queue-token') : null;
  const fan = queueTokenSent === null ? undefined : edge.fans.get(queueTokenSent);
  if (
    fan !== undefined &&
    fan.url === rawUrl &&
    fan.authorization === headers.get('authorization') &&
    fan.deviceId === headers.get('x-device-id') &&
    edge.accounts !== null
  ) {
    // The same inputs as a poll answered before: only what time changes is checked (in the same order).
    const now = Date.now();
    if (edge.accounts.known(fan.bearer, now) === undefined) return undefined;
    const expected = fan.expected;
    expected.now = now;
    return statusNow(headers, edge, ctx, checkClaims(fan.claims, expected), fan.eventId, now);
  }
  const eventIdRaw = plainStatusId(rawUrl);
  if (eventIdRaw === null) return NOT_A_POLL;
  const key = edge.keyNow;
  if (key === undefined || !edge.accounts) return undefined;
  const authorization = headers.get('authorization');
  const bearer = bearerToken(authorization);
  const accountId = edge.accounts.known(bearer);
  if (accountId === undefined) return undefined;
  const input = statusInput(req, eventIdRaw);
  if (input instanceof Response) return input;
  const { eventId, deviceId, queueToken } = input;
  const deviceHash = edge.devices.get(`${accountId}\n${deviceId}`);
  if (deviceHash === undefined) return undefined;
  const hit = edge.tokens.get(queueToken);
  if (hit === undefined) return undefined;
  const now = Date.now();
  const expected = { kind: 'queue' as const, eventId, accountId, deviceHash, now };
  const claims = checkClaims(hit, expected);
  remember(edge.fans, queueToken, { url: rawUrl, eventId, authorization: authorization!, bearer, deviceId, claims, expected });
  return statusNow(headers, edge, ctx, claims, eventId, now);
}

/** What queueStatusNow answers when the request is not a status poll it can read. */
const NOT_A_POLL = null;

/** The end of a status poll's URL without a query. */
const STATUS_SUFFIX = '/queue/status';

/**
 * The rest of queueStatusNow, the claims checked: the answer from the event's state within its TTL (or just past it
 * while the refresh runs, started here when due, in the background); undefined when it must be awaited, or when the
 * fan is admitted now (an admission token is signed with Web Crypto, a promise: queueStatus issues it). The same rules
 * in the same order as statusFacts and finishFacts, without the objects that carry their results between them.
 */
function statusNow(
  headers: Headers,
  edge: Edge,
  ctx: ExecutionContext,
  claims: QueueTokenClaims,
  eventId: string,
  now: number,
): Response | undefined {
  const known = edge.states.fresh(eventId, ctx, now);
  if (!known) return undefined;
  const q = statusQueue(known, claims, eventId);
  const language = fanLanguage(headers.get('accept-language'));
  const answered = answerStatusNow(claims, publishedFacts(q, known.state!.generatedAt, now), now, NO_OPTIONS, language);
  if (answered instanceof Promise) {
    // Ignored on purpose: queueStatus computes the same answer again and answers its failure.
    answered.catch(() => {});
    return undefined;
  }
  const answer = finishAnswer(answered, q, language, edge, known, now);
  if (answer.admit && answer.position !== null) return undefined;
  return statusResponse(answer, language, known, now, undefined);
}

/** The fan's queue in the event's state, or the refusal: no such queue (404), or the place moved away (409). */
function statusQueue(known: KnownState, claims: QueueTokenClaims, eventId: string): EdgeQueueState {
  const q = queueOf(known, claims.queueId ?? claims.eventId);
  if (!q) throw new DomainError('not_found', 'EVENT_NOT_FOUND', `no event ${eventId}`, { field: 'id' });
  // The place moved to another of the account's devices: this device's token no longer holds it (the origin's rule).
  if (placeMovedAway(claims, q)) throw new DomainError('conflict', 'POSITION_MOVED', POSITION_MOVED_MESSAGE, { field: 'x-queue-token' });
  return q;
}

/** The fan's status from the event's known state: the origin's rule, the edge's staleness rule, the fan's words. */
function statusFacts(
  req: Request,
  edge: Edge,
  claims: QueueTokenClaims,
  known: KnownState,
  eventId: string,
  now: number,
):
  | { answer: StatusAnswer; q: EdgeQueueState; language: FanLanguage }
  | Promise<{ answer: StatusAnswer; q: EdgeQueueState; language: FanLanguage }> {
  const q = statusQueue(known, claims, eventId);
  // The facts as the origin published them, the controller's heartbeat on this isolate's clock (status-body.ts).
  const asPublished = publishedFacts(q, known.state!.generatedAt, now);
  // The words in the fan's language (Accept-Language), as the origin answers them.
  const language = fanLanguage(req.headers.get('accept-language'));
  const answered = answerStatusNow(claims, asPublished, now, NO_OPTIONS, language);
  return answered instanceof Promise
    ? answered.then((a) => finishFacts(a, q, language, edge, known, now))
    : finishFacts(answered, q, language, edge, known, now);
}

const NO_OPTIONS = Object.freeze({});

/** The status answer after the edge's own rules: PAUSED past EDGE_STALE_SECONDS, a place that expired refused. */
function finishAnswer(
  answered: StatusAnswer,
  q: EdgeQueueState,
  language: FanLanguage,
  edge: Edge,
  known: KnownState,
  now: number,
): StatusAnswer {
  const answer = now - known.fetchedAt > edge.config.staleMs ? failClosed(answered, q, language) : answered;
  if (answer.expired)
    throw new DomainError(
      'gone',
      'POSITION_EXPIRED',
      'your turn came and passed unused; join the queue again for a new place at the back',
      {
        field: 'x-queue-token',
      },
    );
  return answer;
}

function finishFacts(answered: StatusAnswer, q: EdgeQueueState, language: FanLanguage, edge: Edge, known: KnownState, now: number) {
  return { answer: finishAnswer(answered, q, language, edge, known, now), q, language };
}

function statusResponse(
  answer: StatusAnswer,
  language: FanLanguage,
  known: KnownState,
  now: number,
  admissionToken: string | undefined,
): Response {
  // How old the edge's numbers are (seconds since the origin last answered): what an operator checks first.
  const age = Math.max(0, Math.floor((now - known.fetchedAt) / 1000));
  return new Response(statusBody(answer, admissionToken), statusInit(answer.retryAfterSeconds, language, age));
}

/**
 * A status poll's event id segment, read from the request's URL without parsing it into a URL object, when its path
 * is one that parsing leaves as it is (no percent-encoding, no dots, nothing but an id's characters); else null, and
 * the URL is parsed as for any other request.
 */
const PLAIN_STATUS_PATH = /^\/events\/([0-9A-Za-z_-]{1,64})\/queue\/status$/;
function plainStatusId(rawUrl: string): string | null {
  const scheme = rawUrl.indexOf('://');
  if (scheme < 0) return null;
  const start = rawUrl.indexOf('/', scheme + 3);
  if (start < 0) return null;
  const query = rawUrl.indexOf('?', start);
  const m = PLAIN_STATUS_PATH.exec(query < 0 ? rawUrl.slice(start) : rawUrl.slice(start, query));
  return m ? m[1]! : null;
}

function queueOf(known: KnownState, queueId: string): EdgeQueueState | undefined {
  // (An indexed loop rather than find or for-of: no closure or iterator a poll.)
  const queues = known.state?.queues;
  if (queues !== undefined) for (let i = 0; i < queues.length; i++) if (queues[i]!.queueId === queueId) return queues[i];
  return undefined;
}

async function watermark(url: URL, eventIdRaw: string, edge: Edge, waitUntil: WaitUntil): Promise<Response> {
  const eventId = decodeSegment(eventIdRaw);
  if (eventId === null) return validationFailed('params.id', 'malformed percent-encoding');
  if (eventId.length > 64) return validationFailed('params.id', 'Too big: expected string to have <=64 characters');
  const tier = url.searchParams.get('tier') ?? undefined;
  if (tier !== undefined && (tier.length < 1 || tier.length > 32))
    return validationFailed('querystring.tier', 'a tier code is 1-32 characters');
  if (!UUID.test(eventId)) throw new DomainError('not_found', 'EVENT_NOT_FOUND', `no event ${eventId}`, { field: 'id' });
  const known = await edge.states.get(eventId, waitUntil);
  if (!known) return unavailable();
  const state = known.state;
  if (!state) throw new DomainError('not_found', 'EVENT_NOT_FOUND', `no event ${eventId}`, { field: 'id' });
  let queueId = eventId;
  if (tier !== undefined) {
    if (state.tiers.length === 0)
      throw new DomainError('not_found', 'TIER_NOT_FOUND', 'this event has no presale tiers', { field: 'tier' });
    const t = state.tiers.find((x) => x.code === tier);
    if (!t)
      throw new DomainError('not_found', 'TIER_NOT_FOUND', `this event has no tier ${tier}`, {
        field: 'tier',
        tiers: state.tiers.map((x) => x.code),
      });
    queueId = t.queueId;
  }
  const q = queueOf(known, queueId);
  if (!q) throw new DomainError('not_found', 'EVENT_NOT_FOUND', `no event ${eventId}`, { field: 'id' });
  const body = publicWatermark(q.watermark);
  // Fail closed here too: a watermark the origin has not confirmed for EDGE_STALE_SECONDS admits nobody.
  if (Date.now() - known.fetchedAt > edge.config.staleMs && body.state !== 'SOLD_OUT') body.state = 'PAUSED';
  return json(200, body, {
    'cache-control': 'public, max-age=2',
    'x-onsale-watermark-age': String(Math.max(0, Math.floor((Date.now() - known.fetchedAt) / 1000))),
  });
}

/**
 * The store API's public reads whose answers are the same for every fan: the event page (`GET /events/:id`) and the
 * seat map (`GET /events/:id/seatmap[?tier=CODE]`). Their routes are `config: { public: true }` (the store API reads
 * no account there, and no cookie anywhere), so the `Authorization` a signed-in fan's page sends along changes
 * nothing in the answer, and the origin marks them `Cache-Control: public` (RFC 9111 3.5: a shared cache may then
 * answer a request with credentials from its copy).
 */
const PUBLIC_READ = /^\/events\/[^/]+(?:\/seatmap)?$/;

/**
 * Requests the edge may answer from its cache: a GET or HEAD without credentials, or one of the public reads whatever
 * credentials it carries. The fans' page and its assets (`/e/...`) are the same for everyone and the origin never
 * reads a cookie there, so a cookie a browser carries for the domain does not keep them from the cache.
 */
function cacheable(req: Request, url: URL): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (PUBLIC_READ.test(url.pathname)) return true;
  if (req.headers.has('authorization')) return false;
  return !req.headers.has('cookie') || url.pathname.startsWith('/e/');
}

/** The header that carries the origin's Cache-Control for browsers on a copy the edge keeps under its own lifetime. */
const BROWSER_CACHE_CONTROL = 'x-onsale-browser-cache-control';

/**
 * How long the edge may keep an origin answer, in seconds, and how long past that it may still answer it while it
 * fetches a fresh one (the origin's stale-while-revalidate), or null: the origin's CDN-Cache-Control (RFC 9213: for
 * shared caches in front, e.g. the fans' page, which browsers must revalidate but the edge may keep) when it sent
 * one, else its Cache-Control when that is public with a lifetime. Only a 200; never an answer that sets a cookie or
 * varies on more than the encoding.
 */
function edgeLifetime(status: number, headers: Headers): { maxAge: number; swr: number } | null {
  if (status !== 200 || headers.has('set-cookie')) return null;
  const targeted = headers.get('cdn-cache-control');
  const cc = targeted ?? headers.get('cache-control') ?? '';
  if (/\b(no-store|private|no-cache)\b/.test(cc)) return null;
  if (targeted === null && !/\bpublic\b/.test(cc)) return null;
  const maxAge = /\b(?:s-maxage|max-age)=(\d+)/.exec(cc);
  if (!maxAge || Number(maxAge[1]) <= 0) return null;
  const vary = headers.get('vary');
  if (vary && !vary.split(',').every((v) => v.trim().toLowerCase() === 'accept-encoding')) return null;
  const swr = /\bstale-while-revalidate=(\d+)/.exec(cc);
  return { maxAge: Number(maxAge[1]), swr: swr ? Number(swr[1]) : 0 };
}

function marked(res: Response, how: 'hit' | 'miss'): Response {
  const out = new Response(res.body, res);
  out.headers.set(EDGE_HEADER, how);
  return out;
}

/** A kept copy as the fan gets it: the origin's own Cache-Control for browsers back in place. */
function fromCache(hit: Response): Response {
  const out = marked(hit, 'hit');
  const forBrowsers = out.headers.get(BROWSER_CACHE_CONTROL);
  if (forBrowsers !== null) {
    out.headers.set('cache-control', forBrowsers);
    out.headers.delete(BROWSER_CACHE_CONTROL);
  }
  return out;
}

/**
 * An origin answer up to this size is read whole before the fan gets a byte of it, so that an origin failing mid-body
 * (reset, stalled past the timeout) is answered 503 rather than with a status already sent and a body cut short.
 * The store API's answers and the fans' page assets are well under it.
 */
const PROXY_BUFFER_BYTES = 2 * 1024 * 1024;

/** An origin answer's body as the edge passes it on: the bytes when they were read whole, else a stream. */
type OriginBody = Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>;

/** Statuses whose answers have no body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * The origin's body: whole when it fits PROXY_BUFFER_BYTES, else what was read followed by the rest as it arrives
 * (a failure from there on can only cut the answer short). Rejects when the body fails before then.
 */
async function readOriginBody(res: Response, headers: Headers): Promise<OriginBody> {
  // A body the origin sent uncompressed with a declared length within the bound (the store API's answers): read
  // whole in one native call, not a read loop in JS. A body cut short or failed rejects as the loop's read would.
  const declared = headers.get('content-length');
  if (declared !== null && !headers.has('content-encoding') && /^\d{1,8}$/.test(declared) && Number(declared) <= PROXY_BUFFER_BYTES)
    return new Uint8Array(await res.arrayBuffer());
  const reader = res.body!.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      const whole = new Uint8Array(size);
      let at = 0;
      for (const c of chunks) {
        whole.set(c, at);
        at += c.byteLength;
      }
      return whole;
    }
    chunks.push(value);
    size += value.byteLength;
    if (size > PROXY_BUFFER_BYTES) break;
  }
  return new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
    },
    async pull(c) {
      const { done, value } = await reader.read();
      if (done) c.close();
      else c.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/**
 * Whether a 5xx answer is the store API's own (JSON with an `error` code, which the fan's page reads and which
 * carries its own Retry-After). Anything else (an empty 500 from a crashed process, an HTML 502 from something in
 * between) is not passed on: the fan gets 503 ORIGIN_UNAVAILABLE with Retry-After instead.
 */
function isOriginError(body: OriginBody | null, headers: Headers): boolean {
  if (!(body instanceof Uint8Array) || !/\bjson\b/i.test(headers.get('content-type') ?? '')) return false;
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(body));
    return typeof parsed === 'object' && parsed !== null && typeof (parsed as { error?: unknown }).error === 'string';
  } catch {
    return false;
  }
}

/** An origin answer the edge passes on (its failures are answered by the edge itself, as a Response). */
interface OriginAnswer {
  status: number;
  statusText: string;
  headers: Headers;
  body: OriginBody | null;
}

/** Conditional and partial request headers: the edge's own request to fill its cache asks for the whole answer. */
const NOT_FOR_A_FILL = ['if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since', 'if-range', 'range'];

/**
 * The request to the origin unchanged (method, path, query, headers, body), the fan's address added, and its answer
 * read (whole up to PROXY_BUFFER_BYTES); the origin's failures (no answer in time, a 5xx that is not the store API's
 * own) as the edge's 503, through the breaker. `fill`: the conditional and range headers left out (the edge keeps the
 * whole answer and answers the fan's conditions itself).
 */
async function fromOrigin(req: Request, url: URL, edge: Edge, waitUntil: WaitUntil, fill = false): Promise<OriginAnswer | Response> {
  const { config, breaker } = edge;
  // An origin that has not been answering is not sent the request: the fan is answered at once.
  const admitted = breaker.admit();
  if (!admitted.send) {
    // Ignored on purpose: The body is not read: cancelling it only frees it early.
    if (req.body) waitUntil(req.body.cancel().catch(() => {}));
    return originUnavailable(admitted.retryAfterSeconds, 'hit');
  }
  const timeoutMs = FAN_ROUTE.test(url.pathname) ? config.fanTimeoutMs : config.proxyTimeoutMs;
  const target = new Request(`${config.originUrl}${url.pathname}${url.search}`, req);
  // (Each read of a request's or a response's `headers` is a call into workerd: read once.)
  const headersOut = target.headers;
  const client = req.headers.get('cf-connecting-ip');
  if (client) headersOut.set('x-forwarded-for', client);
  else headersOut.delete('x-forwarded-for');
  headersOut.set('x-forwarded-proto', url.protocol.replace(':', ''));
  headersOut.set('x-forwarded-host', url.host);
  if (fill) for (const h of NOT_FOR_A_FILL) headersOut.delete(h);
  // One timeout for the headers and the body together: an origin that answers its headers and then stalls is one
  // that does not answer.
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error(`the origin took longer than ${timeoutMs} ms`)), timeoutMs);
  let res: Response;
  let status: number;
  let headersIn: Headers;
  let body: OriginBody | null;
  try {
    res = await fetch(target, { redirect: 'manual', signal: abort.signal });
    status = res.status;
    headersIn = res.headers;
    const stream = res.body;
    const noBody = req.method === 'HEAD' || NULL_BODY_STATUSES.has(status) || stream === null;
    // Ignored on purpose: The body is not read: cancelling it only frees it early.
    if (noBody) await stream?.cancel().catch(() => {});
    body = noBody ? null : await readOriginBody(res, headersIn);
  } catch (e) {
    console.error(`onsale edge: ${req.method} ${url.pathname} to the origin failed:`, e instanceof Error ? e.message : e);
    breaker.failed(admitted.trial);
    return originUnavailable();
  } finally {
    clearTimeout(timer);
  }
  if (status < 200 || status > 599 || (status >= 500 && !isOriginError(body, headersIn))) {
    console.error(`onsale edge: ${req.method} ${url.pathname}: the origin answered ${status} without an error code`);
    // Ignored on purpose: The body is not read: cancelling it only frees it early.
    if (body instanceof ReadableStream) waitUntil(body.cancel().catch(() => {}));
    breaker.failed(admitted.trial);
    return originUnavailable();
  }
  breaker.succeeded(admitted.trial);
  const headers = new Headers(headersIn);
  // The body is now the bytes read (decoded, when the origin compressed them): workerd counts them itself.
  if (body instanceof Uint8Array) headers.delete('content-length');
  return { status, statusText: res.statusText, headers, body };
}

/** An origin answer as the fan gets it. */
function passedOn(a: OriginAnswer, how: 'hit' | 'miss' = 'miss'): Response {
  a.headers.set(EDGE_HEADER, how);
  return new Response(a.body, { status: a.status, statusText: a.statusText, headers: a.headers });
}

/** Every other request goes to the origin unchanged (method, path, query, headers, body), the fan's address added. */
async function proxy(req: Request, url: URL, edge: Edge, waitUntil: WaitUntil): Promise<Response> {
  const { cache } = edge;
  if (cache !== undefined && cacheable(req, url)) {
    if (cache instanceof MemoryCache) return await fromMemory(req, url, edge, cache, waitUntil);
    return await throughCacheApi(req, url, edge, cache, waitUntil);
  }
  const a = await fromOrigin(req, url, edge, waitUntil);
  return a instanceof Response ? a : passedOn(a);
}

/**
 * Through the runtime's Cache API (Cloudflare, several isolates): a kept copy while the Cache API holds it, else the
 * origin, its answer kept for the edge's lifetime. Keyed by the URL alone (no credentials, no conditions).
 */
async function throughCacheApi(req: Request, url: URL, edge: Edge, cache: EdgeCache, waitUntil: WaitUntil): Promise<Response> {
  const key = new Request(url.href, { method: req.method });
  // Ignored on purpose: A cache that does not answer is a miss: the origin answers.
  const hit = await cache.match(key).catch(() => undefined);
  if (hit) return fromCache(hit);
  const a = await fromOrigin(req, url, edge, waitUntil);
  if (a instanceof Response) return a;
  const out = passedOn(a);
  const lifetime = req.method === 'GET' ? edgeLifetime(out.status, out.headers) : null;
  if (lifetime !== null) {
    // Kept for the edge's lifetime (the Cache API expires it by Cache-Control); the fan's copy says what the origin said.
    const copy = out.clone();
    copy.headers.delete(EDGE_HEADER);
    const forBrowsers = copy.headers.get('cache-control');
    copy.headers.set('cache-control', `public, max-age=${lifetime.maxAge}`);
    if (forBrowsers !== null) copy.headers.set(BROWSER_CACHE_CONTROL, forBrowsers);
    // Ignored on purpose: Caching is best effort: the answer is already on its way, and the next request fills the cache.
    waitUntil(cache.put(key, copy).catch(() => {}));
  }
  return out;
}

/**
 * What the concurrent misses for one URL wait on: the one request to the origin. `kept`: its answer, kept (every
 * waiter is answered from it); else `again`: the origin's failure, which every waiter gets too (an overloaded origin
 * is not sent the same request again by each of them; nothing is kept); else null: an answer not for sharing (a 404,
 * a private or uncacheable one), and each waiter asks the origin itself, as without the cache.
 */
interface Fill {
  kept: Kept | null;
  again: (() => Response) | null;
}

/**
 * Through the isolate's own cache (`workerd serve`): a kept answer within its max-age (`hit`, with its Age), or
 * within the origin's stale-while-revalidate while one request refreshes it in the background; else one request to
 * the origin for every concurrent miss of the URL, its answer kept when the origin allows (`miss` for the request that
 * sent it, `hit` for those that waited for it). A fan's If-None-Match is answered 304 from the kept ETag. HEAD
 * requests and requests for part of an answer (Range) read a kept answer but do not fill one. Misses are collapsed
 * (and stale answers served while revalidating) only where the origin's answers are the same for everyone and meant
 * to be kept (COLLAPSED); any other GET without credentials is kept when the origin allows, each miss its own request
 * (most such answers are not cacheable, e.g. a 401: waiting on another fan's would only delay it, and each failure
 * counts for the breaker as before).
 */
async function fromMemory(req: Request, url: URL, edge: Edge, memory: MemoryCache, waitUntil: WaitUntil): Promise<Response> {
  const key = url.href;
  const now = Date.now();
  const kept = memory.get(key, now);
  const limitMs = (FAN_ROUTE.test(url.pathname) ? edge.config.fanTimeoutMs : edge.config.proxyTimeoutMs) + FILL_GIVE_UP_MARGIN_MS;
  const collapsed = COLLAPSED.test(url.pathname);
  const pending = collapsed ? liveFill(edge, key, now, limitMs) : undefined;
  if (kept && !req.headers.has('range') && (collapsed || now < kept.freshUntil)) {
    if (now >= kept.freshUntil && pending === undefined) {
      // Ignored on purpose: a refresh that fails leaves the stale copy to its end; the next miss asks again.
      waitUntil(fill(req, url, edge, memory, key, waitUntil).catch(() => {}));
    }
    return keptAnswer(kept, req, now, 'hit');
  }
  if (req.method !== 'GET' || req.headers.has('range')) {
    const a = await fromOrigin(req, url, edge, waitUntil);
    return a instanceof Response ? a : passedOn(a);
  }
  if (pending) {
    // Never longer than the fill may take: one whose fan went away was dropped with its request and never settles.
    const shared = await within(pending.shared, pending.since + limitMs - now);
    if (shared?.kept) return keptAnswer(shared.kept, req, Date.now(), 'hit');
    if (shared?.again) return shared.again();
    const a = await fromOrigin(req, url, edge, waitUntil);
    return a instanceof Response ? a : passedOn(a);
  }
  const own = await fill(req, url, edge, memory, key, waitUntil, collapsed);
  return own instanceof Response ? own : keptAnswer(own, req, Date.now(), 'miss');
}

/**
 * The one request to the origin for `key`, shared with the misses that arrive while it runs; its answer kept when
 * the origin allows (`register` false: nobody waits on it). Resolves to the kept answer, or the answer for the
 * request that sent it.
 */
function fill(
  req: Request,
  url: URL,
  edge: Edge,
  memory: MemoryCache,
  key: string,
  waitUntil: WaitUntil,
  register = true,
): Promise<Kept | Response> {
  let share!: (f: Fill) => void;
  const shared = new Promise<Fill>((resolve) => (share = resolve));
  const entry: PendingFill = { shared, since: Date.now() };
  if (register) edge.fills.set(key, entry);
  const done = (async (): Promise<Kept | Response> => {
    try {
      const a = await fromOrigin(req, url, edge, waitUntil, true);
      if (a instanceof Response) {
        const failed = a.status >= 500;
        share({ kept: null, again: failed ? () => originUnavailable() : null });
        return a;
      }
      const lifetime = a.body instanceof Uint8Array ? edgeLifetime(a.status, a.headers) : null;
      if (lifetime === null || !(a.body instanceof Uint8Array)) {
        const body = a.body;
        // The store API's own 5xx (read whole: isOriginError read it): every waiter gets it, as its own copy.
        const again =
          a.status >= 500 && body instanceof Uint8Array
            ? () => passedOn({ status: a.status, statusText: a.statusText, headers: new Headers(a.headers), body })
            : null;
        share({ kept: null, again });
        return passedOn(a);
      }
      const headers: [string, string][] = [];
      a.headers.forEach((value, name) => void (name !== 'age' && headers.push([name, value])));
      const ageAtStore = Math.max(0, Number(a.headers.get('age')) || 0);
      const storedAt = Date.now();
      const freshUntil = storedAt + Math.max(0, lifetime.maxAge - ageAtStore) * 1000;
      const kept: Kept = {
        status: a.status,
        statusText: a.statusText,
        headers,
        body: a.body,
        etag: a.headers.get('etag'),
        storedAt,
        ageAtStore,
        freshUntil,
        staleUntil: freshUntil + lifetime.swr * 1000,
        forAnyone: PUBLIC_READ.test(url.pathname),
      };
      memory.set(key, kept);
      share({ kept, again: null });
      return kept;
    } catch (e) {
      share({ kept: null, again: null });
      throw e;
    } finally {
      if (edge.fills.get(key) === entry) edge.fills.delete(key);
    }
  })();
  // Kept alive past a fan who hangs up: others may be waiting for it.
  waitUntil(done.catch(() => {}));
  return done;
}

/**
 * A GET answered from the isolate's cache as `fromMemory` answers it, when it holds a fresh copy for the request's URL
 * as it came (the key is the parsed URL, which parses to itself) and the request may read it; else undefined, and the
 * request takes the full path (no URL object, deadline timer or promise for a seat map read within its second).
 */
function keptNow(req: Request, memory: MemoryCache): Response | undefined {
  const now = Date.now();
  const k = memory.get(req.url, now);
  if (k === undefined || now >= k.freshUntil || req.headers.has('range')) return undefined;
  if (!k.forAnyone && (req.headers.has('authorization') || req.headers.has('cookie'))) return undefined;
  return keptAnswer(k, req, now, 'hit');
}

/** Where concurrent misses share one origin request: the public reads, and the fans' page and its assets. */
const COLLAPSED = /^\/(?:events\/[^/]+(?:\/seatmap)?|e\/.*)$/;

/** A fill under way: what its waiters get, and when it began. */
interface PendingFill {
  shared: Promise<Fill>;
  since: number;
}

/**
 * How much longer than the origin timeout a fill may stay unsettled before it is taken for dropped: its fetch belongs
 * to the request that sent it, and when workerd cancels that request (its fan hung up) the fetch never settles.
 */
const FILL_GIVE_UP_MARGIN_MS = 1000;

/** The fill under way for `key`, unless it has run past `limitMs` (then it is forgotten: the next miss sends its own). */
function liveFill(edge: Edge, key: string, now: number, limitMs: number): PendingFill | undefined {
  const f = edge.fills.get(key);
  if (f === undefined || now - f.since <= limitMs) return f;
  edge.fills.delete(key);
  return undefined;
}

/** What `p` resolves to, or undefined once `ms` have passed first. Never rejects. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([p.catch(() => undefined), new Promise<undefined>((r) => (timer = setTimeout(r, Math.max(0, ms))))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether an If-None-Match names this ETag (the weak comparison of RFC 9110 13.1.2, as for GET). */
function etagMatches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  const plain = (t: string) => t.trim().replace(/^W\//, '');
  const want = plain(etag);
  return ifNoneMatch.split(',').some((t) => plain(t) === want);
}

/** Headers a 304 carries from the answer it stands for (RFC 9110 15.4.5). */
const NOT_MODIFIED_HEADERS = new Set(['cache-control', 'content-location', 'date', 'etag', 'expires', 'vary']);

/** A kept answer as the fan gets it: its Age, and 304 when the fan's If-None-Match names its ETag. */
function keptAnswer(k: Kept, req: Request, now: number, how: 'hit' | 'miss'): Response {
  const age = String(k.ageAtStore + Math.max(0, Math.floor((now - k.storedAt) / 1000)));
  const inm = k.etag === null ? null : req.headers.get('if-none-match');
  if (inm !== null && etagMatches(inm, k.etag!)) {
    const headers = new Headers();
    for (const [name, value] of k.headers) if (NOT_MODIFIED_HEADERS.has(name)) headers.append(name, value);
    headers.set('age', age);
    headers.set(EDGE_HEADER, how);
    return new Response(null, { status: 304, headers });
  }
  const headers = new Headers(k.headers);
  headers.set('age', age);
  headers.set(EDGE_HEADER, how);
  return new Response(req.method === 'HEAD' ? null : k.body, { status: k.status, statusText: k.statusText, headers });
}

/** Headers of the fan's request that belong to its connection (or are the origin's to set), not passed on in a batch. */
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'host',
  'te',
  'upgrade',
  'expect',
  'proxy-connection',
]);
/** The store API's limit on a request's headers: a join with more goes alone (and is refused there as before). */
const BATCHED_HEADER_BYTES = 16 * 1024;

/** A join's request (`POST /events/:id/queue`), by its path. */
function isJoin(url: URL): boolean {
  const path = url.pathname + url.search;
  return path.length <= EDGE_JOIN_PATH_MAX && EDGE_JOIN_PATH.test(path);
}

/**
 * A join that can go in a batch, as the origin would have received it proxied alone (the fan's headers, its address
 * in X-Forwarded-For, the edge's protocol and host); or null, and it is proxied alone: one with a body, or without a
 * User-Agent (the store API's test client adds its own there, and the bot gate reads which headers a request has),
 * or with an oversized path or headers (the origin would refuse the whole batch for it).
 */
function batchableJoin(req: Request, url: URL): EdgeJoin | null {
  const path = url.pathname + url.search;
  if (path.length > EDGE_JOIN_PATH_MAX || !EDGE_JOIN_PATH.test(path)) return null;
  const length = req.headers.get('content-length');
  if ((length !== null && length !== '0') || req.headers.has('transfer-encoding') || !req.headers.has('user-agent')) return null;
  const headers: Record<string, string> = {};
  let bytes = 0;
  req.headers.forEach((v: string, k: string) => {
    if (NOT_FORWARDED.has(k)) return;
    headers[k] = v;
    bytes += k.length + v.length + 4;
  });
  if (bytes > BATCHED_HEADER_BYTES) return null;
  const client = req.headers.get('cf-connecting-ip');
  if (client) headers['x-forwarded-for'] = client;
  else delete headers['x-forwarded-for'];
  headers['x-forwarded-proto'] = url.protocol.replace(':', '');
  headers['x-forwarded-host'] = url.host;
  return headers['user-agent'] === undefined ? null : { path, headers };
}

/** A join's answer from its batch, as the fan gets it (the same rules as a proxied answer: see proxy). */
function batchedAnswer(a: EdgeJoinAnswer): Response {
  if (a.status < 200 || a.status > 599 || (a.status >= 500 && originError(a.body, a.headers['content-type'] ?? '') === null)) {
    console.error(`onsale edge: a batched join: the origin answered ${a.status} without an error code`);
    return originUnavailable();
  }
  // The headers as one object for the Response to copy (one call into workerd, not a Headers object then a set).
  const headers: Record<string, string> = {};
  for (const name in a.headers) if (name.toLowerCase() !== EDGE_HEADER) headers[name] = a.headers[name]!;
  headers[EDGE_HEADER] = 'miss';
  return new Response(NULL_BODY_STATUSES.has(a.status) ? null : a.body, { status: a.status, headers });
}

/** A join through the edge's batcher; undefined when it must go alone (the origin refused batches). */
async function batchedJoin(
  req: Request,
  join: EdgeJoin,
  joins: EdgeJoinBatcher,
  waitUntil: WaitUntil,
  ticket: JoinTicket,
  deadlineMs: number,
): Promise<Response | undefined> {
  // Kept alive past a fan who hangs up: its request may be the one sending the batch for the others.
  // Its request keeps reading a batch it sent for the other joins of it past its own answer.
  const outcome = joins.join(join, ticket, waitUntil);
  waitUntil(outcome);
  const o = await outcome;
  if (o.kind === 'alone') return undefined;
  if (o.kind === 'unavailable') return originUnavailable(o.retryAfterSeconds, o.how);
  if (o.kind === 'late') return unansweredInTime(req, deadlineMs);
  return batchedAnswer(o.answer);
}

/** How long past the longest origin wait a request may go unanswered before the edge answers it 503 itself. */
const DEADLINE_MARGIN_MS = 2000;

/** A request's own answer when nothing answered it within its deadline: 503 EDGE_FAULT, and a line in the log. */
function unansweredInTime(req: Request, waitMs: number): Response {
  console.error(`onsale edge: ${req.method} ${new URL(req.url).pathname} unanswered after ${waitMs} ms`);
  return edgeFault();
}

/**
 * A join (`POST /events/:id/queue`) with batching on: its batch's answer, kept within the request's deadline by the
 * batcher's own looks (no deadline timer and race of its own: a timer is one of the costliest things a request does on
 * workerd); or, for a join that goes alone or cannot be batched, what `route` answers within its deadline timer, as
 * every other request. Never rejects.
 */
async function answerJoin(req: Request, url: URL, edge: Edge, joins: EdgeJoinBatcher, ctx: ExecutionContext): Promise<Response> {
  const waitMs = deadlineMsOf(edge);
  const started = Date.now();
  try {
    // Alone while the origin has few joins in hand (as with batching off); in the backlog's next batch otherwise.
    const release = joins.alone();
    // Let go once its origin request is over (not when its deadline answers the fan), as the batcher counts it.
    if (release) return await answerWithin(req, waitMs, () => proxied(req, url, edge, ctx).finally(release));
    const join = batchableJoin(req, url);
    if (join) {
      // Set once this request is answered by its deadline: its join, if still waiting for a batch, is then not sent.
      const ticket: JoinTicket = { gone: false, until: started + waitMs };
      const answer = await batchedJoin(req, join, joins, (p) => ctx.waitUntil(p), ticket, waitMs);
      if (answer) return answer;
    }
  } catch (e) {
    return failure(e);
  }
  // Not batchable, or the origin refused batches: proxied alone, within what is left of its deadline.
  return answerWithin(req, Math.max(0, started + waitMs - Date.now()), () => proxied(req, url, edge, ctx), waitMs);
}

/** A request proxied to the origin; a failure as its JSON answer (never rejects). */
const proxied = (req: Request, url: URL, edge: Edge, ctx: ExecutionContext): Promise<Response> =>
  proxy(req, url, edge, (p) => ctx.waitUntil(p)).catch(failure);

async function route(req: Request, edge: Edge, ctx: ExecutionContext): Promise<Response> {
  const waitUntil: WaitUntil = (p) => ctx.waitUntil(p);
  try {
    const url = new URL(req.url);
    if (req.method === 'GET') {
      const status = STATUS_PATH.exec(url.pathname);
      if (status && edge.key && edge.accounts) return await queueStatus(req, status[1]!, edge, waitUntil);
      const wm = WATERMARK_PATH.exec(url.pathname);
      if (wm) return await watermark(url, wm[1]!, edge, waitUntil);
    }
    return await proxy(req, url, edge, waitUntil);
  } catch (e) {
    return errorResponse(e);
  }
}

export default {
  // Nothing escapes this handler: workerd answers an exception or a rejection that does, and a request whose code
  // awaits something that never settles, with its own bare 500. Every failure is a JSON answer with a code, and a
  // request still unanswered past every origin timeout is answered 503 with Retry-After by its own timer.
  // Not an async function: most requests are a fan's poll answered from what the isolate holds, returned as it is
  // (no promise of the handler's own for workerd to wait on, no deadline timer, no URL object); the rest are answered
  // by `answer`, which awaits.
  fetch(req: Request, env: EdgeEnv, ctx: ExecutionContext): Response | Promise<Response> {
    try {
      const edge = edgeOf(env);
      if (edge instanceof Error)
        return json(503, { error: 'EDGE_MISCONFIGURED', message: 'this edge is not configured; see its logs' }, { 'retry-after': '30' });
      if (req.method === 'GET') {
        const now = queueStatusNow(req, req.url, edge, ctx);
        if (now !== undefined && now !== NOT_A_POLL) return now;
        if (now === NOT_A_POLL && edge.cache instanceof MemoryCache) {
          const kept = keptNow(req, edge.cache);
          if (kept !== undefined) return kept;
        }
      }
      return answer(req, edge, ctx);
    } catch (e) {
      return failure(e);
    }
  },
};

/** How long a request may go unanswered before the edge answers it 503 itself (ms). */
const deadlineMsOf = (edge: Edge) =>
  Math.max(edge.config.proxyTimeoutMs, edge.config.fanTimeoutMs, edge.config.originTimeoutMs) + DEADLINE_MARGIN_MS;

/** A request answered with whatever it awaits, within its deadline. Never rejects. */
function answer(req: Request, edge: Edge, ctx: ExecutionContext): Promise<Response> {
  if (req.method === 'POST' && edge.joins) {
    let url: URL | undefined;
    try {
      url = new URL(req.url);
    } catch {
      // Left to route, which answers it as before.
    }
    if (url !== undefined && isJoin(url)) return answerJoin(req, url, edge, edge.joins, ctx);
  }
  return answerWithin(req, deadlineMsOf(edge), () => route(req, edge, ctx));
}

/**
 * What `run` answers (it never rejects), or 503 EDGE_FAULT once `waitMs` passes without it (a timer of the request's
 * own, raced). `saidMs`: the deadline the log line names. Never rejects.
 */
async function answerWithin(req: Request, waitMs: number, run: () => Promise<Response>, saidMs = waitMs): Promise<Response> {
  let deadline: ReturnType<typeof setTimeout> | undefined;
  try {
    const answered = run();
    const late = new Promise<Response>((resolve) => {
      deadline = setTimeout(() => resolve(unansweredInTime(req, saidMs)), waitMs);
    });
    return await Promise.race([answered, late]);
  } catch (e) {
    return failure(e);
  } finally {
    clearTimeout(deadline);
  }
}

/** A failure as its JSON answer; a failure to build that one is the edge's own 503. */
function failure(e: unknown): Response {
  try {
    return errorResponse(e);
  } catch {
    return edgeFault();
  }
}
