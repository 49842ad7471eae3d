// A stand-in for the product, for `npm run bench -- driver`: answers each of the crowd's requests at once, with
// bodies of the real routes' shape and size (the stadium's seat map of 153 sections, a section's 400 seats), so the
// driver's own CPU a request can be measured apart from a product's. Run in a process of its own (its CPU is not the
// driver's); prints its port on stdout.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Section {
  code: string;
  name: string;
  priceLevel: string;
  qualityRank: number;
  rowCount: number;
  seatsPerRow: number;
}

const file = process.argv[2]!;
const { readFileSync } = await import('node:fs');
const spec = JSON.parse(readFileSync(file, 'utf8')) as { sections: Section[] };
/** Polls a fan makes before its turn comes. */
const pollsBeforeTurn = Number(process.argv[3] ?? 4);

const sections = spec.sections.map((s) => ({
  code: s.code,
  name: s.name,
  kind: 'RESERVED',
  priceLevel: s.priceLevel,
  priceCents: 6900,
  qualityRank: s.qualityRank,
  capacity: s.rowCount * s.seatsPerRow,
  available: Math.floor((s.rowCount * s.seatsPerRow) / 2),
  held: 10,
  sold: Math.floor((s.rowCount * s.seatsPerRow) / 2) - 10,
}));
const seatmap = JSON.stringify({ eventId: 'e', generatedAt: new Date().toISOString(), sections });
const seatLists = new Map<string, string>();
let seatId = 1;
for (const s of spec.sections) {
  const seats: { id: number; row: string; number: number; available: boolean }[] = [];
  for (let r = 0; r < s.rowCount; r++)
    for (let n = 1; n <= s.seatsPerRow; n++)
      seats.push({ id: seatId++, row: String.fromCharCode(65 + r), number: n, available: (r + n) % 3 !== 0 });
  seatLists.set(s.code, JSON.stringify({ eventId: 'e', section: s.code, generatedAt: new Date().toISOString(), seats }));
}

const polls = new Map<string, number>();
let tokens = 0;
let holds = 0;
let orders = 0;
let nextSeat = 1;
let botJoins = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const url = req.url ?? '';
    const json = (status: number, body: string, retryAfter?: number) => {
      res.statusCode = status;
      res.setHeader('content-type', 'application/json; charset=utf-8');
      if (retryAfter !== undefined) res.setHeader('retry-after', String(retryAfter));
      res.end(body);
    };
    if (req.method === 'POST' && url.endsWith('/queue')) {
      const bot = (req.headers['user-agent'] ?? '').startsWith('python');
      // One bot in ten is asked a proof-of-work on its first join (difficulty 8), about the share of the stadium's joins
      // the product challenged (196 of 27,002 on 2026-12-07).
      if (bot && !req.headers['x-proof-of-work'] && ++botJoins % 10 === 0)
        return json(
          403,
          JSON.stringify({
            error: 'CHALLENGE_REQUIRED',
            message: 'solve it',
            challenge: { token: `c${tokens}`, nonce: `n${tokens}`, difficulty: 8 },
          }),
        );
      const t = `q${++tokens}.${'x'.repeat(120)}`;
      polls.set(t, 0);
      return json(200, JSON.stringify({ queueToken: t, cohort: 'PREOPEN', position: null, state: 'WAITING' }), 1);
    }
    if (req.method === 'GET' && url.endsWith('/queue/status')) {
      const t = String(req.headers['x-queue-token'] ?? '');
      const n = (polls.get(t) ?? 0) + 1;
      polls.set(t, n);
      res.setHeader('x-onsale-edge', 'hit');
      if (n > pollsBeforeTurn)
        return json(200, JSON.stringify({ state: 'ADMITTED', position: 0, admissionToken: `a.${'y'.repeat(160)}` }), 1);
      return json(200, JSON.stringify({ state: 'WAITING', position: 1000 - n * 100 }), 1);
    }
    if (req.method === 'GET' && url.endsWith('/seatmap')) return json(200, seatmap);
    const list = /\/sections\/([^/]+)\/seats$/.exec(url);
    if (req.method === 'GET' && list) return json(200, seatLists.get(list[1]!) ?? '{"seats":[]}');
    if (req.method === 'POST' && url.endsWith('/holds')) {
      const b = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { quantity?: number; seatIds?: number[] };
      const q = b.seatIds?.length ?? b.quantity ?? 1;
      const seats = Array.from({ length: q }, () => ({ seatId: nextSeat++, section: 'F1L', row: 'A', number: 1, priceCents: 6900 }));
      return json(
        201,
        JSON.stringify({
          holdId: `h${++holds}`,
          seats,
          expiresAt: new Date(Date.now() + 12_000).toISOString(),
          admissionToken: `a.${'z'.repeat(160)}`,
        }),
      );
    }
    if (req.method === 'POST' && url.endsWith('/extend'))
      return json(200, JSON.stringify({ expiresAt: new Date(Date.now() + 6000).toISOString() }));
    if (req.method === 'POST' && url.endsWith('/checkout')) {
      const body = Buffer.concat(chunks).toString('utf8');
      if (body.includes('4000000000000002')) return json(402, JSON.stringify({ error: 'PAYMENT_DECLINED', message: 'declined' }));
      return json(200, JSON.stringify({ orderId: `o${++orders}`, state: 'CONFIRMED', seatCount: 2, totalCents: 13800 }));
    }
    if (req.method === 'PUT' && url.includes('/waitlist')) return json(200, JSON.stringify({ state: 'WAITING' }));
    json(404, JSON.stringify({ error: 'NOT_FOUND', message: url }));
  });
});
server.keepAliveTimeout = 120_000;
server.listen(Number(process.argv[4] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
