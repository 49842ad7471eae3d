import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { WaitlistService } from '@onsale/shared/waitlist';
import { onsale } from './run.js';

let t: TestDatabase;
let eventId: string;
let listingId: string;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
  ({ eventId } = await createOpenEvent(t.db, { name: 'CLI waitlist' }));
  ({ listing_id: listingId } = await t.db.selectFrom('events').select('listing_id').where('id', '=', eventId).executeTakeFirstOrThrow());
  await new WaitlistService(t.db).join('cli-fan', listingId, { quantity: 2 });
});
afterAll(() => t?.drop());

describe('onsale listing:* / order:cancel / inventory:add', () => {
  it('listing:waitlist changes the settings (audited) and listing:show reports them with the live entries', async () => {
    const r = await onsale(
      t.url,
      'listing:waitlist',
      listingId,
      '--mode',
      'BROADCAST',
      '--offer-minutes',
      '10',
      '--ttl-days',
      '14',
      '--actor',
      'ops@test',
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).waitlist).toMatchObject({ mode: 'BROADCAST', offerMinutes: 10, ttlDays: 14, live: 1 });
    const audit = await t.db.selectFrom('audit_log').select(['actor', 'action']).where('action', '=', 'listing.waitlist').execute();
    expect(audit).toEqual([{ actor: 'ops@test', action: 'listing.waitlist' }]);
    const bad = await onsale(t.url, 'listing:waitlist', listingId, '--mode', 'SOMETIMES');
    expect(bad.code).toBe(2);
    // The console's bounds: the CLI changes the settings through the same service.
    const tooLong = await onsale(t.url, 'listing:waitlist', listingId, '--ttl-days', '400');
    expect([tooLong.code, tooLong.stderr.includes('INVALID_WAITLIST_SETTINGS')]).toEqual([1, true]);
    const unknown = await onsale(t.url, 'listing:show', '00000000-0000-4000-8000-000000000000');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('LISTING_NOT_FOUND');
  });

  it('inventory:add appends rows, raises capacity and tells the waitlist; order:cancel needs a reason', async () => {
    const r = await onsale(t.url, 'inventory:add', eventId, '--section', 'S', '--rows', '1', '--seats-per-row', '6');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ eventId, section: 'S', added: 6, firstRow: 'C' });
    const ev = await t.db.selectFrom('events').select('capacity').where('id', '=', eventId).executeTakeFirstOrThrow();
    expect(ev.capacity).toBe(26);
    const av = await t.db.selectFrom('availability_events').selectAll().where('id', '=', out.availabilityId).executeTakeFirstOrThrow();
    expect(av).toMatchObject({ cause: 'INVENTORY_ADDED', seat_count: 6, mode: 'ON_SALE' });
    expect((await onsale(t.url, 'inventory:add', eventId, '--section', 'NOPE', '--rows', '1', '--seats-per-row', '2')).stderr).toContain(
      'SECTION_NOT_FOUND',
    );
    expect((await onsale(t.url, 'order:cancel', '00000000-0000-4000-8000-000000000000')).code).toBe(2);
    const missing = await onsale(t.url, 'order:cancel', '00000000-0000-4000-8000-000000000000', '--reason', 'fraud');
    expect([missing.code, missing.stderr.includes('ORDER_NOT_FOUND')]).toEqual([1, true]);
    const m = await onsale(t.url, 'waitlist:maintain');
    expect(JSON.parse(m.stdout)).toMatchObject({ entriesDeleted: 0 });
    const n = await sql<{ n: number }>`SELECT count(*)::int AS n FROM seats WHERE event_id = ${eventId}`.execute(t.db);
    expect(n.rows[0]!.n).toBe(26);
  });
});
