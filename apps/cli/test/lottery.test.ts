import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { registerForLottery } from '@onsale/shared/lottery';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { onsale } from './run.js';

// `onsale lottery:draw`, `lottery:show` and `audit:verify` on a registration lottery, as an operator runs them.

let t: TestDatabase;
let eventId: string;
let openEventId: string;
let plainEventId: string;
const HOUR = 3600_000;
const at = (h: number) => new Date(Date.now() + h * HOUR).toISOString();

function file(opensH: number, closesH: number, onsaleH: number, mode: 'REGISTRATION_LOTTERY' | 'FIFO' = 'REGISTRATION_LOTTERY') {
  return parseEventFile({
    name: 'CLI lottery',
    venueName: 'Hall',
    startsAt: at(24 * 30),
    onsaleAt: at(onsaleH),
    fairnessMode: mode,
    priceLevels: [{ code: 'P', name: 'All', priceCents: 1000 }],
    sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 2, seatsPerRow: 10 }],
    ...(mode === 'REGISTRATION_LOTTERY'
      ? {
          lottery: {
            registrationOpensAt: at(opensH),
            registrationClosesAt: at(closesH),
            expectedConversion: 0.5,
            cohorts: 2,
            cohortMinutes: 60,
          },
        }
      : {}),
  });
}

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
  ({ eventId } = await t.db.transaction().execute((trx) => createEvent(trx, file(-3, -2, -1), 'test', { signOff: true })));
  ({ eventId: openEventId } = await t.db.transaction().execute((trx) => createEvent(trx, file(-1, 1, 2), 'test', { signOff: true })));
  ({ eventId: plainEventId } = await t.db
    .transaction()
    .execute((trx) => createEvent(trx, file(0, 0, 1, 'FIFO'), 'test', { signOff: true })));
  const during = new Date(Date.now() - 2.5 * HOUR);
  for (let i = 0; i < 50; i++)
    await t.db
      .transaction()
      .execute((trx) => registerForLottery(trx, { eventId, accountId: `cli-fan-${i}`, quantity: (i % 4) + 1, now: during }));
});
afterAll(() => t?.drop());

describe('onsale lottery:draw', () => {
  it('refuses before registration closes and on a non-lottery event (exit 1, a code, nothing written)', async () => {
    const [early, plain, audit] = await Promise.all([
      onsale(t.url, 'lottery:draw', openEventId),
      onsale(t.url, 'lottery:draw', plainEventId),
      onsale(t.url, 'audit:verify', eventId),
    ]);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain('error DRAW_TOO_EARLY');
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('error NOT_A_LOTTERY_EVENT');
    // Before the draw there is nothing to verify yet.
    expect(audit.code).toBe(1);
    expect(audit.stdout).toMatch(/FAIL +seed_revealed /);
    expect((await t.db.selectFrom('lottery_winners').select('rank').execute()).length).toBe(0);
  });

  it('draws once and prints the draw as JSON; run again it prints the same draw and writes nothing', async () => {
    const first = await onsale(t.url, 'lottery:draw', eventId, '--actor', 'ops:alice');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const draw = JSON.parse(first.stdout);
    expect(draw).toMatchObject({
      eventId,
      alreadyDrawn: false,
      drawnBy: 'ops:alice',
      registrations: 50,
      seatsOffered: 20,
      targetRequestedSeats: 40,
    });
    expect(draw.seed).toMatch(/^[0-9a-f]{64}$/);
    const winners = await t.db.selectFrom('lottery_winners').selectAll().where('event_id', '=', eventId).orderBy('rank').execute();
    expect(winners).toHaveLength(draw.winners);
    const again = await onsale(t.url, 'lottery:draw', eventId);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ alreadyDrawn: true, seed: draw.seed, drawnBy: 'ops:alice', winners: draw.winners });
    expect(await t.db.selectFrom('lottery_winners').selectAll().where('event_id', '=', eventId).orderBy('rank').execute()).toEqual(winners);
    const show = await onsale(t.url, 'lottery:show', eventId);
    expect(JSON.parse(show.stdout)).toMatchObject({ eventId, registrationCount: 50, seed: draw.seed, draw: { winners: draw.winners } });
  });

  it('audit:verify re-derives the winners from the public data; a tampered winner fails it (exit 1, AUDIT_FAILED)', async () => {
    const ok = await onsale(t.url, 'audit:verify', eventId);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('lottery audit of event');
    for (const check of ['seed_revealed', 'commitment', 'registration_list', 'sizing', 'winners', 'cohorts'])
      expect(ok.stdout).toMatch(new RegExp(`ok +${check} `));
    expect(ok.stdout).toContain('verified: all 6 checks passed');

    // Hand the last winner's place to someone who lost.
    const last = await t.db
      .selectFrom('lottery_winners')
      .selectAll()
      .where('event_id', '=', eventId)
      .orderBy('rank', 'desc')
      .executeTakeFirstOrThrow();
    const loser = await sql<{ account_id: string; sequence: number; quantity: number }>`
      SELECT account_id, sequence, quantity FROM lottery_registrations r WHERE event_id = ${eventId}
        AND NOT EXISTS (SELECT 1 FROM lottery_winners w WHERE w.event_id = r.event_id AND w.account_id = r.account_id) LIMIT 1`.execute(
      t.db,
    );
    const l = loser.rows[0]!;
    await t.db.deleteFrom('lottery_winners').where('event_id', '=', eventId).where('account_id', '=', last.account_id).execute();
    await t.db
      .insertInto('lottery_winners')
      .values({ ...last, account_id: l.account_id, sequence: l.sequence, quantity: l.quantity })
      .execute();
    const bad = await onsale(t.url, 'audit:verify', eventId);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/FAIL +winners /);
    expect(bad.stderr).toContain('error AUDIT_FAILED');
  });

  it('is in the usage', async () => {
    const r = await onsale(t.url, 'help');
    expect(r.stdout).toContain('lottery:draw <eventId> [--actor <name>]');
    expect(r.stdout).toContain('lottery:show <eventId>');
  });
});
