import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TRPCError } from '@trpc/server';
import { DomainError } from '@onsale/shared';
import { pauseQueue, resumeQueue } from '@onsale/shared/admission';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { assignEventOrganisation, type ConsoleUser } from '@onsale/shared/users';
import { callerAs, seedUser } from './fixtures.js';

// The console's read-only reports through createCaller against real PostgreSQL: the fairness audit, the waitlist
// view and the audit log, with every role's view of them (a promoter only their organisation's).

let tdb: TestDatabase;
let admin: ConsoleUser;
let operator: ConsoleUser;
let viewer: ConsoleUser;
let acme: ConsoleUser;
let beta: ConsoleUser;
let acmeEventId: string;
let acmeListingId: string;
let betaEventId: string;
let betaListingId: string;
const COHORT = 400;

async function refusal(p: Promise<unknown>): Promise<{ code: string; domainCode: string | undefined }> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TRPCError);
    const cause = (err as TRPCError).cause;
    return { code: (err as TRPCError).code, domainCode: cause instanceof DomainError ? cause.code : undefined };
  }
  throw new Error('expected the call to be refused');
}

const listingOf = async (eventId: string) =>
  (await tdb.db.selectFrom('events').select('listing_id').where('id', '=', eventId).executeTakeFirstOrThrow()).listing_id;

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'));
  [admin, operator, viewer, acme, beta] = await Promise.all([
    seedUser(tdb.db, 'admin@reports.test', 'admin'),
    seedUser(tdb.db, 'operator@reports.test', 'operator'),
    seedUser(tdb.db, 'viewer@reports.test', 'viewer'),
    seedUser(tdb.db, 'promoter@acme.test', 'promoter', 'Acme Live'),
    seedUser(tdb.db, 'promoter@beta.test', 'promoter', 'Beta Presents'),
  ]);
  // Acme's promoter signs its fairness mode off below, before the open (an unsigned event does not open).
  ({ eventId: acmeEventId } = await createOpenEvent(tdb.db, { name: 'Acme Open Night' }, { signOff: false }));
  ({ eventId: betaEventId } = await createOpenEvent(tdb.db, { name: 'Beta Open Night' }));
  await tdb.db.transaction().execute(async (trx) => {
    await assignEventOrganisation(trx, acmeEventId, 'Acme Live', 'test');
    await assignEventOrganisation(trx, betaEventId, 'Beta Presents', 'test');
  });
  [acmeListingId, betaListingId] = [await listingOf(acmeEventId), await listingOf(betaEventId)];
  await callerAs(tdb.db, acme).eventConfig.signOffFairness({ eventId: acmeEventId, fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO' });

  // The open as the controller leaves it: a pre-open cohort, sealed, the seed revealed; two minutes of admissions.
  await sql`INSERT INTO accounts (id) SELECT 'fan-' || g FROM generate_series(0, ${COHORT - 1}::int) g`.execute(tdb.db);
  await sql`
    INSERT INTO queue_entries (event_id, account_id, device_hash, join_index, cohort, joined_at)
    SELECT ${acmeEventId}, 'fan-' || g, md5(g::text), g, 'PREOPEN', now() - interval '2 hours' FROM generate_series(0, ${COHORT - 1}::int) g`.execute(
    tdb.db,
  );
  await sql`UPDATE queue_state SET cohort_size = ${COHORT}, sealed_at = now() - interval '1 hour', seed_revealed_at = now() - interval '1 hour' WHERE event_id = ${acmeEventId}`.execute(
    tdb.db,
  );
  await sql`
    INSERT INTO admission_minutes (event_id, minute, watermark_advanced, admission_tokens_issued, rate_per_min)
    VALUES (${acmeEventId}, date_trunc('minute', now()) - interval '2 minutes', 120, 100, 120),
           (${acmeEventId}, date_trunc('minute', now()) - interval '1 minute', 130, 125, 130)`.execute(tdb.db);
  await pauseQueue(tdb.db, acmeEventId, { actor: 'operator@reports.test', reason: 'payment gateway degraded' });
  await resumeQueue(tdb.db, acmeEventId, { actor: 'operator@reports.test' });

  await sql`INSERT INTO waitlist_entries (listing_id, account_id, expires_at, quantity) VALUES (${acmeListingId}, 'fan-1', now() + interval '1 day', 2)`.execute(
    tdb.db,
  );
});

afterAll(async () => {
  await tdb?.drop();
});

describe('fairnessAudit.get', () => {
  it('gives the commitment, the reveal, a verified cohort, its position histogram, admissions per minute, pauses with who and why, the sign-off and the Markdown', async () => {
    const r = await callerAs(tdb.db, acme).fairnessAudit.get({ eventId: acmeEventId });
    expect(r.summary.fairness).toMatchObject({ mode: 'RANDOMIZED_PREOPEN_THEN_FIFO', cohortSize: COHORT });
    expect(r.summary.fairness.seedCommitment).toMatch(/^[0-9a-f]{64}$/);
    expect(r.summary.fairness.seed).toMatch(/^[0-9a-f]{64}$/);
    expect(r.verification.ok).toBe(true);
    expect(r.verification.checks.map((c) => c.name)).toEqual([
      'seed_revealed',
      'commitment',
      'cohort_sealed',
      'join_list',
      'permutation',
      'positions',
    ]);
    expect(r.histogram?.accounts).toBe(COHORT);
    expect(r.histogram?.buckets.reduce((a, b) => a + b.earlyJoiners + b.lateJoiners, 0)).toBe(COHORT);
    expect(r.summary.admissions.perMinute.map((m) => m.positionsAdvanced)).toEqual([120, 130]);
    // The promoter reads the publishable summary: when the queue stopped, not who paused it or why.
    expect(r.summary.pauses).toEqual([
      { pausedAt: expect.any(String), resumedAt: expect.any(String), pausedSeconds: expect.any(Number), note: null },
    ]);
    expect(r.operatorExport).toBeNull();
    expect(r.signOffs).toEqual([
      expect.objectContaining({ signedOffBy: 'promoter@acme.test', fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO', supersededAt: null }),
    ]);
    expect(r.published.markdown).toContain('# On-sale summary: Acme Open Night');
    expect(r.published.markdown).toContain(r.summary.fairness.seedCommitment);
    expect(r.published.markdown).not.toContain('payment gateway degraded');
    expect(JSON.stringify(r.summary)).not.toContain('operator@reports.test');
    // Admins and operators also get the complete operator export: who paused and why.
    const ops = await callerAs(tdb.db, admin).fairnessAudit.get({ eventId: acmeEventId });
    expect(ops.operatorExport?.json.pauses).toEqual([
      expect.objectContaining({
        pausedBy: 'operator@reports.test',
        reason: 'payment gateway degraded',
        resumedBy: 'operator@reports.test',
      }),
    ]);
    expect(ops.operatorExport?.markdown).toContain('payment gateway degraded');
  });

  it('before the open: the commitment only, no seed, no histogram', async () => {
    const { eventId } = await callerAs(tdb.db, admin).eventConfig.create({
      event: {
        name: 'Future Night',
        venueName: 'Hall',
        startsAt: '2040-06-01T19:00:00Z',
        onsaleAt: '2040-03-01T10:00:00Z',
        priceLevels: [{ code: 'P', name: 'All', priceCents: 100 }],
        sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 1, seatsPerRow: 5 }],
      },
    });
    const r = await callerAs(tdb.db, viewer).fairnessAudit.get({ eventId });
    expect(r.summary.fairness.seed).toBeNull();
    expect(r.histogram).toBeNull();
    expect(r.verification).toMatchObject({ ok: false, checks: [{ name: 'seed_revealed', ok: false }] });
    expect(r.published.markdown).toContain('not revealed yet');
  });

  it("is every reader's; another organisation's promoter is FORBIDDEN; an unknown event NOT_FOUND; the signed-out UNAUTHORIZED", async () => {
    for (const u of [admin, operator, viewer])
      expect((await callerAs(tdb.db, u).fairnessAudit.get({ eventId: acmeEventId })).summary.eventId).toBe(acmeEventId);
    expect(await refusal(callerAs(tdb.db, beta).fairnessAudit.get({ eventId: acmeEventId }))).toEqual({
      code: 'FORBIDDEN',
      domainCode: 'EVENT_FORBIDDEN',
    });
    expect(await refusal(callerAs(tdb.db, viewer).fairnessAudit.get({ eventId: '00000000-0000-4000-8000-000000000000' }))).toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(await refusal(callerAs(tdb.db, null).fairnessAudit.get({ eventId: acmeEventId }))).toMatchObject({ code: 'UNAUTHORIZED' });
  });
});

describe('waitlistReport.get', () => {
  it("reports a listing's waitlist to every reader; another organisation's promoter is FORBIDDEN", async () => {
    const r = await callerAs(tdb.db, acme).waitlistReport.get({ listingId: acmeListingId });
    expect(r.listing.id).toBe(acmeListingId);
    expect(r.entries.live).toBe(1);
    expect(typeof r.generatedAt).toBe('string');
    for (const u of [admin, operator, viewer])
      expect((await callerAs(tdb.db, u).waitlistReport.get({ listingId: betaListingId })).entries.live).toBe(0);
    expect(await refusal(callerAs(tdb.db, acme).waitlistReport.get({ listingId: betaListingId }))).toEqual({
      code: 'FORBIDDEN',
      domainCode: 'LISTING_FORBIDDEN',
    });
    expect(await refusal(callerAs(tdb.db, acme).waitlistReport.get({ listingId: 'nope' }))).toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('auditLog', () => {
  it('lists who changed what and when, newest first, filtered and paged', async () => {
    const all = await callerAs(tdb.db, admin).auditLog.list({ eventId: acmeEventId });
    expect(all.entries.map((e) => e.action)).toEqual([
      'queue.resumed',
      'queue.paused',
      'event.fairness_signed_off',
      'event.organisation_assigned',
      'event.created',
    ]);
    expect(all.entries[2]).toMatchObject({ actor: 'promoter@acme.test', eventName: 'Acme Open Night' });
    expect(all.entries[1]!.details).toMatchObject({ reason: 'payment gateway degraded' });

    const paused = await callerAs(tdb.db, viewer).auditLog.list({ actor: 'operator@reports', action: 'queue.' });
    expect(paused.entries.map((e) => e.action)).toEqual(['queue.resumed', 'queue.paused']);

    const first = await callerAs(tdb.db, admin).auditLog.list({ eventId: acmeEventId, limit: 2 });
    const second = await callerAs(tdb.db, admin).auditLog.list({ eventId: acmeEventId, limit: 2, before: first.nextBefore! });
    expect([...first.entries, ...second.entries].map((e) => e.id)).toEqual(all.entries.slice(0, 4).map((e) => e.id));

    const facets = await callerAs(tdb.db, admin).auditLog.facets();
    expect(facets.actions).toEqual(expect.arrayContaining(['event.created', 'queue.paused', 'console_user.created']));
    expect(facets.actors).toEqual(expect.arrayContaining(['operator@reports.test', 'promoter@acme.test']));
  });

  it("shows a promoter only their organisation's part; asking for another's event is FORBIDDEN", async () => {
    const mine = await callerAs(tdb.db, acme).auditLog.list({});
    expect(new Set(mine.entries.map((e) => e.eventId))).toEqual(new Set([acmeEventId]));
    expect(await refusal(callerAs(tdb.db, acme).auditLog.list({ eventId: betaEventId }))).toEqual({
      code: 'FORBIDDEN',
      domainCode: 'EVENT_FORBIDDEN',
    });
    const facets = await callerAs(tdb.db, beta).auditLog.facets();
    expect(facets.actions).not.toContain('console_user.created');
    expect(facets.actions).not.toContain('queue.paused');
  });

  it('exports every entry the filters select as CSV (all pages, words beside the raw values), scoped like the list', async () => {
    const listed = await callerAs(tdb.db, admin).auditLog.list({ eventId: acmeEventId });
    const r = await callerAs(tdb.db, viewer).auditLog.exportCsv({ eventId: acmeEventId, limit: 1, before: 1 });
    expect(r).toMatchObject({ filename: `onsale-audit-log-${acmeEventId}.csv`, rows: listed.entries.length, truncated: false });
    expect(r.csv).toContain('\r\n');
    const [header, ...rows] = parse(r.csv);
    expect(header).toEqual([
      'Time (UTC)',
      'Time at the venue',
      'Venue time zone',
      'Who',
      'Actor id',
      'What',
      'Action',
      'Event',
      'Event id',
      'Details',
      'Details (JSON)',
    ]);
    // Paging and `before` are the list's: the export has them all, newest first.
    expect(rows.map((row) => row[6])).toEqual(listed.entries.map((e) => e.action));
    const paused = rows.find((row) => row[6] === 'queue.paused')!;
    expect(paused[5]).toBe('Paused admissions');
    expect(paused[3]).toBe('operator@reports.test');
    expect(paused[7]).toBe('Acme Open Night');
    expect(paused[9]).toContain('Reason: payment gateway degraded');
    expect(JSON.parse(paused[10]!)).toMatchObject({ reason: 'payment gateway degraded' });
    expect(new Date(paused[0]!).toISOString()).toBe(paused[0]);

    // A promoter's export is their organisation's part; another's event is refused as the list is.
    const mine = parse<Record<string, string>>((await callerAs(tdb.db, acme).auditLog.exportCsv({})).csv, { columns: true });
    expect(mine.length).toBeGreaterThan(0);
    expect(new Set(mine.map((row) => row['Event id']))).toEqual(new Set([acmeEventId]));
    expect(await refusal(callerAs(tdb.db, acme).auditLog.exportCsv({ eventId: betaEventId }))).toEqual({
      code: 'FORBIDDEN',
      domainCode: 'EVENT_FORBIDDEN',
    });
    expect(await refusal(callerAs(tdb.db, admin).auditLog.exportCsv({ to: 'tomorrow' }))).toMatchObject({ code: 'BAD_REQUEST' });
    expect(await refusal(callerAs(tdb.db, null).auditLog.exportCsv({}))).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('a CSV export stops at its cap and says so (the newest entries first)', async () => {
    const { auditLogCsv } = await import('@onsale/shared/events');
    const all = await auditLogCsv(tdb.db, { eventId: acmeEventId }, null);
    expect(all.rows).toBeGreaterThan(2);
    const capped = await auditLogCsv(tdb.db, { eventId: acmeEventId }, null, 2);
    expect(capped).toMatchObject({ rows: 2, truncated: true });
    expect(
      parse(capped.csv)
        .slice(1)
        .map((row) => row[6]),
    ).toEqual(
      parse(all.csv)
        .slice(1, 3)
        .map((row) => row[6]),
    );
  });

  it('refuses a bad filter naming the field (BAD_REQUEST), and the signed-out (UNAUTHORIZED)', async () => {
    expect(await refusal(callerAs(tdb.db, admin).auditLog.list({ from: 'yesterday' }))).toMatchObject({ code: 'BAD_REQUEST' });
    expect(await refusal(callerAs(tdb.db, admin).auditLog.list({ limit: 5000 }))).toMatchObject({ code: 'BAD_REQUEST' });
    expect(await refusal(callerAs(tdb.db, null).auditLog.list({}))).toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
