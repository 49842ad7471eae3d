import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createOpenEvent, createTestDatabase, waitUntil, type TestDatabase } from '../testing/index.js';
import { startWorker, type BackgroundWorker } from '../jobs/worker.js';
import { addWebhookEndpoint } from '../notify/index.js';
import { emitAvailability, type ReturnedSeat } from './availability.js';
import { WaitlistService } from './waitlist.service.js';

const root = join(import.meta.dirname, '..', '..', '..', '..');
let t: TestDatabase;
let sink: Server;
let sinkUrl: string;
const received: number[] = [];

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  sink = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      for (const n of (JSON.parse(body) as { notifications: { id: number }[] }).notifications) received.push(n.id);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  sinkUrl = `http://127.0.0.1:${(sink.address() as { port: number }).port}/hook`;
});
afterAll(async () => {
  sink.close();
  await t.drop();
});

function spawnWorker(): Promise<ChildProcess> {
  // node itself (not the tsx wrapper, whose child would outlive a SIGKILL): the pid killed is the worker's.
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'packages/shared/src/testing/fanout-worker.ts')], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: t.url, PAGE_SIZE: '50', PAGE_PAUSE_MS: '150' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve(child));
    child.on('exit', (code) => reject(new Error(`worker exited with ${code}`)));
  });
}

describe('a batch fan-out interrupted by a killed worker', () => {
  it('killed between pages, resumes in another worker without a duplicate or a gap, in FIFO order, in the inbox and at the webhook', async () => {
    const { eventId } = await createOpenEvent(t.db, { name: 'Crash' });
    const { listing_id: listingId } = await t.db
      .selectFrom('events')
      .select('listing_id')
      .where('id', '=', eventId)
      .executeTakeFirstOrThrow();
    await sql`UPDATE listings SET fanout_inline_threshold = 40 WHERE id = ${listingId}`.execute(t.db);
    const waitlist = new WaitlistService(t.db);
    await Promise.all(Array.from({ length: 600 }, (_, i) => waitlist.join(`crash-${i}`, listingId, {})));
    await addWebhookEndpoint(t.db, { url: sinkUrl, listingId }, { outbound: { allowHosts: ['127.0.0.1'] } });

    const first = await spawnWorker();
    const seat =
      await sql<ReturnedSeat>`SELECT id, section_code AS "sectionCode", row_index AS "rowIndex", seat_number AS "seatNumber" FROM seats WHERE event_id = ${eventId} LIMIT 1`.execute(
        t.db,
      );
    const av = (await t.db
      .transaction()
      .execute((trx) => emitAvailability(trx, eventId, 'HOLD_RELEASED', [{ ...seat.rows[0]!, id: Number(seat.rows[0]!.id) }])))!;

    // Kill it once a few pages have committed, well before the end.
    await waitUntil('a few pages committed', async () => {
      const r = await t.db
        .selectFrom('availability_events')
        .select('notified')
        .where('id', '=', av.availabilityId as never)
        .executeTakeFirstOrThrow();
      return r.notified >= 150;
    });
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    // It is gone: no process of it is left to finish the work.
    expect(() => process.kill(first.pid!, 0)).toThrow();
    const mid = await t.db
      .selectFrom('availability_events')
      .select(['status', 'notified'])
      .where('id', '=', av.availabilityId as never)
      .executeTakeFirstOrThrow();
    expect(mid.status).toBe('FANNING_OUT');
    expect(mid.notified).toBeLessThan(600);
    // Killed between pages k and k+1 of 12: a page commits its notifications and the cursor together, so what
    // was committed is always whole pages (a page in flight at the kill rolled back whole).
    expect(mid.notified % 50).toBe(0);
    expect(mid.notified).toBeGreaterThanOrEqual(150);

    // Another worker takes over: it releases the dead worker's locked job and the fan-out resumes from its cursor.
    let second: BackgroundWorker | undefined;
    try {
      second = await startWorker({
        connectionString: t.url,
        db: t.db,
        concurrency: 4,
        admission: false,
        claimTokenSecret: 'crash-test-secret',
        liveness: { heartbeatMs: 200, deadAfterMs: 1500 },
        outbound: { allowHosts: ['127.0.0.1'] },
      });
      await waitUntil('the fan-out done', async () => {
        const r = await t.db
          .selectFrom('availability_events')
          .select(['status', 'notified'])
          .where('id', '=', av.availabilityId as never)
          .executeTakeFirstOrThrow();
        return r.status === 'DONE' && r.notified === 600;
      });
      // Received at the sink is not yet recorded as delivered: wait for the worker to record every delivery too.
      await waitUntil('every delivery recorded', async () => {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'DELIVERED'`.execute(
          t.db,
        );
        return new Set(received).size >= 600 && rows[0]!.n === 0;
      });
    } finally {
      await second?.stop();
    }

    const { rows } = await sql<{ n: number; entries: number }>`
      SELECT count(*)::int AS n, count(DISTINCT entry_id)::int AS entries FROM notifications WHERE availability_id = ${av.availabilityId}`.execute(
      t.db,
    );
    expect(rows[0]).toEqual({ n: 600, entries: 600 });
    // No gap and FIFO across the kill: the notifications, in the order they were made, are every entry of the
    // waitlist in its order (created_at, then id), each once.
    const made = await sql<{
      entry_id: number;
    }>`SELECT entry_id FROM notifications WHERE availability_id = ${av.availabilityId} ORDER BY id`.execute(t.db);
    const line = await sql<{
      id: number;
    }>`SELECT id FROM waitlist_entries WHERE listing_id = ${listingId} ORDER BY created_at, id`.execute(t.db);
    expect(made.rows.map((r) => Number(r.entry_id))).toEqual(line.rows.map((r) => Number(r.id)));
    // Every notification is in exactly one webhook delivery, and every delivery was made.
    const { rows: d } = await sql<{ ids: number; distinct_ids: number; undelivered: number }>`
      SELECT count(*)::int AS ids, count(DISTINCT x)::int AS distinct_ids,
             (SELECT count(*)::int FROM webhook_deliveries WHERE status <> 'DELIVERED') AS undelivered
      FROM webhook_deliveries, unnest(notification_ids) AS x`.execute(t.db);
    expect(d[0]).toEqual({ ids: 600, distinct_ids: 600, undelivered: 0 });
    expect(new Set(received).size).toBe(600);
  });
});
