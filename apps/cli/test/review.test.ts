import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createOpenEvent, createTestDatabase, testSecrets, type TestDatabase } from '@onsale/shared/testing';
import { EventCache } from '@onsale/shared/allocations';
import { HoldService, SeatmapCache } from '@onsale/shared/inventory';
import { CardFingerprints, CheckoutService, SimulatedPaymentGateway } from '@onsale/shared/checkout';
import { deviceFingerprint } from '@onsale/shared/abuse';
import { onsale } from './run.js';

// A sold-out event of 20 seats bought by: a card ring (three accounts, one card, numbered ids), two accounts on one
// tablet, and five fans with nothing in common.
let t: TestDatabase;
let eventId: string;

const BUYERS: { account: string; card: string; device: string }[] = [
  { account: 'scalper-01', card: '5555555555554444', device: 'ring-phone-1' },
  { account: 'scalper-02', card: '5555555555554444', device: 'ring-phone-2' },
  { account: 'scalper-03', card: '5555555555554444', device: 'ring-phone-3' },
  { account: 'mia', card: '4000056655665556', device: 'shared-tablet' },
  { account: 'noah', card: '6011111111111117', device: 'shared-tablet' },
  { account: 'alice', card: '378282246310005', device: 'alice-phone' },
  { account: 'bob', card: '4242424242424242', device: 'bob-phone' },
  { account: 'carol', card: '3056930009020004', device: 'carol-phone' },
  { account: 'dave', card: '4111111111111111', device: 'dave-phone' },
  { account: 'erin', card: '5105105105105100', device: 'erin-phone' },
];

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 6 });
  ({ eventId } = await createOpenEvent(t.db, {
    name: 'Review night',
    limits: { perAccountSeats: 2, perInstrumentSeats: 10, perDeviceSeats: 10 },
  }));
  const holds = new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db) });
  const checkout = new CheckoutService({
    db: t.db,
    cards: new CardFingerprints(testSecrets().cardFingerprintSecret),
    payments: new SimulatedPaymentGateway({ tps: 1000, latencyMs: 0, failureRate: 0 }),
  });
  const { rows: seats } = await sql<{
    id: string;
  }>`SELECT id FROM seats WHERE event_id = ${eventId} ORDER BY row_index, seat_number`.execute(t.db);
  for (const [i, b] of BUYERS.entries()) {
    const seatIds = [Number(seats[2 * i]!.id), Number(seats[2 * i + 1]!.id)];
    const hold = await holds.create(b.account, eventId, { seatIds }, { deviceHash: deviceFingerprint(b.device) });
    await checkout.checkout(b.account, hold.holdId, `pay-${b.account}`, { payment: { instrument: { type: 'card', number: b.card } } });
  }
  // The controller saw the sell-out: seats that come back now go to the waitlist.
  await sql`UPDATE queue_state SET sold_out_at = now(), inventory_state = 'SOLD_OUT' WHERE event_id = ${eventId}`.execute(t.db);
});
afterAll(() => t?.drop());

interface Cluster {
  id: string;
  accounts: string[];
  signals: string[];
  seats: number;
  orders: { orderId: string }[];
  evidence: { signal: string; accounts: string[] }[];
}
const review = async (...args: string[]) => {
  const r = await onsale(t.url, 'review', eventId, '--format', 'json', ...args);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { confirmedOrders: number; clusters: Cluster[] };
};

describe('onsale review', () => {
  it('clusters orders by shared card, device and id sequence, with the evidence', async () => {
    const json = await onsale(t.url, 'review', eventId, '--format', 'json');
    expect(json.code, json.stderr).toBe(0);
    const r = JSON.parse(json.stdout) as { confirmedOrders: number; clusters: Cluster[] };
    expect(r.confirmedOrders).toBe(10);
    expect(r.clusters.map((c) => c.accounts)).toEqual([
      ['scalper-01', 'scalper-02', 'scalper-03'],
      ['mia', 'noah'],
    ]);
    const [ring, tablet] = r.clusters as [Cluster, Cluster];
    expect(ring.signals).toEqual(['ACCOUNT_SEQUENCE', 'INSTRUMENT']);
    expect(ring.seats).toBe(6);
    expect(ring.evidence.find((e) => e.signal === 'INSTRUMENT')!.accounts).toEqual(['scalper-01', 'scalper-02', 'scalper-03']);
    expect(tablet.signals).toEqual(['DEVICE']);

    const text = await onsale(t.url, 'review', eventId);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('10 confirmed orders; 2 clusters with 5 orders and 10 seats');
    expect(text.stdout).toContain(`cluster ${ring.id}: 3 accounts, 3 orders, 6 seats`);
    expect(text.stdout).toMatch(/INSTRUMENT\s+card [0-9a-f]{12}…: scalper-01, scalper-02, scalper-03 \(3 orders\)/);
    expect(text.stdout).toMatch(/DEVICE\s+device [0-9a-f]{12}…: mia, noah/);
    expect(text.stdout).toContain(`--cancel ${ring.id} --reason`);
  });

  it('refuses a cancel without a reason, or of a cluster it does not print now, and changes nothing', async () => {
    const [ring] = (await review()).clusters as [Cluster];
    expect((await onsale(t.url, 'review', eventId, '--cancel', ring.id)).code).toBe(2);
    expect((await onsale(t.url, 'review', eventId, '--cancel', ring.id, '--reason', '  ')).code).toBe(2);
    expect((await onsale(t.url, 'review', eventId, '--reason', 'why')).code).toBe(2);
    expect((await onsale(t.url, 'review', eventId, '--format', 'yaml')).code).toBe(2);
    const unknown = await onsale(t.url, 'review', eventId, '--cancel', 'c0000000000', '--reason', 'card ring');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('CLUSTER_NOT_FOUND');
    // With other clustering flags the ring has other members, so its id is not the one printed: not found either.
    const otherRule = await onsale(t.url, 'review', eventId, '--cancel', ring.id, '--reason', 'x', '--created-within', '3600');
    expect(otherRule.stderr).toContain('CLUSTER_NOT_FOUND');
    const missing = await onsale(t.url, 'review', '00000000-0000-4000-8000-000000000000');
    expect([missing.code, missing.stderr.includes('EVENT_NOT_FOUND')]).toEqual([1, true]);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM orders WHERE status = 'CANCELLED'`.execute(t.db);
    expect(rows[0]!.n).toBe(0);
  });

  it('--cancel cancels the cluster through cancelOrder: audited with the reason, seats to the waitlist', async () => {
    const [ring] = (await review()).clusters as [Cluster];
    const r = await onsale(
      t.url,
      'review',
      eventId,
      '--cancel',
      ring.id,
      '--reason',
      'one card across three accounts',
      '--actor',
      'trust@test',
      '--format',
      'json',
    );
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ clusterId: ring.id, seatsReturned: 6, skipped: [] });
    expect(out.cancelled.map((c: { accountId: string }) => c.accountId)).toEqual(['scalper-01', 'scalper-02', 'scalper-03']);
    for (const c of out.cancelled) expect(c.toWaitlist).toBe(true);

    const orders = await sql<{
      account_id: string;
      status: string;
    }>`SELECT account_id, status FROM orders WHERE event_id = ${eventId} ORDER BY account_id`.execute(t.db);
    for (const o of orders.rows) expect(o.status, o.account_id).toBe(o.account_id.startsWith('scalper-') ? 'CANCELLED' : 'CONFIRMED');
    const audit = await sql<{ actor: string; action: string; reason: string }>`
      SELECT actor, action, details->>'reason' AS reason FROM audit_log WHERE event_id = ${eventId} AND action IN ('order.cancel', 'review.cancel_cluster') ORDER BY id`.execute(
      t.db,
    );
    expect(audit.rows.map((a) => a.action)).toEqual(['order.cancel', 'order.cancel', 'order.cancel', 'review.cancel_cluster']);
    for (const a of audit.rows) expect([a.actor, a.reason.startsWith('one card across three accounts')]).toEqual(['trust@test', true]);
    // The seats went to the waitlist's pool, not back on open sale.
    const seats = await sql<{ status: string; n: number }>`
      SELECT h.status, count(*)::int AS n FROM seats s JOIN holds h ON h.id = s.hold_id WHERE s.event_id = ${eventId} AND h.status = 'WAITLIST' GROUP BY h.status`.execute(
      t.db,
    );
    expect(seats.rows).toEqual([{ status: 'WAITLIST', n: 6 }]);
    const available = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM seats WHERE event_id = ${eventId} AND status = 'AVAILABLE'`.execute(t.db);
    expect(available.rows[0]!.n).toBe(0);

    // The review now shows what is left; the cancelled cluster cannot be cancelled twice.
    expect((await review()).clusters.map((c) => c.accounts)).toEqual([['mia', 'noah']]);
    const again = await onsale(t.url, 'review', eventId, '--cancel', ring.id, '--reason', 'again');
    expect(again.stderr).toContain('CLUSTER_NOT_FOUND');
  });
});
