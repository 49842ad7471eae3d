import type { EdgeEventState } from '@onsale/shared/queue/edge-state';

/** Where `ctx.waitUntil` goes: work that may finish after the response. */
export type WaitUntil = (p: Promise<unknown>) => void;

/** An event's state as this isolate knows it. */
export interface KnownState {
  /** The origin's document, or null when the origin said the event does not exist. */
  state: EdgeEventState | null;
  /** When the origin answered it (ms since the epoch): its age decides PAUSED when the origin is unreachable. */
  fetchedAt: number;
}

interface Entry {
  known: KnownState | undefined;
  /** No origin request for this event before this time (ms): once per TTL, whether the last one worked or not. */
  nextFetchAt: number;
  inflight: Promise<void> | undefined;
  /** When the refresh in flight started (ms). */
  inflightSince: number;
}

/** What the state cache uses of the Cache API (caches.default; named here so Node code can import this file). */
export interface StateCacheStore {
  match(request: Request): Promise<Response | undefined>;
  put(request: Request, response: Response): Promise<void>;
}

export interface StateCacheOptions {
  originUrl: string;
  ttlMs: number;
  originTimeoutMs: number;
  /** Counts this isolate's requests to the origin for event states (tests and the benchmark read it). */
  onOriginFetch?: (eventId: string) => void;
  /** The runtime's shared cache (caches.default), when it has one. */
  cache?: StateCacheStore | undefined;
  maxEvents?: number;
  /** How long a poll past the TTL waits for the refresh before it is answered from the last state (default 500 ms). */
  maxWaitMs?: number;
}

const FETCHED_AT = 'x-onsale-fetched-at';

/**
 * How long a state with a queue in LAST_CHANCE is kept (ms, when shorter than the TTL): the end is near, and the
 * sell-out must reach the polls within about a second (issue 28: sold-out propagation's 2 s p99), at the cost of
 * an origin request per event per isolate twice a second while it lasts.
 */
export const NEAR_END_TTL_MS = 500;

/** The TTL of a known state: shorter while one of its queues is in LAST_CHANCE. */
function ttlOf(known: KnownState | undefined, ttlMs: number): number {
  // (An indexed loop rather than some or for-of: no closure or iterator on every poll that reads the state.)
  const queues = known?.state?.queues;
  if (queues !== undefined)
    for (let i = 0; i < queues.length; i++) if (queues[i]!.watermark.state === 'LAST_CHANCE') return Math.min(ttlMs, NEAR_END_TTL_MS);
  return ttlMs;
}

/**
 * Every event's edge state for this isolate: fetched from the origin (`GET /events/:id/edge-state`) at most once
 * per event per TTL, whatever the poll rate. Concurrent requests share one fetch; once an event is known, a request
 * past the TTL waits for the one refresh at most `maxWaitMs` and is otherwise answered from what is known while the
 * refresh goes on (so a slow or dead origin never holds a poll up for long). The runtime's cache (the Cache API) sits
 * between isolates and the origin: a state another isolate fetched within the TTL is taken from it instead of the
 * origin. A failed fetch keeps the last state; its age (fetchedAt) is what the caller compares with
 * EDGE_STALE_SECONDS.
 */
export class EventStateCache {
  private readonly entries = new Map<string, Entry>();
  constructor(private readonly o: StateCacheOptions) {}

  /**
   * The event's state when it can be answered at once, without a promise; else undefined (`get` awaits). Within its
   * TTL; and, given `ctx`, also a little past it (GRACE_SHARE of the TTL, at most `maxWaitMs`) while the refresh it is
   * due runs: a refresh due is started here in the background (`ctx.waitUntil`), from the moment the last one started
   * a TTL ago (still at most one origin request per TTL), so with a healthy origin the next state is in before this
   * one has aged past the TTL and no poll waits for the origin's round trip. `now`: Date.now() (a poll passes its own).
   */
  fresh(eventId: string, ctx?: { waitUntil: WaitUntil }, now = Date.now()): KnownState | undefined {
    const e = this.entries.get(eventId);
    const known = e?.known;
    if (!known) return undefined;
    const ttlMs = ttlOf(known, this.o.ttlMs);
    const age = now - known.fetchedAt;
    if (ctx === undefined) return age < ttlMs ? known : undefined;
    // How long past its TTL a known state is still answered at once while its refresh runs (inline: no number boxed).
    if (age >= ttlMs + Math.min(this.o.maxWaitMs ?? 500, ttlMs * GRACE_SHARE)) return undefined;
    if (now >= e.nextFetchAt) this.start(eventId, e, now, ttlMs, (p) => ctx.waitUntil(p));
    return age < ttlMs || e.inflight ? known : undefined;
  }

  /**
   * Starts the event's refresh unless one runs (a refresh unsettled past the origin timeout is given up) or the last
   * began less than a TTL ago; registers it with `waitUntil`. True when it started one.
   */
  private start(eventId: string, e: Entry, now: number, ttlMs: number, waitUntil: WaitUntil): boolean {
    // A refresh's fetch belongs to the request that started it: when workerd cancels that request (its client went
    // away) the fetch is dropped and the refresh never settles. Past the origin timeout it is given up, so the event
    // is refreshed again instead of being answered from a state that only ages.
    if (e.inflight && now - e.inflightSince > this.o.originTimeoutMs + GIVE_UP_MARGIN_MS) e.inflight = undefined;
    if (e.inflight || now < e.nextFetchAt) return false;
    e.nextFetchAt = now + ttlMs;
    e.inflightSince = now;
    const inflight: Promise<void> = this.refresh(eventId, e)
      .catch((err: unknown) => console.error(`onsale edge: refreshing event ${eventId} failed`, err))
      .finally(() => {
        if (e.inflight === inflight) e.inflight = undefined;
        // A state that came back in LAST_CHANCE is fetched again sooner than the TTL the fetch was started with.
        e.nextFetchAt = Math.min(e.nextFetchAt, e.inflightSince + ttlOf(e.known, this.o.ttlMs));
      });
    e.inflight = inflight;
    waitUntil(inflight);
    return true;
  }

  /** The event's state as known now; undefined when the origin has never answered for it in this isolate. */
  async get(eventId: string, waitUntil: WaitUntil): Promise<KnownState | undefined> {
    let e = this.entries.get(eventId);
    if (!e) {
      if (this.entries.size >= (this.o.maxEvents ?? 10_000)) this.entries.delete(this.entries.keys().next().value!);
      e = { known: undefined, nextFetchAt: 0, inflight: undefined, inflightSince: 0 };
      this.entries.set(eventId, e);
    }
    const answered = this.fresh(eventId, { waitUntil });
    if (answered) return answered;
    const now = Date.now();
    const started = this.start(eventId, e, now, ttlOf(e.known, this.o.ttlMs), waitUntil);
    const inflight = e.inflight;
    if (!inflight) return e.known;
    if (!started) waitUntil(inflight);
    // A healthy origin answers in milliseconds: a poll with a state to fall back on waits that long for the fresh
    // one, never longer than maxWaitMs (a slow or dead origin then gets the last state, which fails closed once it is
    // old). Without one it waits out the origin timeout, never longer: a request that only awaits another request's
    // fetch would otherwise hang if that one is cancelled, and workerd answers a hung request with a bare 500.
    await within(inflight, e.known ? (this.o.maxWaitMs ?? 500) : this.o.originTimeoutMs + GIVE_UP_MARGIN_MS);
    return e.known;
  }

  private async refresh(eventId: string, e: Entry): Promise<void> {
    const key = new Request(`${this.o.originUrl}/events/${encodeURIComponent(eventId)}/edge-state`);
    const cached = await this.fromCache(key, eventId);
    if (cached && (!e.known || cached.fetchedAt > e.known.fetchedAt) && Date.now() - cached.fetchedAt < ttlOf(cached, this.o.ttlMs)) {
      e.known = cached;
      return;
    }
    this.o.onOriginFetch?.(eventId);
    // The timeout covers the body too: an origin that sends its headers and then stalls is given up as one that
    // never answers. Any failure (refused, reset mid-body, timed out, not JSON, not an edge state) keeps what is
    // known; its age says PAUSED in time.
    let text: string;
    let fetchedAt: number;
    try {
      const res = await fetch(key, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(this.o.originTimeoutMs) });
      fetchedAt = Date.now();
      if (res.status === 404) {
        // Ignored on purpose: The body is not read: cancelling it only frees it early.
        await res.body?.cancel().catch(() => {});
        e.known = { state: null, fetchedAt };
        return;
      }
      if (res.status !== 200) {
        // Ignored on purpose: The body is not read: cancelling it only frees it early.
        await res.body?.cancel().catch(() => {});
        return;
      }
      text = await res.text();
    } catch {
      return;
    }
    const state = parseEdgeState(text, eventId);
    if (!state) {
      console.error(`onsale edge: the origin's state of event ${eventId} is not an edge state; the last one is kept`);
      return;
    }
    e.known = { state, fetchedAt };
    if (this.o.cache) {
      const ttl = Math.max(1, Math.ceil(this.o.ttlMs / 1000));
      await this.o.cache
        .put(
          key,
          new Response(text, {
            headers: { 'content-type': 'application/json', 'cache-control': `public, max-age=${ttl}`, [FETCHED_AT]: String(fetchedAt) },
          }),
        )
        // Ignored on purpose: caching is best effort; the state is already answered, and the next read fills the cache.
        .catch(() => {});
    }
  }

  private async fromCache(key: Request, eventId: string): Promise<KnownState | undefined> {
    if (!this.o.cache) return undefined;
    try {
      const hit = await this.o.cache.match(key);
      if (!hit) return undefined;
      const fetchedAt = Number(hit.headers.get(FETCHED_AT));
      const state = parseEdgeState(await hit.text(), eventId);
      return state && Number.isFinite(fetchedAt) && fetchedAt > 0 ? { state, fetchedAt } : undefined;
    } catch {
      return undefined;
    }
  }
}

/**
 * The share of the TTL past it that a known state is still answered at once while its refresh runs (at most
 * maxWaitMs): a refresh started a TTL after the last one began normally lands before the state ages past the TTL;
 * this covers one that takes longer than the last (0.5 s at the default 2 s TTL, 0.125 s in LAST_CHANCE).
 */
const GRACE_SHARE = 0.25;

/** How much longer than the origin timeout a refresh may stay unsettled before it is taken for cancelled. */
const GIVE_UP_MARGIN_MS = 1000;

/** Waits for `p` at most `ms`; never rejects. */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Ignored on purpose: A bounded wait: the promise's own outcome is read where it is awaited.
  await Promise.race([p.catch(() => {}), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * The origin's edge state of `eventId`, or null when the text is not one: not JSON, another event's, or without the
 * fields every poll reads (a queue's id, watermark numbers and words). An answer from something else in front of the
 * origin (an error page, a truncated body) must never replace a good state, nor reach the status rule.
 */
export function parseEdgeState(text: string, eventId: string): EdgeEventState | null {
  let x: unknown;
  try {
    x = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(x) || x.eventId !== eventId || !isNumber(x.generatedAt) || !Array.isArray(x.tiers) || !Array.isArray(x.queues)) return null;
  const queuesOk = x.queues.every(
    (q: unknown) =>
      isObject(q) &&
      typeof q.queueId === 'string' &&
      isObject(q.copy) &&
      isObject(q.watermark) &&
      isNumber(q.watermark.admittedThrough) &&
      isNumber(q.watermark.heartbeatAt) &&
      isNumber(q.watermark.updatedAt) &&
      isNumber(q.watermark.ratePerMin) &&
      typeof q.watermark.state === 'string' &&
      (q.watermark.history === undefined || Array.isArray(q.watermark.history)) &&
      (q.moves === undefined || (Array.isArray(q.moves) && q.moves.every((m) => Array.isArray(m) && m.length === 2 && m.every(isNumber)))),
  );
  const tiersOk = x.tiers.every((t: unknown) => isObject(t) && typeof t.code === 'string' && typeof t.queueId === 'string');
  return queuesOk && tiersOk ? (x as unknown as EdgeEventState) : null;
}
