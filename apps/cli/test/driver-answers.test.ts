import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import { Crowd, send } from '../src/rehearse/driver.js';

describe("the driver's answers", () => {
  it('reads the two headers fans read in any case, and a body that comes in many chunks whole', async () => {
    const big = JSON.stringify({ sections: Array.from({ length: 2000 }, (_, k) => ({ code: `S${k}`, available: k })) });
    const server = createServer((req, res) => {
      if (req.url === '/big') {
        res.writeHead(200, { 'Content-Type': 'application/json', 'X-Onsale-Edge': 'hit' });
        // Written in pieces with a pause between, so the driver reads it in more than one chunk.
        res.write(big.slice(0, 1000));
        setImmediate(() => res.end(big.slice(1000)));
        return;
      }
      res.writeHead(503, { 'RETRY-AFTER': '7', 'content-type': 'application/json', 'x-other': 'no' });
      res.end('{"error":"SERVICE_UNAVAILABLE"}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 1 });
    try {
      const a = await send(pool, 'GET', '/big', {}, undefined);
      expect([a.status, a.edge, a.retryAfter]).toEqual([200, 'hit', undefined]);
      expect(a.text).toBe(big);
      const b = await send(pool, 'POST', '/busy', { 'content-type': 'application/json' }, '{}');
      expect([b.status, b.edge, b.retryAfter, b.text]).toEqual([503, undefined, '7', '{"error":"SERVICE_UNAVAILABLE"}']);
    } finally {
      await pool.close();
      await new Promise((r) => server.close(r));
    }
  });

  it('parses a seat map once for every fan given the same answer, and again when the answer changes', () => {
    const now = Date.now();
    const crowd = new Crowd({
      fansUrl: 'http://127.0.0.1:9',
      eventId: 'e',
      listingId: 'l',
      onsaleAtMs: now,
      startAtMs: now,
      fans: 1,
      timeScale: 30,
      botsShare: 0,
      abandon: 0,
      slowPayers: 0,
      failingPayers: 0,
      authSecret: 'a-test-secret-that-is-long-enough-0123456789',
      sections: [{ code: 'A', qualityRank: 1, capacity: 100 }],
      perAccountSeats: 4,
      ticketsPerOrder: 2,
      holdTtlSeconds: 12,
      checkoutMinutes: 0.2,
      preOpenMs: 300,
      preOpenShare: 1,
      tailMeanMs: 1000,
      pollBudgetPerSecond: 500,
      connections: 2,
      seed: 1,
      seatPickingOpensAtMs: now,
      pickers: 0,
      accountPrefix: 't',
      deadlineMs: 60_000,
    });
    type Parse = (kind: string, path: string, status: number, bytes: Buffer) => { sections?: { available: number }[] } | null;
    const parse = (crowd as unknown as { parse: Parse }).parse.bind(crowd);
    const map = (available: number) => Buffer.from(JSON.stringify({ sections: [{ code: 'A', available }] }));
    const first = parse('seat map', '/events/e/seatmap', 200, map(5));
    expect(first?.sections?.[0]?.available).toBe(5);
    // The same bytes (another fan's answer, another buffer): the same parsed body.
    expect(parse('seat map', '/events/e/seatmap', 200, map(5))).toBe(first);
    // A changed answer is read as it is, and is the one kept from then on.
    const changed = parse('seat map', '/events/e/seatmap', 200, map(4));
    expect(changed).not.toBe(first);
    expect(changed?.sections?.[0]?.available).toBe(4);
    expect(parse('seat map', '/events/e/seatmap', 200, map(4))).toBe(changed);
    // Another path (a section's seat list) is kept apart; a refusal and any other kind of request are parsed each time.
    expect(parse('seat map', '/events/e/sections/A/seats', 200, map(5))).not.toBe(first);
    const refused = Buffer.from('{"error":"SERVICE_UNAVAILABLE"}');
    expect(parse('seat map', '/events/e/seatmap', 503, refused)).not.toBe(parse('seat map', '/events/e/seatmap', 503, refused));
    expect(parse('hold', '/events/e/holds', 201, map(5))).not.toBe(parse('hold', '/events/e/holds', 201, map(5)));
    expect(parse('status', '/s', 200, Buffer.from('not json'))).toBeNull();
    expect(parse('status', '/s', 200, Buffer.alloc(0))).toBeNull();
  });
});
