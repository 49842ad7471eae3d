import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { issueAccessCodes, rollDueAllocations, rollForward, signAccessCode, tierInventory } from '@onsale/shared/allocations';
import { getInventoryCounts } from '@onsale/shared/inventory';
import { reconcileInventory } from '@onsale/shared/jobs';
import { pauseQueue, resumeQueue, setRateOverride } from '@onsale/shared/admission';
import { createTokenKey, type TokenKey } from '@onsale/shared/queue';
import type { EventFile } from '@onsale/shared/events';
import { manualClock, pollUntil, testSecrets } from '@onsale/shared/testing';
import { admitted, bearer, login, makeEvent, setupApp, type TestApp } from './helper.js';

// Presale tiers against real PostgreSQL through the store API: each tier a share of the seats with its own window,
// access rule and queue; never oversold alone or together; unsold seats roll forward exactly; limits span tiers.

let h: TestApp;
/** The store API's clock: the tests move it past a cache's second or a deferral instead of waiting. */
const clock = manualClock();
let key: TokenKey;
const at = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
const PARTNER_CARD = '4111111111111111'; // BIN 411111, in the partner's range
const OTHER_CARD = '5555555555554444';

/** Fan club 30% (access codes), card partner 20% (partner cards at checkout), the general sale the rest; all open now. */
function tiered(over: Partial<EventFile> = {}): Partial<EventFile> {
  return {
    onsaleAt: at(-60),
    allocations: [
      { code: 'FANCLUB', name: 'Fan club', share: 0.3, access: 'ACCESS_CODE', opensAt: at(-90), closesAt: at(120), fairnessMode: 'FIFO' },
      {
        code: 'CARD',
        name: 'Card partner',
        share: 0.2,
        access: 'CARD_BIN',
        binRanges: [{ from: '411100', to: '411199' }],
        opensAt: at(-90),
        closesAt: at(180),
      },
      { code: 'GENERAL', name: 'General sale' },
    ],
    ...over,
  };
}

beforeAll(async () => {
  h = await setupApp({ poolMax: 16, clock: clock.now });
  key = await createTokenKey(testSecrets().queueTokenSecret);
});
afterAll(() => h.close());

const hold = (headers: Record<string, string>, eventId: string, body: object) =>
  h.app.inject({ method: 'POST', url: `/events/${eventId}/holds`, headers, payload: body });
const checkout = (headers: Record<string, string>, holdId: string, card: string, idem = `k-${holdId}-${card}`) =>
  h.app.inject({
    method: 'POST',
    url: `/holds/${holdId}/checkout`,
    headers: { ...headers, 'idempotency-key': idem },
    payload: { payment: { instrument: { type: 'card', number: card } } },
  });
const fan = async (id: string, eventId: string, tier?: string) => admitted(await login(h.app, id), eventId, undefined, tier);

async function perTier(eventId: string) {
  return Object.fromEntries((await tierInventory(h.t.db, eventId)).map((t) => [t.code, t]));
}

describe('splitting the house', () => {
  it('gives each tier its share of every section, and the counts add up per tier and in total', async () => {
    const { eventId, capacity } = await makeEvent(h.t, tiered());
    const tiers = await perTier(eventId);
    // Sections A (300), B (50), C (50): 30% / 20% / the rest of each.
    expect(tiers.FANCLUB!.capacity).toBe(90 + 15 + 15);
    expect(tiers.CARD!.capacity).toBe(60 + 10 + 10);
    expect(tiers.GENERAL!.capacity).toBe(150 + 25 + 25);
    expect(Object.values(tiers).reduce((a, t) => a + t.capacity, 0)).toBe(capacity);
    for (const t of Object.values(tiers)) expect(t.drift).toBe(0);
    // The public facts list the tiers, their windows, access rules and queues.
    const facts = await h.app.inject({ url: `/events/${eventId}/fairness` });
    expect(facts.json().tiers.map((t: { code: string; access: string }) => [t.code, t.access])).toEqual([
      ['FANCLUB', 'ACCESS_CODE'],
      ['CARD', 'CARD_BIN'],
      ['GENERAL', 'OPEN'],
    ]);
    expect(facts.json().tiers[2].queueId).toBe(eventId);
    const fanclub = await h.app.inject({ url: `/events/${eventId}/fairness?tier=FANCLUB` });
    expect(fanclub.json()).toMatchObject({ tier: 'FANCLUB', mode: 'FIFO' });
    expect(fanclub.json().seedCommitment).not.toBe(facts.json().seedCommitment);
    expect((await h.app.inject({ url: `/events/${eventId}/fairness?tier=NOPE` })).json()).toMatchObject({
      error: 'TIER_NOT_FOUND',
      field: 'tier',
    });
    // The seat map per tier: what a presale's fans can hold.
    const capacities = (body: { sections: { code: string; capacity: number; available: number }[] }) =>
      body.sections.map((x) => [x.code, x.capacity, x.available]);
    expect(capacities((await h.app.inject({ url: `/events/${eventId}/seatmap` })).json())).toEqual([
      ['A', 300, 300],
      ['B', 50, 50],
      ['C', 50, 50],
    ]);
    const club = (await h.app.inject({ url: `/events/${eventId}/seatmap?tier=FANCLUB` })).json();
    expect(club.tier).toBe('FANCLUB');
    expect(capacities(club)).toEqual([
      ['A', 90, 90],
      ['B', 15, 15],
      ['C', 15, 15],
    ]);
    expect((await h.app.inject({ url: `/events/${eventId}/seatmap?tier=NOPE` })).json()).toMatchObject({
      error: 'TIER_NOT_FOUND',
      field: 'tier',
    });
  });

  it('refuses a bad tier file at the field, creating nothing', async () => {
    const before = await sql<{ n: number }>`SELECT count(*)::int AS n FROM events`.execute(h.t.db);
    const bad = (allocations: unknown) =>
      makeEvent(h.t, { allocations } as Partial<EventFile>).then(
        () => null,
        (e: { details?: { issues?: { path: string }[] } }) => e.details?.issues?.map((i) => i.path),
      );
    expect(
      await bad([
        { code: 'A', name: 'a', share: 0.6, opensAt: at(-1), closesAt: at(5) },
        { code: 'B', name: 'b', share: 0.5, opensAt: at(-1), closesAt: at(5) },
        { code: 'G', name: 'g' },
      ]),
    ).toContain('allocations');
    expect(
      await bad([
        { code: 'A', name: 'a', share: 0.2, access: 'CARD_BIN', opensAt: at(-1), closesAt: at(5) },
        { code: 'G', name: 'g' },
      ]),
    ).toContain('allocations.0.binRanges');
    expect(
      await bad([
        { code: 'A', name: 'a', share: 0.2, opensAt: at(5), closesAt: at(1) },
        { code: 'G', name: 'g' },
      ]),
    ).toContain('allocations.0.closesAt');
    expect(
      await bad([
        { code: 'A', name: 'a', share: 0.2, opensAt: at(-1), closesAt: at(5) },
        { code: 'G', name: 'g', share: 0.8 },
      ]),
    ).toContain('allocations.1.share');
    expect(
      await bad([
        { code: 'A', name: 'a', opensAt: at(-1), closesAt: at(5) },
        { code: 'G', name: 'g' },
      ]),
    ).toContain('allocations.0.share');
    const after = await sql<{ n: number }>`SELECT count(*)::int AS n FROM events`.execute(h.t.db);
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
  });
});

describe('holds within tiers', () => {
  it('never oversells a tier alone or the tiers together under concurrent holds', async () => {
    const { eventId, capacity } = await makeEvent(h.t, tiered({ limits: { perAccountSeats: 4, perInstrumentSeats: 4 } }));
    // More demand than supply in every tier: 70 fans per tier asking for 2 seats in section B or C (each tier has 25-50 seats there).
    const fans = await Promise.all(
      ['FANCLUB', 'CARD', 'GENERAL'].flatMap((tier) =>
        Array.from({ length: 70 }, (_, i) =>
          fan(`tier-${tier}-${i}`, eventId, tier === 'GENERAL' ? undefined : tier).then((headers) => ({ tier, headers, i })),
        ),
      ),
    );
    const results = await Promise.all(fans.map((f) => hold(f.headers, eventId, { section: f.i % 2 ? 'B' : 'C', quantity: 2 })));
    const made = results.filter((r) => r.statusCode === 201);
    for (const r of results) expect([201, 409]).toContain(r.statusCode);
    expect(made.length).toBeGreaterThan(0);
    // Every held seat belongs to the tier of the admission that held it, and no seat is held twice.
    const { rows: mismatched } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM seats s JOIN holds h ON h.id = s.hold_id WHERE s.event_id = ${eventId} AND s.allocation IS DISTINCT FROM h.allocation`.execute(
      h.t.db,
    );
    expect(mismatched[0]!.n).toBe(0);
    const tiers = await perTier(eventId);
    // Demand exceeded supply: the fan club's 30 seats in B and C (row A and five seats of row B in each) are
    // nearly all held (at most 7 pairs per section; a single seat left between pairs cannot seat a pair), and no
    // tier holds more than it owns.
    expect(tiers.FANCLUB!.held).toBeGreaterThanOrEqual(20);
    expect(tiers.FANCLUB!.held).toBeLessThanOrEqual(28);
    for (const t of Object.values(tiers)) {
      expect(t.drift).toBe(0);
      expect(t.held + t.sold).toBeLessThanOrEqual(t.capacity);
    }
    const heldSeats = made.reduce((a, r) => a + r.json().seats.length, 0);
    expect(Object.values(tiers).reduce((a, t) => a + t.held, 0)).toBe(heldSeats);
    const total = await getInventoryCounts(h.t.db, eventId, capacity);
    expect(total.drift).toBe(0);
  });

  it("holds a presale's seats only inside its window, and exact seats only from its own tier", async () => {
    const { eventId } = await makeEvent(h.t, {
      ...tiered(),
      seatPickingOpensAfterMinutes: 0,
      allocations: [
        { code: 'EARLY', name: 'Early birds', share: 0.5, opensAt: at(30), closesAt: at(60) },
        { code: 'GENERAL', name: 'General sale' },
      ],
    });
    const early = await fan('window-early', eventId, 'EARLY');
    const notYet = await hold(early, eventId, { section: 'A', quantity: 2 });
    expect(notYet.statusCode).toBe(409);
    expect(notYet.json()).toMatchObject({ error: 'TIER_NOT_OPEN' });
    const general = await fan('window-general', eventId);
    const { rows } = await sql<{ id: string }>`SELECT id FROM seats WHERE event_id = ${eventId} AND allocation = 'EARLY' LIMIT 2`.execute(
      h.t.db,
    );
    const picked = await hold(general, eventId, { seatIds: rows.map((r) => Number(r.id)) });
    expect(picked.statusCode).toBe(409);
    expect(picked.json()).toMatchObject({ error: 'SEAT_NOT_IN_TIER', field: 'seatIds' });
    const { rows: holds } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM holds WHERE event_id = ${eventId}`.execute(h.t.db);
    expect(holds[0]!.n).toBe(0);
  });
});

describe('access rules', () => {
  it('lets a fan into an ACCESS_CODE presale queue only with a genuine code, and a code serves one account', async () => {
    const { eventId } = await makeEvent(h.t, tiered());
    const join = async (token: string, code?: string, tier = 'FANCLUB', device = 'presale-device-1') =>
      h.app.inject({
        method: 'POST',
        url: `/events/${eventId}/queue?tier=${tier}`,
        headers: { ...bearer(token), 'x-device-id': device, ...(code ? { 'x-access-code': code } : {}) },
      });
    const ann = await login(h.app, 'code-ann');
    const ben = await login(h.app, 'code-ben');
    const entries = async () =>
      (
        await sql<{
          n: number;
        }>`SELECT count(*)::int AS n FROM queue_entries q JOIN allocations a ON a.queue_id = q.event_id WHERE a.event_id = ${eventId}`.execute(
          h.t.db,
        )
      ).rows[0]!.n;

    expect((await join(ann)).json()).toMatchObject({ error: 'ACCESS_CODE_REQUIRED', field: 'x-access-code' });
    const { codes } = await issueAccessCodes(h.t.db, key, eventId, 'FANCLUB', { count: 2 });
    const forged = codes[0]!.slice(0, -2) + (codes[0]!.endsWith('AA') ? 'BB' : 'AA');
    expect((await join(ann, forged)).json()).toMatchObject({ error: 'ACCESS_CODE_FORGED' });
    const wrongTier = await signAccessCode(key, {
      kind: 'access',
      eventId,
      tier: 'CARD',
      codeId: 'x1',
      exp: Math.floor(Date.now() / 1000) + 600,
    });
    expect((await join(ann, wrongTier)).json()).toMatchObject({ error: 'ACCESS_CODE_WRONG_TIER' });
    const expired = await signAccessCode(key, {
      kind: 'access',
      eventId,
      tier: 'FANCLUB',
      codeId: 'x2',
      exp: Math.floor(Date.now() / 1000) - 1,
    });
    expect((await join(ann, expired)).json()).toMatchObject({ error: 'ACCESS_CODE_EXPIRED' });
    const {
      codes: [bensOwn],
    } = await issueAccessCodes(h.t.db, key, eventId, 'FANCLUB', { accountId: 'code-ben' });
    expect((await join(ann, bensOwn)).json()).toMatchObject({ error: 'ACCESS_CODE_WRONG_ACCOUNT' });
    expect(await entries()).toBe(0);

    // Ann's first use binds the code to her; Ben cannot use it after her, and her repeat join keeps her place.
    const first = await join(ann, codes[0]);
    expect(first.statusCode).toBe(200);
    const claims = JSON.parse(Buffer.from(first.json().queueToken.split('.')[0], 'base64url').toString());
    const fanclubQueue = (await h.app.inject({ url: `/events/${eventId}/fairness` })).json().tiers[0].queueId;
    expect(claims).toMatchObject({ eventId, queueId: fanclubQueue });
    const taken = await join(ben, codes[0], 'FANCLUB', 'presale-device-2');
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toMatchObject({ error: 'ACCESS_CODE_USED', field: 'x-access-code' });
    expect((await join(ann, codes[0])).json().position).toBe(first.json().position);
    expect(await entries()).toBe(1);
    // Concurrent first uses of one code by many accounts: exactly one wins.
    const racers = await Promise.all(Array.from({ length: 12 }, (_, i) => login(h.app, `code-racer-${i}`)));
    const raced = await Promise.all(racers.map((t, i) => join(t, codes[1], 'FANCLUB', `racer-device-${i}`)));
    expect(raced.filter((r) => r.statusCode === 200)).toHaveLength(1);
    expect(raced.filter((r) => r.statusCode === 409).every((r) => r.json().error === 'ACCESS_CODE_USED')).toBe(true);
    expect(await entries()).toBe(2);
    // The general sale needs no code; an unknown tier is refused.
    expect((await join(ben, undefined, 'GENERAL', 'presale-device-2')).statusCode).toBe(200);
    expect((await join(ben, undefined, 'NOPE', 'presale-device-2')).json()).toMatchObject({ error: 'TIER_NOT_FOUND', field: 'tier' });
  });

  it("admits from a presale's own queue: the admission token names the tier, and its holds take that tier's seats", async () => {
    const { eventId } = await makeEvent(h.t, tiered());
    const token = await login(h.app, 'queue-tier-fan');
    const device = 'queue-tier-device';
    const joined = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/queue?tier=CARD`,
      headers: { ...bearer(token), 'x-device-id': device },
    });
    expect(joined.statusCode).toBe(200);
    const queueId = (await h.app.inject({ url: `/events/${eventId}/fairness` })).json().tiers[1].queueId;
    // The controller's part, done by hand: the tier's queue is open and has admitted its first fans.
    await sql`UPDATE queue_state SET admitted_through = 10, heartbeat_at = now() + interval '1 minute', cohort_size = 0, sealed_at = now(), seed_revealed_at = now() WHERE event_id = ${queueId}`.execute(
      h.t.db,
    );
    const poll = () =>
      h.app.inject({
        url: `/events/${eventId}/queue/status`,
        headers: { ...bearer(token), 'x-device-id': device, 'x-queue-token': joined.json().queueToken },
      });
    // Each store-API instance refreshes its watermarks every 500 ms.
    const status = await pollUntil(poll, (r) => r.json().state === 'ADMITTED');
    expect(status.json()).toMatchObject({ state: 'ADMITTED' });
    const admission = status.json().admissionToken as string;
    expect(JSON.parse(Buffer.from(admission.split('.')[0]!, 'base64url').toString())).toMatchObject({ tier: 'CARD', eventId });
    const headers = { ...bearer(token), 'x-device-id': device, 'x-admission-token': admission };
    const made = await hold(headers, eventId, { section: 'A', quantity: 2 });
    expect(made.statusCode).toBe(201);
    const { rows } = await sql<{ allocation: string }>`SELECT DISTINCT allocation FROM seats WHERE hold_id = ${made.json().holdId}`.execute(
      h.t.db,
    );
    expect(rows).toEqual([{ allocation: 'CARD' }]);
    // The tier's watermark is public per tier.
    expect((await h.app.inject({ url: `/events/${eventId}/watermark?tier=CARD` })).json().admittedThrough).toBe(10);
    // A presale that stops selling tells its queue why: its seats went, or its window closed.
    const until = async (pattern: RegExp) => (await pollUntil(poll, (r) => pattern.test(r.json().message ?? ''))).json();
    await sql`UPDATE queue_state SET inventory_state = 'SOLD_OUT' WHERE event_id = ${queueId}`.execute(h.t.db);
    expect(await until(/sold out/)).toMatchObject({
      state: 'SOLD_OUT',
      message: "The Card partner presale has sold out. Join the general sale's queue.",
    });
    await sql`UPDATE allocations SET closes_at = now() - interval '1 second', rolls_forward_at = now() WHERE queue_id = ${queueId}`.execute(
      h.t.db,
    );
    expect(await until(/has ended/)).toMatchObject({
      state: 'SOLD_OUT',
      message: expect.stringMatching(/^The Card partner presale has ended/),
    });
  });

  it("takes only the partner's cards at a CARD_BIN tier's checkout, writing nothing for another card", async () => {
    const { eventId } = await makeEvent(h.t, tiered());
    const headers = await fan('card-fan', eventId, 'CARD');
    const made = await hold(headers, eventId, { section: 'A', quantity: 2 });
    expect(made.statusCode).toBe(201);
    const refused = await checkout(headers, made.json().holdId, OTHER_CARD);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error: 'CARD_NOT_ELIGIBLE', field: 'payment.instrument.number' });
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM checkout_attempts WHERE hold_id = ${made.json().holdId}`.execute(h.t.db);
    expect(rows[0]!.n).toBe(0);
    const paid = await checkout(headers, made.json().holdId, PARTNER_CARD);
    expect(paid.statusCode).toBe(200);
    // The general sale takes any card.
    const general = await fan('card-general-fan', eventId);
    const g = await hold(general, eventId, { section: 'A', quantity: 1 });
    expect((await checkout(general, g.json().holdId, OTHER_CARD)).statusCode).toBe(200);
  });
});

describe('limits across tiers', () => {
  it("counts an account's seats over every tier, under concurrent holds in several tiers", async () => {
    const { eventId } = await makeEvent(h.t, tiered({ limits: { perAccountSeats: 4, perInstrumentSeats: 4 } }));
    const token = await login(h.app, 'limit-fan');
    const tiers = ['FANCLUB', 'CARD', undefined];
    const attempts = await Promise.all(
      Array.from({ length: 9 }, async (_, i) =>
        hold({ ...(await admitted(token, eventId, undefined, tiers[i % 3])), 'idempotency-key': `limit-fan-request-${i}` }, eventId, {
          section: 'A',
          quantity: 2,
        }),
      ),
    );
    expect(attempts.filter((r) => r.statusCode === 201)).toHaveLength(2);
    expect(attempts.filter((r) => r.statusCode !== 201).every((r) => r.json().error === 'ACCOUNT_LIMIT_EXCEEDED')).toBe(true);
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM seats WHERE event_id = ${eventId} AND status = 'HELD' AND hold_id IN (SELECT id FROM holds WHERE account_id = 'limit-fan')`.execute(
      h.t.db,
    );
    expect(rows[0]!.n).toBe(4);
  });

  it('counts a payment card over every tier, under concurrent checkouts from several accounts', async () => {
    const { eventId } = await makeEvent(h.t, tiered({ limits: { perAccountSeats: 4, perInstrumentSeats: 4 } }));
    const fans = await Promise.all(['CARD', 'CARD', undefined, undefined].map((tier, i) => fan(`instrument-fan-${i}`, eventId, tier)));
    const holds = await Promise.all(fans.map((headers) => hold(headers, eventId, { section: 'A', quantity: 2 })));
    for (const r of holds) expect(r.statusCode).toBe(201);
    const paid = await Promise.all(fans.map((headers, i) => checkout(headers, holds[i]!.json().holdId, PARTNER_CARD)));
    expect(paid.filter((r) => r.statusCode === 200)).toHaveLength(2);
    expect(paid.filter((r) => r.statusCode !== 200).every((r) => r.json().error === 'INSTRUMENT_LIMIT_EXCEEDED')).toBe(true);
  });
});

describe('rolling forward', () => {
  it('moves exactly the unsold seats to the next tier in one transaction, and tells the waitlist', async () => {
    const { eventId, capacity } = await makeEvent(h.t, tiered({ limits: { perAccountSeats: 4, perInstrumentSeats: 4 } }));
    const bought = await fan('roll-buyer', eventId, 'FANCLUB');
    const b = await hold(bought, eventId, { section: 'A', quantity: 4 });
    expect((await checkout(bought, b.json().holdId, OTHER_CARD)).statusCode).toBe(200);
    const holder = await fan('roll-holder', eventId, 'FANCLUB');
    const live = await hold(holder, eventId, { section: 'B', quantity: 3 });
    expect(live.statusCode).toBe(201);
    // A hold that has lapsed counts as unsold (read-time expiry): its seats roll too.
    const lapser = await fan('roll-lapser', eventId, 'FANCLUB');
    const lapsed = await hold(lapser, eventId, { section: 'C', quantity: 2 });
    await sql`UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = ${lapsed.json().holdId}`.execute(h.t.db);
    await sql`UPDATE seats SET expires_at = now() - interval '1 second' WHERE hold_id = ${lapsed.json().holdId}`.execute(h.t.db);

    const before = await perTier(eventId);
    const unsold = before.FANCLUB!.available;
    expect(unsold).toBe(120 - 4 - 3);
    // Not due yet: refused unless forced.
    await expect(rollForward(h.t.db, eventId, 'FANCLUB', 'test')).rejects.toMatchObject({ code: 'ROLL_NOT_DUE' });
    const result = await rollForward(h.t.db, eventId, 'FANCLUB', 'test', { force: true });
    expect(result).toEqual({ eventId, from: 'FANCLUB', into: 'CARD', moved: unsold });
    const after = await perTier(eventId);
    expect(after.FANCLUB).toMatchObject({ capacity: 7, available: 0, held: 3, sold: 4, drift: 0 });
    expect(after.CARD).toMatchObject({ capacity: before.CARD!.capacity + unsold, available: before.CARD!.available + unsold, drift: 0 });
    expect(after.GENERAL!.capacity).toBe(before.GENERAL!.capacity);
    expect((await getInventoryCounts(h.t.db, eventId, capacity)).drift).toBe(0);
    const { rows: av } = await sql<{
      cause: string;
      seat_count: number;
    }>`SELECT cause, seat_count FROM availability_events WHERE event_id = ${eventId}`.execute(h.t.db);
    expect(av).toContainEqual({ cause: 'ALLOCATION_ROLLED', seat_count: unsold });
    const { rows: audit } = await sql<{
      details: { from: string; seats: number };
    }>`SELECT details FROM audit_log WHERE event_id = ${eventId} AND action = 'allocation.rolled'`.execute(h.t.db);
    expect(audit.map((a) => a.details)).toContainEqual(expect.objectContaining({ from: 'FANCLUB', into: 'CARD', seats: unsold }));

    // The presale has closed: its admissions hold nothing more (once each instance's one-second event cache has turned).
    clock.advance(1100);
    const late = await hold(await fan('roll-late', eventId, 'FANCLUB'), eventId, { section: 'A', quantity: 1 });
    expect(late.json()).toMatchObject({ error: 'TIER_CLOSED' });
    // The live hold is released after the roll; the sweep moves its seats on once the roll is due.
    await h.app.inject({ method: 'DELETE', url: `/holds/${live.json().holdId}`, headers: holder });
    await sql`UPDATE allocations SET closes_at = now() - interval '1 minute', rolls_forward_at = now() - interval '1 minute' WHERE event_id = ${eventId} AND code = 'FANCLUB'`.execute(
      h.t.db,
    );
    const swept = await rollDueAllocations(h.t.db, 'test');
    expect(swept).toContainEqual({ eventId, from: 'FANCLUB', into: 'CARD', moved: 3 });
    const final = await perTier(eventId);
    expect(final.FANCLUB).toMatchObject({ capacity: 4, available: 0, held: 0, sold: 4, drift: 0 });
    expect(final.CARD!.drift).toBe(0);
    // Nothing left to roll: the sweep is a no-op.
    expect((await rollDueAllocations(h.t.db, 'test')).filter((r) => r.eventId === eventId)).toEqual([]);
  });

  it('is checked every minute: the reconciliation reports a tier whose seats do not add up', async () => {
    const { eventId } = await makeEvent(h.t, tiered());
    const clean = (await reconcileInventory(h.t.db)).find((r) => r.eventId === eventId)!;
    expect(clean).toMatchObject({ drift: 0, tierDrift: {} });
    await sql`UPDATE allocations SET capacity = capacity - 1 WHERE event_id = ${eventId} AND code = 'CARD'`.execute(h.t.db);
    expect((await reconcileInventory(h.t.db)).find((r) => r.eventId === eventId)!.tierDrift).toEqual({ CARD: 1 });
  });
});

describe('tiers of a general-admission counter', () => {
  it('splits the counter between tiers, never oversells either under concurrent holds, and rolls free units forward', async () => {
    const { eventId, capacity } = await makeEvent(h.t, {
      onsaleAt: at(-60),
      limits: { perAccountSeats: 4, perInstrumentSeats: 4 },
      priceLevels: [{ code: 'GA', name: 'Field', priceCents: 5_000 }],
      sections: [{ kind: 'GA', code: 'FIELD', priceLevel: 'GA', capacity: 1000, shards: 8 }],
      allocations: [
        { code: 'FANCLUB', name: 'Fan club', share: 0.3, opensAt: at(-90), closesAt: at(120) },
        { code: 'GENERAL', name: 'General sale' },
      ],
    });
    expect(capacity).toBe(1000);
    const before = await perTier(eventId);
    expect([before.FANCLUB!.capacity, before.GENERAL!.capacity]).toEqual([300, 700]);
    const { rows: shards } = await sql<{ allocation: string; shards: number; units: number }>`
      SELECT allocation, count(*)::int AS shards, sum(capacity)::int AS units FROM ga_shards WHERE event_id = ${eventId} GROUP BY allocation ORDER BY allocation`.execute(
      h.t.db,
    );
    expect(shards).toEqual([
      { allocation: 'FANCLUB', shards: 2, units: 300 },
      { allocation: 'GENERAL', shards: 6, units: 700 },
    ]);

    // 200 fan-club fans ask for 2 units each (400 > 300); 100 general fans ask for 2 (200 < 700).
    const club = await Promise.all(Array.from({ length: 200 }, (_, i) => fan(`ga-club-${i}`, eventId, 'FANCLUB')));
    const open = await Promise.all(Array.from({ length: 100 }, (_, i) => fan(`ga-open-${i}`, eventId)));
    const [clubHolds, openHolds] = await Promise.all([
      Promise.all(club.map((headers) => hold(headers, eventId, { section: 'FIELD', quantity: 2 }))),
      Promise.all(open.map((headers) => hold(headers, eventId, { section: 'FIELD', quantity: 2 }))),
    ]);
    expect(clubHolds.filter((r) => r.statusCode === 201)).toHaveLength(150);
    expect(clubHolds.filter((r) => r.statusCode !== 201).every((r) => r.statusCode === 409)).toBe(true);
    expect(openHolds.filter((r) => r.statusCode === 201)).toHaveLength(100);
    const during = await perTier(eventId);
    expect(during.FANCLUB).toMatchObject({ capacity: 300, available: 0, held: 300, sold: 0, drift: 0 });
    expect(during.GENERAL).toMatchObject({ capacity: 700, available: 500, held: 200, drift: 0 });

    // Ten fan-club holds are released; the presale rolls its 20 free units into the general sale.
    const made = clubHolds.filter((r) => r.statusCode === 201).slice(0, 10);
    for (const r of made) {
      const owner = club[clubHolds.indexOf(r)]!;
      expect((await h.app.inject({ method: 'DELETE', url: `/holds/${r.json().holdId}`, headers: owner })).statusCode).toBe(200);
    }
    expect(await rollForward(h.t.db, eventId, 'FANCLUB', 'test', { force: true })).toEqual({
      eventId,
      from: 'FANCLUB',
      into: 'GENERAL',
      moved: 20,
    });
    const after = await perTier(eventId);
    expect(after.FANCLUB).toMatchObject({ capacity: 280, available: 0, held: 280, drift: 0 });
    expect(after.GENERAL).toMatchObject({ capacity: 720, available: 520, held: 200, drift: 0 });
    expect((await getInventoryCounts(h.t.db, eventId, capacity)).drift).toBe(0);
    expect((await reconcileInventory(h.t.db)).find((r) => r.eventId === eventId)).toMatchObject({ drift: 0, tierDrift: {} });
  });
});

describe("operators' controls over presale queues", () => {
  it('pauses every queue of the event at once (failing closed), and resumes or rates one tier by its code', async () => {
    const { eventId } = await makeEvent(h.t, tiered());
    const queues = async () =>
      (
        await sql<{ tier: string | null; paused: boolean; rate: number | null }>`
          SELECT a.code AS tier, q.paused, q.rate_override_per_min AS rate FROM queue_state q
          LEFT JOIN allocations a ON a.queue_id = q.event_id AND NOT a.general
          WHERE q.event_id = ${eventId} OR q.event_id IN (SELECT queue_id FROM allocations WHERE event_id = ${eventId})
          ORDER BY a.code NULLS FIRST`.execute(h.t.db)
      ).rows;
    const paused = await pauseQueue(h.t.db, eventId, { actor: 'ops@test', reason: 'payment provider incident' });
    expect(paused).toMatchObject({ eventId, paused: true });
    expect(await queues()).toEqual([
      { tier: null, paused: true, rate: null },
      { tier: 'CARD', paused: true, rate: null },
      { tier: 'FANCLUB', paused: true, rate: null },
    ]);
    // A fan of the card presale reads PAUSED, and nobody is admitted.
    const token = await login(h.app, 'paused-tier-fan');
    const joined = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/queue?tier=CARD`,
      headers: { ...bearer(token), 'x-device-id': 'paused-tier-device' },
    });
    expect(joined.json()).toMatchObject({ state: 'PAUSED' });

    expect(await resumeQueue(h.t.db, eventId, { actor: 'ops@test', reason: 'fan club first', tier: 'FANCLUB' })).toMatchObject({
      eventId,
      tier: 'FANCLUB',
      paused: false,
    });
    expect(await setRateOverride(h.t.db, eventId, 200, { actor: 'ops@test', tier: 'CARD' })).toMatchObject({
      eventId,
      tier: 'CARD',
      rateOverridePerMin: 200,
    });
    expect(await queues()).toEqual([
      { tier: null, paused: true, rate: null },
      { tier: 'CARD', paused: true, rate: 200 },
      { tier: 'FANCLUB', paused: false, rate: null },
    ]);
    await expect(pauseQueue(h.t.db, eventId, { actor: 'ops@test', reason: 'x', tier: 'NOPE' })).rejects.toMatchObject({
      code: 'TIER_NOT_FOUND',
      details: { field: 'tier' },
    });
    const { rows: audit } = await sql<{ action: string; details: Record<string, unknown> }>`
      SELECT action, details FROM audit_log WHERE event_id = ${eventId} AND action LIKE 'queue.%' ORDER BY id`.execute(h.t.db);
    expect(audit.map((a) => [a.action, a.details.presales ?? a.details.tier ?? null])).toEqual([
      ['queue.paused', ['FANCLUB', 'CARD']],
      ['queue.resumed', 'FANCLUB'],
      ['queue.rate_override', 'CARD'],
    ]);
    // Resuming the event resumes every queue.
    await resumeQueue(h.t.db, eventId, { actor: 'ops@test' });
    expect((await queues()).every((q) => !q.paused)).toBe(true);
  });
});
