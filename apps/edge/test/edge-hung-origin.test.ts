import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalEdge, type LocalEdge } from '../src/local.js';

// An origin that hangs (accepts connections and requests, never answers), with the worker on `workerd serve` in
// front: fans are answered 503 ORIGIN_UNAVAILABLE with Retry-After within EDGE_FAN_TIMEOUT_MS, not left waiting, and
// once the origin has failed EDGE_BREAKER_FAILURES times in a row the edge stops sending to it (the circuit opens),
// lets one request through after EDGE_BREAKER_OPEN_SECONDS to try it (half-open), and closes once it answers.

const FAN_TIMEOUT_MS = 1000;
const PROXY_TIMEOUT_MS = 6000;
const FAILURES = 3;

/** The origin: hung (every request kept open, never answered) or answering. Counts the requests that reach it. */
class HungOrigin {
  hung = true;
  received: string[] = [];
  private readonly open = new Set<ServerResponse>();
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      this.received.push(`${req.method} ${req.url}`);
      if (this.hung) {
        this.open.add(res);
        res.on('close', () => this.open.delete(res));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.open) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

let origin: HungOrigin;
let edge: LocalEdge;

beforeAll(async () => {
  origin = await new HungOrigin().start();
  edge = await startLocalEdge({
    storeApiUrl: origin.url,
    queueTokenSecret: 'edge hung origin test queue secret, 32+ chars',
    authSecret: 'edge hung origin test account secret, 32+ chars',
    fanTimeoutMs: FAN_TIMEOUT_MS,
    proxyTimeoutMs: PROXY_TIMEOUT_MS,
    breakerFailures: FAILURES,
    breakerOpenSeconds: 1,
  });
});

afterAll(async () => {
  await edge?.close();
  await origin?.stop();
});

const hold = () =>
  fetch(`${edge.url}/events/e1/holds`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', connection: 'close' },
    body: '{"quantity":2}',
  });

/** The edge's 503 for an origin that does not answer: JSON with the code and a Retry-After in whole seconds. */
async function expectOriginUnavailable(r: Response): Promise<void> {
  expect(r.status).toBe(503);
  expect(r.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await r.json()).toMatchObject({ error: 'ORIGIN_UNAVAILABLE', retryAfterSeconds: Number(r.headers.get('retry-after')) });
}

describe('a hung origin behind the edge', () => {
  it("a fan's request is answered 503 ORIGIN_UNAVAILABLE with Retry-After at EDGE_FAN_TIMEOUT_MS, not at the proxy timeout", async () => {
    const started = performance.now();
    const r = await hold();
    const ms = performance.now() - started;
    await expectOriginUnavailable(r);
    expect(r.headers.get('x-onsale-edge')).toBe('miss'); // the origin was asked
    // The fan budget's answer: not before it, and well before the proxy timeout for other paths.
    expect(ms).toBeGreaterThanOrEqual(FAN_TIMEOUT_MS - 50);
    expect(ms).toBeLessThan(PROXY_TIMEOUT_MS);
    expect(origin.received).toContain('POST /events/e1/holds');
  });

  it(`after ${FAILURES} failures in a row the circuit opens: fans are answered at once, and nothing reaches the origin`, async () => {
    // Concurrent fans while the origin hangs: all answered 503 (the first ones at the fan budget).
    const first = await Promise.all(Array.from({ length: FAILURES }, hold));
    for (const r of first) await expectOriginUnavailable(r);
    const reached = origin.received.length;
    const meanwhile = await Promise.all(Array.from({ length: 20 }, hold));
    for (const r of meanwhile) {
      expect(r.headers.get('x-onsale-edge')).toBe('hit'); // answered by the edge, the origin not asked
      await expectOriginUnavailable(r);
    }
    expect(origin.received.length).toBe(reached);
  });

  it('half-open: once the circuit has been open EDGE_BREAKER_OPEN_SECONDS, one request tries the origin while the others are still answered at once', async () => {
    const reached = origin.received.length;
    const trials: Promise<Response>[] = [];
    // Fans keep coming until one is let through to the (still hung) origin.
    await expect
      .poll(
        () => {
          trials.push(hold());
          return origin.received.length;
        },
        { timeout: 15_000, interval: 100 },
      )
      .toBe(reached + 1);
    const others = await Promise.all(Array.from({ length: 10 }, hold));
    for (const r of others) {
      expect(r.headers.get('x-onsale-edge')).toBe('hit');
      await expectOriginUnavailable(r);
    }
    for (const r of await Promise.all(trials)) await expectOriginUnavailable(r);
    // Only the trial reached the hung origin; it failed, so the circuit is open again.
    expect(origin.received.length).toBe(reached + 1);
    expect((await hold()).headers.get('x-onsale-edge')).toBe('hit');
  });

  it('the origin answering again: the trial succeeds and the circuit closes, every request reaching the origin', async () => {
    origin.hung = false;
    await expect.poll(async () => (await hold()).status, { timeout: 15_000, interval: 100 }).toBe(200);
    const reached = origin.received.length;
    const after = await Promise.all(Array.from({ length: 10 }, hold));
    for (const r of after) {
      expect(r.status).toBe(200);
      expect(r.headers.get('x-onsale-edge')).toBe('miss');
    }
    expect(origin.received.length).toBe(reached + 10);
  });

  it("a path outside the fans' routes (the API docs) waits EDGE_PROXY_TIMEOUT_MS instead", async () => {
    origin.hung = true;
    const started = performance.now();
    const r = await fetch(`${edge.url}/docs/json`, { headers: { connection: 'close' } });
    const ms = performance.now() - started;
    await expectOriginUnavailable(r);
    expect(ms).toBeGreaterThanOrEqual(PROXY_TIMEOUT_MS - 50);
  });
});
