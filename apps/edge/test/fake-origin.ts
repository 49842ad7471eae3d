import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_QUEUE_COPY, type EdgeEventState, type EdgeQueueState, type WatermarkState } from '@onsale/shared/queue';

/** One request as the origin received it. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * A stand-in store API for the edge's rules: it serves the edge state of the events it is given (built at each
 * request, so heartbeats are fresh unless a test says otherwise), records every request it receives, answers
 * `POST /edge/claims` by keeping the report, and echoes anything else so a test can see what was proxied.
 * The store API itself is the origin in the end-to-end tests.
 */
export class FakeOrigin {
  readonly received: Received[] = [];
  readonly events = new Map<string, () => EdgeEventState>();
  /** A route's own answer: status, headers, body. */
  readonly routes = new Map<string, () => { status: number; headers?: Record<string, string>; body: string }>();
  /**
   * A route answered by hand (`METHOD /path`), before anything else: for an origin that misbehaves at the socket
   * (resets mid-body, stalls after its headers, never answers).
   */
  readonly raw = new Map<string, (req: IncomingMessage, res: ServerResponse, body: string) => void>();
  /** When set, every request waits this long before it is answered (a slow origin). */
  delayMs = 0;
  /** When false, every request is answered 503 (the origin up but failing). */
  healthy = true;
  private server: Server | undefined;
  url = '';

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        this.received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        const answer = () => {
          const byHand = this.raw.get(`${req.method} ${(req.url ?? '').split('?')[0]!}`);
          if (byHand) return byHand(req, res, body);
          if (!this.healthy)
            return void res
              .writeHead(503, { 'content-type': 'application/json', 'retry-after': '5' })
              .end('{"error":"UNAVAILABLE","message":"down"}');
          const path = (req.url ?? '').split('?')[0]!;
          const route = this.routes.get(`${req.method} ${path}`);
          if (route) {
            const r = route();
            return void res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers }).end(r.body);
          }
          const m = /^\/events\/([^/]+)\/edge-state$/.exec(path);
          if (req.method === 'GET' && m) {
            const make = this.events.get(decodeURIComponent(m[1]!));
            if (!make)
              return void res
                .writeHead(404, { 'content-type': 'application/json' })
                .end('{"error":"EVENT_NOT_FOUND","message":"no event","field":"id"}');
            return void res
              .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=1' })
              .end(JSON.stringify(make()));
          }
          if (req.method === 'POST' && path === '/edge/claims')
            return void res.writeHead(202, { 'content-type': 'application/json' }).end('{"counted":0}');
          res
            .writeHead(200, { 'content-type': 'application/json', 'x-origin': 'yes' })
            .end(JSON.stringify({ echo: { method: req.method, url: req.url, body } }));
        };
        if (this.delayMs > 0) setTimeout(answer, this.delayMs);
        else answer();
      });
    });
    await new Promise<void>((r) => this.server!.listen(port, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }

  /** Requests received whose path matches. */
  count(pathPattern: RegExp, method = 'GET'): number {
    return this.received.filter((r) => r.method === method && pathPattern.test(r.url.split('?')[0]!)).length;
  }
}

/** A queue's watermark: open, the controller alive now, FIFO. */
export function liveWatermark(queueId: string, patch: Partial<WatermarkState> = {}): WatermarkState {
  const now = Date.now();
  return {
    eventId: queueId,
    admittedThrough: 100,
    state: 'OPEN',
    ratePerMin: 600,
    updatedAt: now - 1000,
    heartbeatAt: now,
    cohortSize: null,
    seedHex: null,
    history: [],
    ...patch,
  };
}

export function queueState(queueId: string, patch: Partial<EdgeQueueState> = {}, wm: Partial<WatermarkState> = {}): EdgeQueueState {
  return {
    queueId,
    watermark: liveWatermark(queueId, wm),
    copy: DEFAULT_QUEUE_COPY,
    listingId: 'listing-1',
    tier: null,
    tierName: null,
    closesAt: null,
    ...patch,
  };
}
