import net from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFramingGuard } from '../src/framing-guard.js';

// The guard writes to a socket's handle directly while nothing is queued on it, and through the socket otherwise: an
// answer larger than every buffer between the guard and a client that is not reading has to wait in the guard (its
// write not taken whole by the kernel), the guard stops reading the other side meanwhile, and every byte still arrives
// in order, then the next request on the same connection is answered.

const BIG = 32 * 1024 * 1024;
let target: net.Server;
let guard: net.Server & { destroyConnections(): void };
let answering: net.Socket | undefined;
const body = Buffer.alloc(BIG);
for (let i = 0; i < BIG; i++) body[i] = (i * 7 + (i >> 13)) & 0xff;

beforeAll(async () => {
  target = net.createServer((s) => {
    answering = s;
    let got = '';
    s.on('data', (d) => {
      got += d.toString('latin1');
      for (let end = got.indexOf('\r\n\r\n'); end >= 0; end = got.indexOf('\r\n\r\n')) {
        const head = got.slice(0, end);
        got = got.slice(end + 4);
        if (head.startsWith('GET /big ')) {
          s.write(`HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: ${BIG}\r\n\r\n`);
          s.write(body);
        } else s.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok');
      }
    });
  });
  target.listen(0, '127.0.0.1');
  await once(target, 'listening');
  guard = await startFramingGuard({ host: '127.0.0.1', port: 0, target: { port: (target.address() as net.AddressInfo).port } });
});

afterAll(async () => {
  guard?.destroyConnections();
  await new Promise((r) => guard?.close(r));
  await new Promise((r) => target?.close(r));
});

/** Resolves once `value()` has stayed the same for `polls` polls in a row (the bytes stopped moving). */
async function settled(value: () => number, polls = 20): Promise<void> {
  let last = -1;
  let same = 0;
  while (same < polls) {
    await new Promise((r) => setTimeout(r, 5));
    const v = value();
    same = v === last ? same + 1 : 0;
    last = v;
  }
}

describe('the framing guard when a client reads slower than the answer comes', () => {
  it('passes a 32 MB answer whole and in order to a client that paused, then answers its next request', async () => {
    const client = net.connect((guard.address() as net.AddressInfo).port, '127.0.0.1');
    await once(client, 'connect');
    client.pause();
    const chunks: Buffer[] = [];
    client.on('data', (d: Buffer) => chunks.push(d));
    client.write('GET /big HTTP/1.1\r\nHost: a\r\n\r\n');
    // The answer backs up to its sender: the guard stopped reading it while the client reads nothing.
    await settled(() => answering?.writableLength ?? -1);
    expect(answering!.writableLength).toBeGreaterThan(0);
    client.resume();
    const head = `HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: ${BIG}\r\n\r\n`;
    while (chunks.reduce((n, c) => n + c.length, 0) < head.length + BIG) await once(client, 'data');
    const all = Buffer.concat(chunks);
    expect(all.subarray(0, head.length).toString('latin1')).toBe(head);
    expect(all.length).toBe(head.length + BIG);
    expect(all.subarray(head.length).equals(body)).toBe(true);
    chunks.length = 0;
    client.write('GET /small HTTP/1.1\r\nHost: a\r\n\r\n');
    while (!Buffer.concat(chunks).toString('latin1').endsWith('\r\n\r\nok')) await once(client, 'data');
    expect(Buffer.concat(chunks).toString('latin1')).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    client.destroy();
  });
});
