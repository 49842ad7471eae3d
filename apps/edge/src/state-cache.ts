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
}

export interface StateCacheOptions {
  originUrl: string;
  ttlMs: number;
  originTimeoutMs: number;
  /** Counts this isolate's requests to the origin for event states (tests and the benchmark read it). */
  onOriginFetch?: (eventId: string) => void;
  /** The runtime's shared cache (caches.default), when it has one. */
  cache?: Cache | undefined;
  maxEvents?: number;
  /** How long a poll past the TTL waits for the refresh before it is answered from the last state (default 500 ms). */
  maxWaitMs?: number;
}

const FETCHED_AT = 'x-onsale-fetched-at';

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

  /** The event's state when this isolate's copy is within the TTL (get would answer it at once); else undefined. */
  fresh(eventId: string): KnownState | undefined {
    const known = this.entries.get(eventId)?.known;
    return known && Date.now() - known.fetchedAt < this.o.ttlMs ? known : undefined;
  }

  /** The event's state as known now; undefined when the origin has never answered for it in this isolate. */
  async get(eventId: string, waitUntil: WaitUntil): Promise<KnownState | undefined> {
    let e = this.entries.get(eventId);
    if (!e) {
      if (this.entries.size >= (this.o.maxEvents ?? 10_000)) this.entries.delete(this.entries.keys().next().value!);
      e = { known: undefined, nextFetchAt: 0, inflight: undefined };
      this.entries.set(eventId, e);
    }
    const now = Date.now();
    if (e.known && now - e.known.fetchedAt < this.o.ttlMs) return e.known;
    if (!e.inflight && now >= e.nextFetchAt) {
      e.nextFetchAt = now + this.o.ttlMs;
      const entry = e;
      entry.inflight = this.refresh(eventId, entry).finally(() => (entry.inflight = undefined));
    }
    if (e.known) {
      if (!e.inflight) return e.known;
      waitUntil(e.inflight);
      // A healthy origin answers in milliseconds: wait that long for the fresh state, never longer than
      // maxWaitMs (a slow or dead origin then gets the last state, which fails closed once it is old).
      const inflight = e.inflight;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([inflight, new Promise<void>((r) => (timer = setTimeout(r, this.o.maxWaitMs ?? 500)))]);
      clearTimeout(timer);
      return e.known;
    }
    await e.inflight;
    return e.known;
  }

  private async refresh(eventId: string, e: Entry): Promise<void> {
    const key = new Request(`${this.o.originUrl}/events/${encodeURIComponent(eventId)}/edge-state`);
    const cached = await this.fromCache(key);
    if (cached && (!e.known || cached.fetchedAt > e.known.fetchedAt) && Date.now() - cached.fetchedAt < this.o.ttlMs) {
      e.known = cached;
      return;
    }
    this.o.onOriginFetch?.(eventId);
    let res: Response;
    try {
      res = await fetch(key, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(this.o.originTimeoutMs) });
    } catch {
      return; // unreachable: keep what is known; its age will say PAUSED in time
    }
    const fetchedAt = Date.now();
    if (res.status === 404) {
      await res.body?.cancel();
      e.known = { state: null, fetchedAt };
      return;
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      return;
    }
    let text: string;
    let state: EdgeEventState;
    try {
      text = await res.text();
      state = JSON.parse(text) as EdgeEventState;
      if (state.eventId !== eventId || !Array.isArray(state.queues)) return;
    } catch {
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
        .catch(() => {});
    }
  }

  private async fromCache(key: Request): Promise<KnownState | undefined> {
    if (!this.o.cache) return undefined;
    try {
      const hit = await this.o.cache.match(key);
      if (!hit) return undefined;
      const fetchedAt = Number(hit.headers.get(FETCHED_AT));
      const state = (await hit.json()) as EdgeEventState;
      return Number.isFinite(fetchedAt) && fetchedAt > 0 ? { state, fetchedAt } : undefined;
    } catch {
      return undefined;
    }
  }
}
