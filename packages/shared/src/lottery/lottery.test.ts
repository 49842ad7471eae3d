import { readFile } from 'node:fs/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DomainError } from '../errors.js';
import { parseEventFile, type EventFile } from '../events/index.js';
import { createEvent } from '../sale-setup/index.js';
import { cohortPositions, commitSeed, generateSeed } from '../queue/fairness.js';
import { createTokenKey, hashDevice, signToken, verifyToken, type TokenKey } from '../queue/edge.js';
import { createTestDatabase, type TestDatabase } from '../testing/index.js';
import { addWebhookEndpoint } from '../notify/webhooks.js';
import { ClaimTokens, inbox, renderNotifications } from '../waitlist/index.js';
import { insertLotteryNotifications } from './lottery.repository.js';
import {
  LotteryInputError,
  drawLottery,
  lotteryFacts,
  myLottery,
  publishedLottery,
  redeemInvitation,
  registerForLottery,
  runDraw,
  signInvitation,
  verifyInvitation,
  verifyLotteryAudit,
  verifyPublishedLottery,
  type InvitationClaims,
} from './index.js';
import { domainError } from '../testing/errors.js';

let t: TestDatabase;
let key: TokenKey;
const HOUR = 3600_000;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 12 });
  key = await createTokenKey('a lottery test secret of at least 32 characters');
});
afterAll(() => t?.drop());

/**
 * A lottery event of 20 seats (2 rows x 10). Times are relative to now: by default registration ran from 3 h
 * ago to 2 h ago and the on-sale opened an hour ago, so the draw may run and cohort 0 is buying now.
 */
function lotteryFile(
  over: { opensH?: number; closesH?: number; onsaleH?: number; conversion?: number; cohorts?: number; cohortMinutes?: number } = {},
  extra: Partial<EventFile> = {},
): EventFile {
  const at = (h: number) => new Date(Date.now() + h * HOUR).toISOString();
  return {
    name: 'Lottery Night',
    venueName: 'Hall',
    startsAt: at(24 * 30),
    onsaleAt: at(over.onsaleH ?? -1),
    fairnessMode: 'REGISTRATION_LOTTERY',
    priceLevels: [{ code: 'P', name: 'All', priceCents: 5000 }],
    sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 2, seatsPerRow: 10 }],
    lottery: {
      registrationOpensAt: at(over.opensH ?? -3),
      registrationClosesAt: at(over.closesH ?? -2),
      expectedConversion: over.conversion ?? 0.5,
      cohorts: over.cohorts ?? 3,
      cohortMinutes: over.cohortMinutes ?? 120,
    },
    ...extra,
  };
}

const makeLottery = (over?: Parameters<typeof lotteryFile>[0], extra?: Partial<EventFile>) =>
  t.db.transaction().execute((trx) => createEvent(trx, parseEventFile(lotteryFile(over, extra)), 'test', { signOff: true }));

/** Registers `n` fans (`<prefix>-<i>`, quantities 1..4 in turn) at a moment inside the window. */
async function registerMany(eventId: string, prefix: string, n: number, at: Date) {
  for (let i = 0; i < n; i++)
    await t.db
      .transaction()
      .execute((trx) => registerForLottery(trx, { eventId, accountId: `${prefix}-${i}`, quantity: (i % 4) + 1, now: at }));
}

const inWindow = () => new Date(Date.now() - 2.5 * HOUR);

const refusal = domainError;

const count = async (table: 'lottery_registrations' | 'lottery_winners' | 'waitlist_entries') =>
  (await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(table)}`.execute(t.db)).rows[0]!.n;

describe('the pure draw', () => {
  const regs = (quantities: number[]) => quantities.map((quantity, sequence) => ({ account: `a${sequence}`, sequence, quantity }));
  const base = {
    seedHex: '00'.repeat(32),
    seatsOffered: 10,
    expectedConversion: 1,
    cohorts: 2,
    cohortMinutes: 60,
    onsaleAtMs: Date.UTC(2030, 0, 1),
  };

  it('takes winners in permuted order until the requested seats reach floor(seats / conversion)', async () => {
    const r = await runDraw({ ...base, registrations: regs([2, 2, 2, 2, 2, 2, 2, 2, 2, 2]) });
    expect(r.targetRequestedSeats).toBe(10);
    expect(r.winners).toHaveLength(5);
    expect(r.invitedSeats).toBe(10);
    // Seed of zeros, n = 10: the fairness recipe's test vector (join indexes 0..9 -> slots 2, 4, 9, 8, 6, 1, 3, 0, 5, 7).
    expect(r.winners.map((w) => w.sequence)).toEqual([7, 5, 0, 6, 1]);
    expect(r.winners.map((w) => w.rank)).toEqual([1, 2, 3, 4, 5]);
    expect(r.winners.map((w) => w.cohort)).toEqual([0, 0, 0, 1, 1]);
    expect(r.winners[3]!.windowOpensAtMs).toBe(base.onsaleAtMs + 60 * 60_000);
    expect(r.winners[3]!.windowClosesAtMs).toBe(base.onsaleAtMs + 120 * 60_000);
    expect(r.nonWinners.map((w) => w.sequence)).toEqual([8, 4, 9, 3, 2]);
  });

  it('lets the last winner take the total past the target, and everyone win when demand is below it', async () => {
    const over = await runDraw({ ...base, seatsOffered: 3, registrations: regs([4, 4, 4, 4, 4, 4, 4, 4, 4, 4]) });
    expect(over).toMatchObject({ targetRequestedSeats: 3, invitedSeats: 4 });
    expect(over.winners).toHaveLength(1);
    const all = await runDraw({ ...base, seatsOffered: 1000, expectedConversion: 0.8, registrations: regs([1, 2, 3]) });
    expect(all).toMatchObject({ targetRequestedSeats: 1250, invitedSeats: 6, nonWinners: [] });
    expect((await runDraw({ ...base, registrations: [] })).winners).toEqual([]);
  });

  it('refuses a list with gaps, repeats or bad quantities', async () => {
    const bad = (registrations: { account: string; sequence: number; quantity: number }[]) => runDraw({ ...base, registrations });
    await expect(bad([{ account: 'a', sequence: 1, quantity: 1 }])).rejects.toBeInstanceOf(LotteryInputError);
    await expect(
      bad([
        { account: 'a', sequence: 0, quantity: 1 },
        { account: 'a', sequence: 1, quantity: 1 },
      ]),
    ).rejects.toThrow(/appears twice/);
    await expect(bad([{ account: 'a', sequence: 0, quantity: 0 }])).rejects.toThrow(/quantity/);
  });
});

describe('invitation codes', () => {
  const claims = (over: Partial<InvitationClaims> = {}): InvitationClaims => ({
    kind: 'invitation',
    eventId: 'ev-1',
    accountId: 'fan-1',
    rank: 3,
    cohort: 1,
    nbf: 1_000_000,
    exp: 1_003_600,
    ...over,
  });
  const at = (s: number) => s * 1000;

  it('verifies within the window, bound to event and account; the same claims give the same code', async () => {
    const code = await signInvitation(key, claims());
    expect(await signInvitation(key, claims())).toBe(code);
    expect(await verifyInvitation(key, code, { eventId: 'ev-1', accountId: 'fan-1', now: at(1_000_000) })).toEqual(claims());
    const refused = async (c: string, expected: { eventId?: string; accountId?: string; now?: number }) => {
      try {
        await verifyInvitation(key, c, { eventId: 'ev-1', accountId: 'fan-1', now: at(1_000_100), ...expected });
      } catch (e) {
        return (e as { code: string; kind: string }).code + '/' + (e as { kind: string }).kind;
      }
      return 'accepted';
    };
    expect(await refused(code, { now: at(999_999) })).toBe('INVITATION_NOT_YET_VALID/conflict');
    expect(await refused(code, { now: at(1_003_600) })).toBe('INVITATION_EXPIRED/gone');
    expect(await refused(code, { eventId: 'ev-2' })).toBe('INVITATION_WRONG_EVENT/forbidden');
    expect(await refused(code, { accountId: 'fan-2' })).toBe('INVITATION_WRONG_ACCOUNT/forbidden');
    const [payload, mac] = code.split('.') as [string, string];
    const other = await signInvitation(key, claims({ cohort: 0, nbf: 900_000, exp: 1_100_000 }));
    expect(await refused(`${other.split('.')[0]}.${mac}`, {})).toBe('INVITATION_FORGED/forbidden');
    const otherKey = await createTokenKey('another secret, also at least 32 characters');
    expect(await refused(await signInvitation(otherKey, claims()), {})).toBe('INVITATION_FORGED/forbidden');
    expect(await refused(`${payload}`, {})).toBe('INVITATION_MALFORMED/invalid');
    expect(await refused('not a code at all', {})).toBe('INVITATION_MALFORMED/invalid');
  });

  it('never passes as an admission token, nor an admission token as an invitation', async () => {
    const code = await signInvitation(key, claims());
    await expect(verifyToken(key, code, { kind: 'admission', eventId: 'ev-1', now: at(1_000_100) })).rejects.toMatchObject({
      code: 'TOKEN_MALFORMED',
    });
    const admission = await signToken(key, {
      kind: 'admission',
      eventId: 'ev-1',
      accountId: 'fan-1',
      deviceHash: 'a'.repeat(64),
      position: 1,
      iat: 1_000_000,
      exp: 1_000_600,
    });
    await expect(verifyInvitation(key, admission, { eventId: 'ev-1', accountId: 'fan-1', now: at(1_000_100) })).rejects.toMatchObject({
      code: 'INVITATION_MALFORMED',
    });
  });
});

describe('registration', () => {
  it('creates the lottery with the event: settings and a seed commitment, audited; the seed stays secret', async () => {
    const { eventId } = await makeLottery();
    const row = await t.db.selectFrom('lotteries').selectAll().where('event_id', '=', eventId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ expected_conversion: 0.5, cohorts: 3, cohort_minutes: 120, registration_count: 0, drawn_at: null });
    expect(await commitSeed(row.seed_hex)).toBe(row.seed_commitment);
    // One commitment per event: /fairness publishes the same one.
    const queue = await t.db.selectFrom('queue_state').select('seed_commitment').where('event_id', '=', eventId).executeTakeFirstOrThrow();
    expect(queue.seed_commitment).toBe(row.seed_commitment);
    const facts = await lotteryFacts(t.db, eventId);
    expect(facts).toMatchObject({
      mode: 'REGISTRATION_LOTTERY',
      seedCommitment: row.seed_commitment,
      seed: null,
      registrationCount: 0,
      seatsOffered: 20,
      targetRequestedSeats: 40,
    });
    const audit = await t.db
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('event_id', '=', eventId)
      .where('action', '=', 'lottery.seed_committed')
      .execute();
    expect(audit).toEqual([
      { action: 'lottery.seed_committed', details: expect.objectContaining({ seedCommitment: row.seed_commitment }) },
    ]);
  });

  it('is one per account: a repeat is the same registration; sequence numbers are dense under concurrency', async () => {
    const { eventId } = await makeLottery();
    const at = inWindow();
    const attempts = Array.from({ length: 60 }, (_, i) => `dense-${i % 20}`);
    const results = await Promise.all(
      attempts.map((accountId) =>
        t.db.transaction().execute((trx) => registerForLottery(trx, { eventId, accountId, quantity: 2, now: at })),
      ),
    );
    expect(results.filter((r) => r.created)).toHaveLength(20);
    const rows = await t.db
      .selectFrom('lottery_registrations')
      .select(['account_id', 'sequence'])
      .where('event_id', '=', eventId)
      .orderBy('sequence')
      .execute();
    expect(rows.map((r) => r.sequence)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(new Set(rows.map((r) => r.account_id)).size).toBe(20);
    for (const r of results)
      expect(r.registration.sequence).toBe(rows.find((x) => x.account_id === attempts[results.indexOf(r)])!.sequence);
    // A repeat with another quantity keeps the place and changes the quantity.
    const again = await t.db
      .transaction()
      .execute((trx) => registerForLottery(trx, { eventId, accountId: 'dense-3', quantity: 4, now: at }));
    expect(again).toMatchObject({
      created: false,
      registration: { quantity: 4, sequence: rows.find((r) => r.account_id === 'dense-3')!.sequence },
    });
    expect(
      (await t.db.selectFrom('lotteries').select('registration_count').where('event_id', '=', eventId).executeTakeFirstOrThrow())
        .registration_count,
    ).toBe(20);
  });

  it('refuses outside the window, above the limit and on a non-lottery event, writing nothing', async () => {
    const { eventId } = await makeLottery({ opensH: 1, closesH: 2, onsaleH: 3 });
    const { eventId: plain } = await t.db
      .transaction()
      .execute((trx) =>
        createEvent(trx, parseEventFile({ ...lotteryFile(), fairnessMode: 'FIFO', lottery: undefined }), 'test', { signOff: true }),
      );
    const before = await count('lottery_registrations');
    const reg = (id: string, quantity: number, now: Date) =>
      refusal(t.db.transaction().execute((trx) => registerForLottery(trx, { eventId: id, accountId: 'late-fan', quantity, now })));
    expect(await reg(eventId, 1, new Date())).toMatchObject({
      kind: 'conflict',
      code: 'REGISTRATION_NOT_OPEN',
      details: { opensAt: expect.any(String) },
    });
    expect(await reg(eventId, 1, new Date(Date.now() + 2 * HOUR + 1000))).toMatchObject({ kind: 'conflict', code: 'REGISTRATION_CLOSED' });
    expect(await reg(eventId, 5, new Date(Date.now() + 1.5 * HOUR))).toMatchObject({
      kind: 'invalid',
      code: 'QUANTITY_ABOVE_LIMIT',
      details: { field: 'quantity', limit: 4 },
    });
    expect(await reg(plain, 1, new Date())).toMatchObject({ kind: 'conflict', code: 'NOT_A_LOTTERY_EVENT' });
    expect(await reg('00000000-0000-4000-8000-000000000000', 1, new Date())).toMatchObject({ kind: 'not_found', code: 'EVENT_NOT_FOUND' });
    expect(await count('lottery_registrations')).toBe(before);
    expect(await sql`SELECT 1 FROM accounts WHERE id = 'late-fan'`.execute(t.db).then((r) => r.rows.length)).toBe(0);
  });
});

describe('the draw', () => {
  let eventId: string;
  let listingId: string;
  const N = 120;

  beforeAll(async () => {
    ({ eventId, listingId } = await makeLottery());
    await registerMany(eventId, 'fan', N, inWindow());
    // A fan already on the listing's waitlist with criteria of their own keeps them.
    await sql`INSERT INTO waitlist_entries (listing_id, account_id, expires_at, quantity, max_price_cents) VALUES (${listingId}, 'fan-7', now() + interval '1 day', 1, 999)`.execute(
      t.db,
    );
  });

  it('refuses before registration closes (DRAW_TOO_EARLY), writing nothing', async () => {
    const { eventId: open } = await makeLottery({ opensH: -1, closesH: 1, onsaleH: 2 });
    const e = await refusal(t.db.transaction().execute((trx) => drawLottery(trx, open, { actor: 'test' })));
    expect(e).toMatchObject({ kind: 'conflict', code: 'DRAW_TOO_EARLY', details: { closesAt: expect.any(String) } });
    expect(
      (await t.db.selectFrom('lotteries').select('drawn_at').where('event_id', '=', open).executeTakeFirstOrThrow()).drawn_at,
    ).toBeNull();
  });

  it("refuses while the fairness mode is not signed off (FAIRNESS_NOT_SIGNED_OFF): the draw is the lottery's open", async () => {
    const { eventId: unsigned } = await t.db.transaction().execute((trx) => createEvent(trx, parseEventFile(lotteryFile()), 'test'));
    const e = await refusal(t.db.transaction().execute((trx) => drawLottery(trx, unsigned, { actor: 'test' })));
    expect(e).toMatchObject({ kind: 'conflict', code: 'FAIRNESS_NOT_SIGNED_OFF', details: { field: 'fairnessMode' } });
    expect(
      (await t.db.selectFrom('lotteries').select('drawn_at').where('event_id', '=', unsigned).executeTakeFirstOrThrow()).drawn_at,
    ).toBeNull();
  });

  it('reveals the seed and draws winners anyone can recompute from the seed and the registration list', async () => {
    const summary = await t.db.transaction().execute((trx) => drawLottery(trx, eventId, { actor: 'ops:test' }));
    expect(summary).toMatchObject({
      alreadyDrawn: false,
      registrations: N,
      seatsOffered: 20,
      targetRequestedSeats: 40,
      drawnBy: 'ops:test',
    });
    expect(await commitSeed(summary.seed)).toBe(summary.seedCommitment);

    // Independently: the published list (every page), the fairness permutation, and the rule in the recipe.
    const pages: Awaited<ReturnType<typeof lotteryFacts>>['registrations'] = [];
    let from: number | null = 0;
    let facts!: Awaited<ReturnType<typeof lotteryFacts>>;
    while (from !== null) {
      facts = await lotteryFacts(t.db, eventId, { from, limit: 50 });
      pages.push(...facts.registrations);
      from = facts.nextFrom;
    }
    expect(facts.seed).toBe(summary.seed);
    expect(pages.map((r) => r.sequence)).toEqual(Array.from({ length: N }, (_, i) => i));
    const slots = await cohortPositions(facts.seed!, N);
    const order = [...pages].sort((a, b) => slots[a.sequence]! - slots[b.sequence]!);
    const target = Math.floor(facts.seatsOffered / facts.expectedConversion);
    const expected: { account: string; rank: number; cohort: number }[] = [];
    let seats = 0;
    for (const r of order) {
      if (seats >= target) break;
      seats += r.quantity;
      expected.push({ account: r.account, rank: slots[r.sequence]! + 1, cohort: 0 });
    }
    expected.forEach((w, i) => (w.cohort = Math.floor((i * facts.cohorts) / expected.length)));
    expect(seats).toBeGreaterThanOrEqual(40);
    expect(summary.winners).toBe(expected.length);
    expect(summary.invitedSeats).toBe(seats);
    const published = pages
      .filter((r) => r.won)
      .map((r) => ({ account: r.account, rank: r.rank, cohort: r.cohort }))
      .sort((a, b) => a.rank! - b.rank!);
    expect(published).toEqual(expected);

    // ...and the recorded rows (raw account ids) match the pseudonyms.
    const { rows } = await sql<{ account: string; rank: number; cohort: number; window_opens_at: Date }>`
      SELECT encode(sha256(convert_to(event_id::text || account_id, 'UTF8')), 'hex') AS account, rank, cohort, window_opens_at
      FROM lottery_winners WHERE event_id = ${eventId} ORDER BY rank`.execute(t.db);
    expect(rows.map(({ account, rank, cohort }) => ({ account, rank, cohort }))).toEqual(expected);
    const event = await t.db.selectFrom('events').select('onsale_at').where('id', '=', eventId).executeTakeFirstOrThrow();
    for (const r of rows) expect(r.window_opens_at.getTime()).toBe(event.onsale_at.getTime() + r.cohort * 120 * 60_000);
    expect(summary.cohorts.map((c) => c.cohort)).toEqual([0, 1, 2]);

    const audit = await verifyLotteryAudit(t.db, eventId);
    expect(audit.ok).toBe(true);
    expect(audit.checks.map((c) => c.name)).toEqual(['seed_revealed', 'commitment', 'registration_list', 'sizing', 'winners', 'cohorts']);
  });

  it('puts every non-winner on the listing waitlist with their quantity for this performance; a fan already there keeps their entry', async () => {
    const { rows } = await sql<{
      account_id: string;
      quantity: number;
      date_from: string;
      date_to: string;
      max_price_cents: number | null;
      won: boolean;
    }>`
      SELECT r.account_id, w.quantity, w.date_from, w.date_to, w.max_price_cents, (lw.account_id IS NOT NULL) AS won
      FROM lottery_registrations r
      LEFT JOIN waitlist_entries w ON w.listing_id = ${listingId} AND w.account_id = r.account_id
      LEFT JOIN lottery_winners lw ON lw.event_id = r.event_id AND lw.account_id = r.account_id
      WHERE r.event_id = ${eventId}`.execute(t.db);
    const event = await t.db.selectFrom('events').select('starts_at').where('id', '=', eventId).executeTakeFirstOrThrow();
    const date = event.starts_at.toISOString().slice(0, 10);
    const registered = new Map(
      (await t.db.selectFrom('lottery_registrations').select(['account_id', 'quantity']).where('event_id', '=', eventId).execute()).map(
        (r) => [r.account_id, r.quantity],
      ),
    );
    for (const r of rows) {
      if (r.account_id === 'fan-7') {
        expect(r.max_price_cents).toBe(999);
        continue;
      }
      if (r.won) expect(r.quantity).toBeNull();
      else expect(r).toMatchObject({ quantity: registered.get(r.account_id), date_from: date, date_to: date, max_price_cents: null });
    }
    expect(rows.filter((r) => !r.won && r.quantity === null)).toEqual([]);
  });

  it('run again (and concurrently) it is idempotent: same seed, same winners, no new waitlist entries, one audit entry', async () => {
    const [winnersBefore, waitlistBefore] = [
      await t.db.selectFrom('lottery_winners').selectAll().where('event_id', '=', eventId).orderBy('rank').execute(),
      await count('waitlist_entries'),
    ];
    const first = (await t.db.selectFrom('lotteries').select('seed_hex').where('event_id', '=', eventId).executeTakeFirstOrThrow())
      .seed_hex;
    const again = await Promise.all(
      [1, 2, 3].map(() => t.db.transaction().execute((trx) => drawLottery(trx, eventId, { actor: 'someone-else' }))),
    );
    for (const a of again) expect(a).toMatchObject({ alreadyDrawn: true, seed: first, drawnBy: 'ops:test', winners: winnersBefore.length });
    const fan7Won = winnersBefore.some((w) => w.account_id === 'fan-7');
    expect(await t.db.selectFrom('lottery_winners').selectAll().where('event_id', '=', eventId).orderBy('rank').execute()).toEqual(
      winnersBefore,
    );
    expect(await count('waitlist_entries')).toBe(waitlistBefore);
    const audits = await t.db
      .selectFrom('audit_log')
      .select('details')
      .where('event_id', '=', eventId)
      .where('action', '=', 'lottery.drawn')
      .execute();
    expect(audits).toHaveLength(1);
    expect(audits[0]!.details).toMatchObject({
      seed: first,
      registrations: N,
      winners: winnersBefore.length,
      alreadyWaitlisted: fan7Won ? 0 : 1,
    });
  });

  it('two fresh draws racing: one draws, the other reads the recorded draw', async () => {
    const { eventId: racing } = await makeLottery();
    await registerMany(racing, 'race', 30, inWindow());
    const results = await Promise.all(
      [1, 2].map((i) => t.db.transaction().execute((trx) => drawLottery(trx, racing, { actor: `racer-${i}` }))),
    );
    expect(results.map((r) => r.alreadyDrawn).sort()).toEqual([false, true]);
    expect(results[0]!.seed).toBe(results[1]!.seed);
  });

  it('closes registration for good once drawn', async () => {
    await t.db
      .updateTable('lotteries')
      .set({ registration_closes_at: new Date(Date.now() + HOUR) })
      .where('event_id', '=', eventId)
      .execute();
    const e = await refusal(
      t.db.transaction().execute((trx) => registerForLottery(trx, { eventId, accountId: 'too-late', quantity: 1, now: new Date() })),
    );
    expect(e.code).toBe('REGISTRATION_CLOSED');
  });

  it('the audit fails when a recorded winner differs from the recomputation, or the seed from the commitment', async () => {
    const p = await publishedLottery(t.db, eventId);
    const loser = p.registrations.find((r) => r.rank === null)!;
    const winner = p.registrations.find((r) => r.rank === 1)!;
    const swapped = {
      ...p,
      registrations: p.registrations.map((r) =>
        r === loser ? { ...r, rank: 1, cohort: 0 } : r === winner ? { ...r, rank: null, cohort: null } : r,
      ),
    };
    const bad = await verifyPublishedLottery(swapped);
    expect(bad.ok).toBe(false);
    expect(bad.checks.find((c) => c.name === 'winners')).toMatchObject({ ok: false, detail: expect.stringContaining('2 difference(s)') });
    const badSeed = await verifyPublishedLottery({ ...p, seed: generateSeed() });
    expect(badSeed.checks.find((c) => c.name === 'commitment')!.ok).toBe(false);
  });
});

describe('the draw tells every registered fan', () => {
  let eventId: string;
  let listingId: string;
  let endpointId: string;
  const N = 40;
  const tokens = new ClaimTokens('a lottery test secret of at least 32 characters');
  const notes = () => t.db.selectFrom('notifications').selectAll().where('event_id', '=', eventId).orderBy('id').execute();
  const deliveries = () => t.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId).orderBy('id').execute();

  beforeAll(async () => {
    ({ eventId, listingId } = await makeLottery());
    await registerMany(eventId, 'told', N, inWindow());
    // The operator's messaging gateway, for this listing: the draw's notifications go there too.
    ({ id: endpointId } = await addWebhookEndpoint(t.db, { url: 'https://hooks.example.test/onsale', listingId }));
  });

  it('a draw rolled back tells nobody', async () => {
    await expect(
      t.db.transaction().execute(async (trx) => {
        await drawLottery(trx, eventId, { actor: 'test' });
        expect((await trx.selectFrom('notifications').select('id').where('event_id', '=', eventId).execute()).length).toBe(N);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await notes()).toEqual([]);
    expect(await deliveries()).toEqual([]);
  });

  it("writes one notification per registration in the draw's transaction, winners LOTTERY_WON, the rest LOTTERY_NOT_DRAWN, handed to the webhooks", async () => {
    const summary = await t.db.transaction().execute((trx) => drawLottery(trx, eventId, { actor: 'test' }));
    const winners = new Map(
      (await t.db.selectFrom('lottery_winners').selectAll().where('event_id', '=', eventId).execute()).map((w) => [w.account_id, w]),
    );
    expect(winners.size).toBe(summary.winners);
    const written = await notes();
    expect(written).toHaveLength(N);
    expect(new Set(written.map((n) => n.account_id)).size).toBe(N);
    for (const n of written) {
      expect(n).toMatchObject({ listing_id: listingId, availability_id: null, entry_id: null, read_at: null });
      expect(n.kind).toBe(winners.has(n.account_id) ? 'LOTTERY_WON' : 'LOTTERY_NOT_DRAWN');
    }
    // Winners first, in rank order.
    expect(written.slice(0, winners.size).map((n) => winners.get(n.account_id)!.rank)).toEqual(
      [...winners.values()].map((w) => w.rank).sort((a, b) => a - b),
    );
    const [delivery, ...more] = await deliveries();
    expect(more).toEqual([]);
    expect(delivery).toMatchObject({ status: 'PENDING', availability_id: null });
    expect(delivery!.notification_ids.map(Number)).toEqual(written.map((n) => n.id));
    const { rows: jobs } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE (payload->>'deliveryId')::bigint = ${delivery!.id}`.execute(t.db);
    expect(jobs[0]!.n).toBe(1);
    const audit = await t.db
      .selectFrom('audit_log')
      .select('details')
      .where('event_id', '=', eventId)
      .where('action', '=', 'lottery.drawn')
      .executeTakeFirstOrThrow();
    expect(audit.details).toMatchObject({ notified: N });
  });

  it("renders them for the inbox and the webhook body: a winner's cohort and purchase window, a non-winner's waitlist", async () => {
    const winner = await t.db
      .selectFrom('lottery_winners')
      .selectAll()
      .where('event_id', '=', eventId)
      .orderBy('rank')
      .executeTakeFirstOrThrow();
    const [won] = await inbox(t.db, tokens, winner.account_id);
    expect(won).toMatchObject({
      kind: 'LOTTERY_WON',
      eventId,
      eventName: 'Lottery Night',
      listingId,
      claim: null,
      release: null,
      lottery: {
        won: true,
        rank: winner.rank,
        cohort: winner.cohort,
        windowOpensAt: winner.window_opens_at,
        windowClosesAt: winner.window_closes_at,
      },
      links: {
        event: `/events/${eventId}`,
        lottery: `/events/${eventId}/lottery/registration`,
        waitlist: `/listings/${listingId}/waitlist`,
        claim: null,
      },
    });
    expect(won!.message).toContain(`from ${winner.window_opens_at.toISOString()} until ${winner.window_closes_at.toISOString()}`);
    const loser = (await notes()).find((n) => n.kind === 'LOTTERY_NOT_DRAWN')!;
    const [notDrawn] = await renderNotifications(t.db, tokens, [loser.id]);
    expect(notDrawn).toMatchObject({
      kind: 'LOTTERY_NOT_DRAWN',
      eventId,
      lottery: { won: false, rank: null, cohort: null },
      links: { waitlist: `/listings/${listingId}/waitlist` },
    });
    expect(notDrawn!.message).toContain('waitlist');
  });

  it('a repeated draw writes no notification and no delivery', async () => {
    const [before, sent] = [await notes(), await deliveries()];
    const again = await t.db.transaction().execute((trx) => drawLottery(trx, eventId, { actor: 'test' }));
    expect(again.alreadyDrawn).toBe(true);
    expect(await notes()).toEqual(before);
    expect(await deliveries()).toEqual(sent);
    // And the key holds even if something wrote them again.
    const ids = await t.db.transaction().execute((trx) => insertLotteryNotifications(trx, eventId, listingId));
    expect(ids).toEqual([]);
  });
});

describe('my lottery and redeeming an invitation', () => {
  let eventId: string;
  let listingId: string;
  let winners: { account_id: string; rank: number; cohort: number }[];

  beforeAll(async () => {
    // Cohort 0 buys from an hour ago for two hours; cohort 1 from an hour from now.
    ({ eventId, listingId } = await makeLottery({ cohorts: 2 }));
    await registerMany(eventId, 'me', 60, inWindow());
    await t.db.transaction().execute((trx) => drawLottery(trx, eventId, { actor: 'test' }));
    winners = await t.db
      .selectFrom('lottery_winners')
      .select(['account_id', 'rank', 'cohort'])
      .where('event_id', '=', eventId)
      .orderBy('rank')
      .execute();
  });

  it('tells a winner their invitation, a non-winner where their waitlist entry is, and a stranger NOT_REGISTERED', async () => {
    const w = winners[0]!;
    const mine = await myLottery(t.db, key, eventId, w.account_id);
    expect(mine).toMatchObject({
      state: 'WON',
      invitation: { rank: w.rank, cohort: 0, code: expect.any(String), redeem: `/events/${eventId}/lottery/admission` },
    });
    const loser = (await t.db.selectFrom('lottery_registrations').select('account_id').where('event_id', '=', eventId).execute()).find(
      (r) => !winners.some((w) => w.account_id === r.account_id),
    )!;
    expect(await myLottery(t.db, key, eventId, loser.account_id)).toMatchObject({
      state: 'NOT_DRAWN',
      waitlist: { listingId, join: `/listings/${listingId}/waitlist` },
    });
    expect(await refusal(myLottery(t.db, key, eventId, 'stranger'))).toMatchObject({ kind: 'not_found', code: 'NOT_REGISTERED' });
  });

  it('redeems in the cohort window for an admission token bound to the account and device, living at most to the window end', async () => {
    const w = winners.find((x) => x.cohort === 0)!;
    const mine = await myLottery(t.db, key, eventId, w.account_id);
    if (mine.state !== 'WON') throw new Error('expected a winner');
    const now = Date.now();
    const r = await redeemInvitation(t.db, key, {
      eventId,
      accountId: w.account_id,
      deviceId: 'device-of-the-winner',
      invitationCode: mine.invitation.code,
      now,
    });
    const claims = await verifyToken(key, r.admissionToken, {
      kind: 'admission',
      eventId,
      accountId: w.account_id,
      deviceHash: await hashDevice('device-of-the-winner', w.account_id),
      now,
    });
    expect(claims.position).toBe(w.rank);
    expect(claims.exp - claims.iat).toBe(600);
    // Near the end of the window the token ends with it.
    const late = mine.invitation.windowClosesAt.getTime() - 60_000;
    const r2 = await redeemInvitation(t.db, key, {
      eventId,
      accountId: w.account_id,
      deviceId: 'device-of-the-winner',
      invitationCode: mine.invitation.code,
      now: late,
    });
    expect(r2.expiresAt.getTime()).toBe(Math.floor(mine.invitation.windowClosesAt.getTime() / 1000) * 1000);
  });

  it('refuses a later cohort before its window, with opensAt', async () => {
    const w = winners.find((x) => x.cohort === 1)!;
    const mine = await myLottery(t.db, key, eventId, w.account_id);
    if (mine.state !== 'WON') throw new Error('expected a winner');
    const e = await refusal(
      redeemInvitation(t.db, key, {
        eventId,
        accountId: w.account_id,
        deviceId: 'device-of-the-winner',
        invitationCode: mine.invitation.code,
        now: Date.now(),
      }),
    );
    expect(e).toMatchObject({
      kind: 'conflict',
      code: 'INVITATION_NOT_YET_VALID',
      details: {
        field: 'invitationCode',
        opensAt: new Date(Math.ceil(mine.invitation.windowOpensAt.getTime() / 1000) * 1000).toISOString(),
      },
    });
  });
});

describe('examples/lottery.json', () => {
  it('parses: a registration lottery with its windows and cohorts', async () => {
    const spec = parseEventFile(JSON.parse(await readFile(new URL('../../../../examples/lottery.json', import.meta.url), 'utf8')));
    expect(spec.fairnessMode).toBe('REGISTRATION_LOTTERY');
    expect(spec.lottery).toMatchObject({
      expectedConversion: expect.any(Number),
      cohorts: expect.any(Number),
      cohortMinutes: expect.any(Number),
    });
    expect(Date.parse(spec.lottery!.registrationClosesAt)).toBeLessThanOrEqual(Date.parse(spec.onsaleAt));
  });

  it('a lottery without its settings, or settings on another mode, is refused at the field', () => {
    const issues = (input: unknown) => {
      try {
        parseEventFile(input);
      } catch (e) {
        return (e as DomainError).details.issues as { path: string }[];
      }
      return [];
    };
    expect(issues({ ...lotteryFile(), lottery: undefined })).toContainEqual(expect.objectContaining({ path: 'lottery' }));
    expect(issues({ ...lotteryFile(), fairnessMode: 'FIFO' })).toContainEqual(expect.objectContaining({ path: 'lottery' }));
    expect(issues(lotteryFile({ closesH: 0, onsaleH: -1 }))).toContainEqual(
      expect.objectContaining({ path: 'lottery.registrationClosesAt' }),
    );
  });
});
