import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createRawClient, requestBytes } from '../bench/http1.js';

// The joins bench's load generator (apps/store-api/bench/http1.ts) against real local servers: node:http's (what
// Content-Length and chunked answers look like from a Node server) and raw sockets (answers split anywhere, a server
// closing a connection with a request in flight, one that never answers).

const servers: Server[] = [];
const clients: { close(): void }[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function client(base: string, connections: number, timeoutMs?: number) {
  // No short timeout but where a test asks for one: a loaded machine answers late, which is not a failure.
  const c = createRawClient(base, connections, { timeoutMs: timeoutMs ?? 600_000 });
  clients.push(c);
  return c;
}

/** A node:http server; `handle` answers; counts the connections it accepted and the requests in flight on each. */
async function httpServer(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  const seen = { connections: 0, requests: 0, maxInFlightOnOne: 0, paths: [] as string[], headers: [] as IncomingMessage['headers'][] };
  const server = createHttpServer((req, res) => {
    const socket = req.socket as Socket & { inFlight?: number };
    socket.inFlight = (socket.inFlight ?? 0) + 1;
    seen.maxInFlightOnOne = Math.max(seen.maxInFlightOnOne, socket.inFlight);
    res.on('finish', () => void (socket.inFlight! -= 1));
    seen.requests++;
    seen.paths.push(req.url!);
    seen.headers.push(req.headers);
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => handle(req, res, body));
  });
  server.on('connection', () => seen.connections++);
  return { base: await listen(server), seen };
}

const get = (c: ReturnType<typeof client>, path: string, headers: Record<string, string> = {}) =>
  requestBytes('POST', path, c.host, headers);

describe('the joins bench client', () => {
  it('sends the request as built, reuses one keep-alive connection, and reads Content-Length answers', async () => {
    const { base, seen } = await httpServer((req, res, body) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ path: req.url, body }));
    });
    const c = client(base, 1);
    for (let i = 0; i < 5; i++) {
      const a = await c.request(get(c, `/events/e/queue?i=${i}`, { 'x-device-id': `d${i}`, authorization: 'Bearer t' }));
      expect(a).toMatchObject({ status: 200, code: '' });
    }
    expect(seen.connections).toBe(1);
    expect(seen.paths).toEqual([0, 1, 2, 3, 4].map((i) => `/events/e/queue?i=${i}`));
    expect(seen.headers[4]).toMatchObject({ 'x-device-id': 'd4', authorization: 'Bearer t', 'content-length': '0' });
    expect(seen.headers[4]!.host).toBe(c.host);
  });

  it("reads chunked answers, and a non-200 answer's error code whichever way its body comes", async () => {
    const { base, seen } = await httpServer((req, res) => {
      const body = JSON.stringify({ error: req.url!.slice(1), detail: 'x'.repeat(5000) });
      if (req.url === '/ok-chunked') {
        res.write('{"ok":');
        setImmediate(() => res.end('true}'));
      } else if (req.url === '/queue_full') {
        res.statusCode = 503;
        res.setHeader('retry-after', '1');
        res.end(body); // Content-Length
      } else {
        res.statusCode = 429;
        res.write(body.slice(0, 10)); // chunked, in pieces
        setImmediate(() => {
          res.write(body.slice(10, 3000));
          setImmediate(() => res.end(body.slice(3000)));
        });
      }
    });
    const c = client(base, 1);
    expect(await c.request(get(c, '/ok-chunked'))).toMatchObject({ status: 200, code: '' });
    expect(await c.request(get(c, '/queue_full'))).toMatchObject({ status: 503, code: 'queue_full' });
    expect(await c.request(get(c, '/rate_limited'))).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(await c.request(get(c, '/ok-chunked'))).toMatchObject({ status: 200, code: '' });
    expect(seen.connections).toBe(1);
  });

  it('parses answers split at every byte, chunk extensions and trailers included', async () => {
    const answers = [
      'HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{"ok":true}',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\n{"ok"\r\n6\r\n:true}\r\n0\r\nX-Trailer: 1\r\n\r\n',
      'HTTP/1.1 409 Conflict\r\nTRANSFER-ENCODING: Chunked\r\n\r\nF\r\n{"error":"dupli\r\n8\r\ncate_x"}\r\n0\r\n\r\n',
      'HTTP/1.1 400 Bad Request\r\ncontent-length:   19\r\n\r\n{"error":"bad_one"}',
    ];
    let n = 0;
    const server = createNetServer((socket) => {
      let got = '';
      socket.on('data', (d) => {
        got += d.toString();
        while (got.includes('\r\n\r\n')) {
          got = got.slice(got.indexOf('\r\n\r\n') + 4);
          const bytes = Buffer.from(answers[n++ % answers.length]!);
          // One byte a write, each on its own turn of the event loop.
          let i = 0;
          const step = () => {
            if (i < bytes.length) socket.write(bytes.subarray(i, ++i), () => setImmediate(step));
          };
          step();
        }
      });
    });
    const c = client(await listen(server), 1);
    const got = [];
    for (let i = 0; i < answers.length; i++) got.push(await c.request(get(c, '/x')));
    expect(got.map((a) => [a.status, a.code])).toEqual([
      [200, ''],
      [200, ''],
      [409, 'duplicate_x'],
      [400, 'bad_one'],
    ]);
  });

  it('counts a request whose connection the server closed as no answer, and opens another for the next', async () => {
    let n = 0;
    const { base, seen } = await httpServer((req, res) => {
      n++;
      if (n === 2) return void req.socket.destroy(); // mid-request, no answer
      if (n === 3) res.setHeader('connection', 'close'); // answered, then closed
      res.end('{}');
    });
    const c = client(base, 1);
    expect((await c.request(get(c, '/1'))).status).toBe(200);
    const closed = await c.request(get(c, '/2'));
    expect(closed.status).toBe(0);
    expect(['closed', 'ECONNRESET', 'EPIPE']).toContain(closed.code);
    expect((await c.request(get(c, '/3'))).status).toBe(200);
    expect((await c.request(get(c, '/4'))).status).toBe(200);
    expect(seen.connections).toBe(3);
  });

  it('answers a stuck request `timeout` and goes on with a new connection', async () => {
    let n = 0;
    const { base, seen } = await httpServer((_req, res) => {
      if (n++ === 0) return; // never answered
      res.end('{}');
    });
    const c = client(base, 1, 50);
    expect(await c.request(get(c, '/stuck'))).toMatchObject({ status: 0, code: 'timeout' });
    c.timeoutMs = 300_000; // the next answer is not raced against a short timeout on a loaded machine
    expect(await c.request(get(c, '/next'))).toMatchObject({ status: 200, code: '' });
    expect(seen.connections).toBe(2);
  });

  it('a run keeps one request in flight a connection and answers every request it sent, by status and code', async () => {
    let n = 0;
    const { base, seen } = await httpServer((_req, res) => {
      const i = n++;
      if (i % 10 === 3) {
        res.statusCode = 503;
        return void res.end(JSON.stringify({ error: 'overload' }));
      }
      if (i % 25 === 7) res.setHeader('connection', 'close');
      if (i % 2 === 0) res.end('{"ok":true}');
      else {
        res.write('{"ok":');
        setImmediate(() => res.end('true}'));
      }
    });
    const c = client(base, 8);
    await c.connect(() => get(c, '/healthz'));
    const requests = Array.from({ length: 500 }, (_, i) => get(c, `/events/e/queue?fan=${i}`));
    let next = 0;
    const answers: Record<string, number> = {};
    const { issued } = await c.run(
      60_000,
      () => requests[next++],
      (status, code) => {
        const key = status === 200 ? '200' : `${status} ${code}`.trim();
        answers[key] = (answers[key] ?? 0) + 1;
      },
    );
    expect(issued).toBe(500);
    expect(Object.values(answers).reduce((a, b) => a + b, 0)).toBe(500);
    expect(answers['503 overload']).toBe(50);
    expect(answers['200']).toBe(450);
    expect(seen.maxInFlightOnOne).toBe(1);
    expect(new Set(seen.paths.slice(8)).size).toBe(500);
  });
});
