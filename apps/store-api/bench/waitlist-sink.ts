import http from 'node:http';
import { SIGNATURE_HEADER, verifyWebhookSignature } from '@onsale/shared/notify';

// A local webhook receiver for `npm run bench -- waitlist`: checks each body's signature, counts the notifications it
// carries (and any duplicate), answers 200 at once. GET /stats reports the counts and, in epoch milliseconds,
// when the first request arrived and when the SINK_EXPECT-th distinct notification did.
const secret = process.env.SINK_SECRET ?? '';
const expect = Number(process.env.SINK_EXPECT ?? 0);

const ids = new Set<number>();
const deliveries = new Set<number>();
const kinds: Record<string, number> = {};
const listings: Record<string, number> = {};
let requests = 0;
let bytes = 0;
let notifications = 0;
let duplicateNotifications = 0;
let duplicateDeliveries = 0;
let badSignatures = 0;
let badBodies = 0;
let firstAt = 0;
let lastAt = 0;
let reachedAt = 0;

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        requests,
        bytes,
        notifications,
        distinctNotifications: ids.size,
        duplicateNotifications,
        distinctDeliveries: deliveries.size,
        duplicateDeliveries,
        badSignatures,
        badBodies,
        kinds,
        listings,
        firstAt,
        lastAt,
        reachedAt,
      }),
    );
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    const now = Date.now();
    requests++;
    bytes += raw.length;
    firstAt ||= now;
    lastAt = now;
    const header = req.headers[SIGNATURE_HEADER.toLowerCase()];
    if (!verifyWebhookSignature(secret, typeof header === 'string' ? header : undefined, raw)) badSignatures++;
    try {
      const body = JSON.parse(raw.toString('utf8')) as {
        deliveryId: number;
        notifications: { id: number; kind: string; listingId: string }[];
      };
      if (deliveries.has(body.deliveryId)) duplicateDeliveries++;
      deliveries.add(body.deliveryId);
      for (const n of body.notifications) {
        if (ids.has(n.id)) duplicateNotifications++;
        else ids.add(n.id);
        kinds[n.kind] = (kinds[n.kind] ?? 0) + 1;
        listings[n.listingId] = (listings[n.listingId] ?? 0) + 1;
      }
      notifications += body.notifications.length;
      if (expect > 0 && !reachedAt && ids.size >= expect) reachedAt = now;
    } catch {
      badBodies++;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"received":true}');
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`READY ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
});
// Keep-alive sockets from the worker would hold close() open: stop listening and leave.
process.on('SIGTERM', () => {
  server.close();
  process.exit(0);
});
