import net from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalEdge, type LocalEdge } from '../src/local.js';

// The edge as `npm start -- --edge` runs it (the framing guard in front of `workerd serve`) closes a keep-alive
// connection that has been idle for about 5 s, and says nothing of it in its answers (no `Keep-Alive: timeout=`). A
// client that keeps idle connections longer races that close: its next request goes out on a socket the edge is
// closing and reads a closed socket. The rehearsal's driver keeps idle connections 4 s (DRIVER_KEEP_ALIVE_MS in
// apps/cli/src/rehearse/driver.ts) for this reason: if workerd's idle close ever moves, this test says so.

const BARE = 'export default { fetch() { return new Response("ok"); } };';
let edge: LocalEdge;

beforeAll(async () => {
  edge = await startLocalEdge({
    storeApiUrl: 'http://127.0.0.1:1',
    queueTokenSecret: 'x'.repeat(32),
    authSecret: 'y'.repeat(32),
    script: BARE,
    log: () => {},
  });
}, 60_000);

afterAll(async () => {
  await edge?.close();
});

describe('an idle keep-alive connection to the edge', () => {
  it('is kept for more than 4 s and closed by the edge within about 5 s, with no Keep-Alive hint', async () => {
    const { hostname, port } = new URL(edge.url);
    const socket = net.connect(Number(port), hostname);
    await once(socket, 'connect');
    let answer = '';
    const answered = new Promise<number>((resolve) =>
      socket.on('data', (d) => {
        answer += d.toString('latin1');
        if (answer.includes('\r\n\r\nok')) resolve(performance.now());
      }),
    );
    const closed = once(socket, 'close').then(() => performance.now());
    socket.write('GET / HTTP/1.1\r\nHost: edge\r\n\r\n');
    const idleFrom = await answered;
    const idleMs = (await closed) - idleFrom;
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer.toLowerCase()).not.toContain('keep-alive: timeout');
    // The driver's 4 s must be under the edge's idle close, with room for a request on the wire.
    expect(idleMs).toBeGreaterThan(4_500);
    expect(idleMs).toBeLessThan(15_000);
  }, 30_000);
});
