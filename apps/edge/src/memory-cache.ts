// Cacheable origin answers kept in the isolate's own memory, for `workerd serve` (whose Cache API has no storage
// unless one is configured): the part of the Cache API the edge uses (match and put of GET answers, expiring by the
// kept copy's `Cache-Control: max-age`), bounded in bytes, the least recently used dropped first.

interface Entry {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: Uint8Array<ArrayBuffer>;
  expiresAt: number;
}

export class MemoryCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly o: { maxBytes: number; maxEntryBytes: number; now?: () => number } = {
      maxBytes: 64 * 1024 * 1024,
      maxEntryBytes: 2 * 1024 * 1024,
    },
  ) {}

  private get now(): number {
    return (this.o.now ?? Date.now)();
  }

  async match(req: Request): Promise<Response | undefined> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
    const e = this.entries.get(req.url);
    if (!e) return undefined;
    this.entries.delete(req.url);
    if (e.expiresAt <= this.now) {
      this.bytes -= e.body.byteLength;
      return undefined;
    }
    this.entries.set(req.url, e); // most recently used last
    return new Response(req.method === 'HEAD' ? null : e.body, { status: e.status, statusText: e.statusText, headers: e.headers });
  }

  async put(req: Request, res: Response): Promise<void> {
    const maxAge = /\bmax-age=(\d+)/.exec(res.headers.get('cache-control') ?? '');
    if (req.method !== 'GET' || !maxAge || Number(maxAge[1]) <= 0) {
      await res.body?.cancel();
      return;
    }
    const body = new Uint8Array(await res.arrayBuffer());
    if (body.byteLength > this.o.maxEntryBytes) return;
    const old = this.entries.get(req.url);
    if (old) {
      this.entries.delete(req.url);
      this.bytes -= old.body.byteLength;
    }
    const headers: [string, string][] = [];
    res.headers.forEach((value, name) => headers.push([name, value]));
    this.entries.set(req.url, {
      status: res.status,
      statusText: res.statusText,
      headers,
      body,
      expiresAt: this.now + Number(maxAge[1]) * 1000,
    });
    this.bytes += body.byteLength;
    for (const [url, e] of this.entries) {
      if (this.bytes <= this.o.maxBytes) break;
      this.entries.delete(url);
      this.bytes -= e.body.byteLength;
    }
  }
}
