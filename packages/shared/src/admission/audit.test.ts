import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DomainError } from '../errors.js';
import { parseEventFile } from '../events/index.js';
import { createEvent } from '../sale-setup/index.js';
import { generateSeed } from '../queue/fairness.js';
import { createTestDatabase, manualClock, type TestDatabase } from '../testing/index.js';
import { auditSummary, publishedJoinList, verifyPublishedCohort, verifyQueueAudit } from './audit.js';
import { AdmissionController } from './controller.js';
import { pauseQueue, resumeQueue, setRateOverride } from './operator.js';

let t: TestDatabase;
let controller: AdmissionController;
/** The controller's clock: the test moves it between ticks. */
const clock = manualClock();

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  controller = new AdmissionController({ db: t.db, connectionString: t.url, tickMs: 200, instanceId: 'audit-test', clock: clock.now });
});
afterAll(async () => {
  await controller.stop();
  await t.drop();
});

async function makeEvent(name: string): Promise<string> {
  const spec = parseEventFile({
    name,
    venueName: 'Arena',
    startsAt: new Date(Date.now() + 86_400_000).toISOString(),
    onsaleAt: new Date(Date.now() - 1000).toISOString(),
    priceLevels: [{ code: 'P', name: 'All', priceCents: 1000 }],
    sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 10, seatsPerRow: 10 }],
  });
  const { eventId } = await t.db.transaction().execute((trx) => createEvent(trx, spec, 'test', { signOff: true }));
  // The controller's clock catches up with the wall clock the event was made by (its open has passed).
  clock.set(Math.max(clock.now(), Date.now()));
  return eventId;
}

/** n pre-open joins straight into the table, join indexes 0..n-1 except `skip`. */
async function preopenJoins(eventId: string, n: number, skip: number[] = []): Promise<void> {
  await sql`INSERT INTO accounts (id) SELECT 'fan-' || g FROM generate_series(0, ${n - 1}::int) g ON CONFLICT DO NOTHING`.execute(t.db);
  await sql`
    INSERT INTO queue_entries (event_id, account_id, device_hash, join_index, cohort, joined_at)
    SELECT ${eventId}, 'fan-' || g, md5(g::text), g, 'PREOPEN', now() - interval '1 hour'
    FROM generate_series(0, ${n - 1}::int) g WHERE g <> ALL(${skip}::int[])`.execute(t.db);
}

function spearman(pairs: { joinIndex: number; position: number }[]): number {
  const n = pairs.length;
  let d2 = 0;
  for (const p of pairs) d2 += (p.joinIndex + 1 - p.position) ** 2; // both are ranks: join order and queue position
  return 1 - (6 * d2) / (n * (n * n - 1));
}

describe('the fairness audit', () => {
  let eventId: string;
  beforeAll(async () => {
    eventId = await makeEvent('Ten thousand');
    await preopenJoins(eventId, 10_000);
    await controller.tickOnce(); // the open has passed: the first tick seals the cohort and reveals the seed
  });

  it('10,000 pre-open joins: verified from the public data, a permutation of 1..10000 uncorrelated with join order', async () => {
    const result = await verifyQueueAudit(t.db, eventId);
    expect(result.checks.filter((c) => !c.ok)).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.cohortSize).toBe(10_000);
    expect(result.unheldPositions).toBe(0);
    expect(result.checks.map((c) => c.name)).toEqual([
      'seed_revealed',
      'commitment',
      'cohort_sealed',
      'join_list',
      'permutation',
      'positions',
    ]);
    expect(result.positions).toHaveLength(10_000);
    const sorted = result.positions.map((p) => p.position).sort((a, b) => a - b);
    expect(sorted.every((p, i) => p === i + 1)).toBe(true);
    const rho = spearman(result.positions);
    expect(Math.abs(rho)).toBeLessThan(0.05);
    // A fan finds themselves by their pseudonym: SHA-256 of event id + account id.
    const mine = createHash('sha256').update(`${eventId}fan-42`).digest('hex');
    expect(result.positions.find((p) => p.account === mine)).toMatchObject({ joinIndex: 42 });
  });

  it('the join list publishes pseudonyms, never account ids', async () => {
    const list = await publishedJoinList(t.db, eventId);
    expect(list).toHaveLength(10_000);
    expect(list[0]).toEqual({ account: createHash('sha256').update(`${eventId}fan-0`).digest('hex'), joinIndex: 0 });
    expect(JSON.stringify(list.slice(0, 100))).not.toContain('fan-');
  });

  it('a tampered seed fails the commitment check', async () => {
    await sql`UPDATE queue_state SET seed_hex = ${generateSeed()} WHERE event_id = ${eventId}`.execute(t.db);
    const result = await verifyQueueAudit(t.db, eventId);
    expect(result.ok).toBe(false);
    expect(result.checks.find((c) => c.name === 'commitment')).toMatchObject({ ok: false });
    expect(result.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(['commitment']);
  });
});

describe('the fairness audit, edge cases', () => {
  it('before the reveal it cannot verify, and says so', async () => {
    const eventId = await makeEvent('Not yet');
    await sql`UPDATE events SET onsale_at = now() + interval '1 hour' WHERE id = ${eventId}`.execute(t.db);
    const result = await verifyQueueAudit(t.db, eventId);
    expect(result).toMatchObject({ ok: false, positions: [], cohortSize: null });
    expect(result.checks).toEqual([expect.objectContaining({ name: 'seed_revealed', ok: false })]);
  });

  it('a join number nobody holds (a repeated join uses one up) leaves a position unheld, and the audit still holds', async () => {
    const eventId = await makeEvent('Gaps');
    await preopenJoins(eventId, 50, [3, 17]);
    await controller.tickOnce();
    const result = await verifyQueueAudit(t.db, eventId);
    expect(result).toMatchObject({ ok: true, cohortSize: 50, unheldPositions: 2 });
    expect(result.positions).toHaveLength(48);
    expect(new Set(result.positions.map((p) => p.position)).size).toBe(48);
  });

  it('from data alone: a duplicated join index or an index outside the cohort fails the join list', async () => {
    const seed = '00'.repeat(32);
    const base = {
      eventId: 'x',
      fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO',
      seedCommitment: '66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925',
      seed,
      seedRevealedAt: null,
      cohortSize: 10,
    };
    const ok = await verifyPublishedCohort({ ...base, joins: Array.from({ length: 10 }, (_, i) => ({ account: `a${i}`, joinIndex: i })) });
    expect(ok.ok).toBe(true);
    // The published recipe's test vector: seed of zeros, n = 10.
    expect(ok.positions.map((p) => p.position - 1)).toEqual([2, 4, 9, 8, 6, 1, 3, 0, 5, 7]);
    const bad = await verifyPublishedCohort({
      ...base,
      joins: [
        { account: 'a', joinIndex: 1 },
        { account: 'b', joinIndex: 1 },
        { account: 'c', joinIndex: 10 },
      ],
    });
    expect(bad.ok).toBe(false);
    expect(bad.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(['join_list', 'positions']);
  });

  it('an unknown event is EVENT_NOT_FOUND', async () => {
    await expect(verifyQueueAudit(t.db, '00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ code: 'EVENT_NOT_FOUND' });
    await expect(auditSummary(t.db, 'nope')).rejects.toBeInstanceOf(DomainError);
  });
});

describe('the publishable summary', () => {
  it('carries the mode in plain words, commitment and reveal, admissions per minute, pauses and overrides with who and why, and sell-out', async () => {
    const eventId = await makeEvent('Summer | Night');
    await preopenJoins(eventId, 30);
    await setRateOverride(t.db, eventId, 1200, { actor: 'ops:alice', reason: 'warm-up' });
    await controller.tickOnce();
    clock.advance(300);
    await controller.tickOnce();
    await pauseQueue(t.db, eventId, { actor: 'ops:bob', reason: 'payments | degraded' });
    await resumeQueue(t.db, eventId, { actor: 'ops:bob' });
    await setRateOverride(t.db, eventId, null, { actor: 'ops:alice' });
    await pauseQueue(t.db, eventId, { actor: 'ops:carol', reason: 'bot wave' });
    await sql`UPDATE seats SET status = 'SOLD', hold_id = gen_random_uuid() WHERE event_id = ${eventId}`.execute(t.db);
    await resumeQueue(t.db, eventId, { actor: 'ops:carol' });
    await controller.tickOnce();

    const { json, markdown } = await auditSummary(t.db, eventId);
    const q = await t.db.selectFrom('queue_state').selectAll().where('event_id', '=', eventId).executeTakeFirstOrThrow();
    expect(json.fairness).toMatchObject({
      mode: 'RANDOMIZED_PREOPEN_THEN_FIFO',
      seedCommitment: q.seed_commitment,
      seed: q.seed_hex,
      seedRevealedAt: q.seed_revealed_at!.toISOString(),
      cohortSize: 30,
    });
    expect(json.fairness.description).toMatch(/random order/);
    expect(json.admissions.perMinute.length).toBeGreaterThanOrEqual(1);
    expect(json.admissions.totalPositionsAdvanced).toBe(q.admitted_through);
    expect(json.pauses).toEqual([
      expect.objectContaining({
        pausedBy: 'ops:bob',
        reason: 'payments | degraded',
        resumedBy: 'ops:bob',
        pausedSeconds: expect.any(Number),
      }),
      expect.objectContaining({ pausedBy: 'ops:carol', reason: 'bot wave', resumedBy: 'ops:carol' }),
    ]);
    expect(json.rateOverrides).toEqual([
      expect.objectContaining({ by: 'ops:alice', perMinute: 1200, previousPerMinute: null, reason: 'warm-up' }),
      expect.objectContaining({ by: 'ops:alice', perMinute: null, previousPerMinute: 1200, reason: null }),
    ]);
    expect(json.configurationChanges.map((c) => c.action)).toEqual(['event.created', 'event.fairness_signed_off']);
    expect(json.soldOutAt).toBe(q.sold_out_at!.toISOString());

    expect(markdown).toContain('# On-sale summary: Summer | Night');
    expect(markdown).toContain(q.seed_commitment);
    expect(markdown).toContain(q.seed_hex);
    expect(markdown).toContain('## Admissions per minute');
    expect(markdown).toContain('payments \\| degraded'); // pipes in table cells are escaped
    expect(markdown).toContain('ops:carol');
    expect(markdown).toContain(`Sold out at ${json.soldOutAt}`);
  });

  it('before the open the seed stays out of the summary', async () => {
    const eventId = await makeEvent('Later');
    await sql`UPDATE events SET onsale_at = now() + interval '1 hour' WHERE id = ${eventId}`.execute(t.db);
    const { json, markdown } = await auditSummary(t.db, eventId);
    const q = await t.db.selectFrom('queue_state').select('seed_hex').where('event_id', '=', eventId).executeTakeFirstOrThrow();
    expect(json.fairness.seed).toBeNull();
    expect(markdown).not.toContain(q.seed_hex);
    expect(markdown).toContain('not revealed yet');
    expect(markdown).toContain('The queue was never paused.');
  });
});
