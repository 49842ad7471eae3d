// Cacheable origin answers kept in the isolate's own memory, for `workerd serve` (whose Cache API has no storage
// unless one is configured): each kept with when it was stored, until when it is fresh (the origin's max-age) and
// until when it may still be answered while a fresh copy is fetched (the origin's stale-while-revalidate), bounded in
// bytes and in entries, the least recently used dropped first. `match` and `put` are the part of the Cache API the
// edge used before (a GET answer kept for its copy's `Cache-Control: max-age`); the edge's own path uses get and set.

/** One kept answer: the origin's status, headers and whole body, and its lifetimes on the edge's clock (ms). */
export interface Kept {
  status: number;
  statusText: string;
  /** The origin's headers as the fan gets them (no Content-Length: the runtime counts the body itself). */
  headers: [string, string][];
  body: Uint8Array<ArrayBuffer>;
  /** The origin's ETag, for a fan's If-None-Match. */
  etag: string | null;
  storedAt: number;
  /** Seconds old the answer already was when the edge got it (the origin's own Age header). */
  ageAtStore: number;
  /** Answered as it is until then. */
  freshUntil: number;
  /** Answered, while one request to the origin refreshes it, until then (= freshUntil without stale-while-revalidate). */
  staleUntil: number;
  /** Answered whatever credentials the request carries (a route whose answer reads neither the account nor a cookie). */
  forAnyone: boolean;
}

export interface MemoryCacheOptions {
  maxBytes: number;
  maxEntryBytes: number;
  /** Most answers kept (URLs are the fans' to choose: each costs its key and headers besides its body). */
  maxEntries?: number;
  now?: () => number;
}

const sizeOf = (key: string, k: Kept) => {
  let n = key.length + k.body.byteLength;
  for (const [name, value] of k.headers) n += name.length + value.length;
  return n;
};

export class MemoryCache {
  private readonly entries = new Map<string, { kept: Kept; bytes: number }>();
  private bytes = 0;

  constructor(
    private readonly o: MemoryCacheOptions = {
      maxBytes: 64 * 1024 * 1024,
      maxEntryBytes: 2 * 1024 * 1024,
      maxEntries: 10_000,
    },
  ) {}

  private get now(): number {
    return (this.o.now ?? Date.now)();
  }

  /** Kept bytes (keys, headers and bodies) and answers. */
  get size(): { bytes: number; entries: number } {
    return { bytes: this.bytes, entries: this.entries.size };
  }

  /** The answer kept for `key` while it may still be answered (fresh, or within stale-while-revalidate); else undefined. */
  get(key: string, now = this.now): Kept | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    if (e.kept.staleUntil <= now) {
      this.bytes -= e.bytes;
      return undefined;
    }
    this.entries.set(key, e); // most recently used last
    return e.kept;
  }

  /** Keeps `kept` for `key` (replacing what was there); an answer larger than maxEntryBytes is not kept. */
  set(key: string, kept: Kept): void {
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.bytes;
    }
    const bytes = sizeOf(key, kept);
    if (bytes > this.o.maxEntryBytes) return;
    this.entries.set(key, { kept, bytes });
    this.bytes += bytes;
    const maxEntries = this.o.maxEntries ?? Infinity;
    for (const [k, e] of this.entries) {
      if (this.bytes <= this.o.maxBytes && this.entries.size <= maxEntries) break;
      this.entries.delete(k);
      this.bytes -= e.bytes;
    }
  }

  async match(req: Request): Promise<Response | undefined> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
    const now = this.now;
    const e = this.get(req.url, now);
    if (!e || e.freshUntil <= now) return undefined;
    return new Response(req.method === 'HEAD' ? null : e.body, { status: e.status, statusText: e.statusText, headers: e.headers });
  }

  async put(req: Request, res: Response): Promise<void> {
    const maxAge = /\bmax-age=(\d+)/.exec(res.headers.get('cache-control') ?? '');
    if (req.method !== 'GET' || !maxAge || Number(maxAge[1]) <= 0) {
      await res.body?.cancel();
      return;
    }
    const body = new Uint8Array(await res.arrayBuffer());
    const headers: [string, string][] = [];
    res.headers.forEach((value, name) => headers.push([name, value]));
    const now = this.now;
    const until = now + Number(maxAge[1]) * 1000;
    this.set(req.url, {
      status: res.status,
      statusText: res.statusText,
      headers,
      body,
      etag: res.headers.get('etag'),
      storedAt: now,
      ageAtStore: 0,
      freshUntil: until,
      staleUntil: until,
      forAnyone: false,
    });
  }
}
