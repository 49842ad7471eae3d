import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { expandSeats, getEvent, parseEventFile } from '@onsale/shared/events';
import { createTestDatabase, withAdminClient, withDatabase, type TestDatabase } from '@onsale/shared/testing';

import { onsale, onsaleProcess, root } from './run.js';

const readJson = (path: string) => JSON.parse(readFileSync(join(root, path), 'utf8')) as Record<string, unknown>;

async function counts(t: TestDatabase) {
  const n = async (table: 'events' | 'listings' | 'sections' | 'seats' | 'price_levels') =>
    Number(
      (
        await t.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    events: await n('events'),
    listings: await n('listings'),
    sections: await n('sections'),
    seats: await n('seats'),
    priceLevels: await n('price_levels'),
  };
}

describe('example event files', () => {
  it('stadium.json: 60,000 seats in exactly 150 sections, several price levels', () => {
    const spec = parseEventFile(readJson('examples/stadium.json'));
    const seats = expandSeats(spec);
    expect(spec.sections).toHaveLength(150);
    expect(seats).toHaveLength(60_000);
    expect(new Set(seats.map((s) => s.sectionCode)).size).toBe(150);
    expect(spec.priceLevels.length).toBeGreaterThanOrEqual(2);
    expect(Date.parse(spec.onsaleAt)).toBeGreaterThan(Date.parse('2026-11-29T00:00:00Z'));
  });

  it('club.json: a few hundred seats in 2-4 sections, 2 price levels', () => {
    const spec = parseEventFile(readJson('examples/club.json'));
    const seats = expandSeats(spec);
    expect(seats.length).toBeGreaterThanOrEqual(200);
    expect(seats.length).toBeLessThan(1000);
    expect(spec.sections.length).toBeGreaterThanOrEqual(2);
    expect(spec.sections.length).toBeLessThanOrEqual(4);
    expect(spec.priceLevels).toHaveLength(2);
  });
});

describe('onsale CLI against real PostgreSQL', () => {
  let t: TestDatabase;
  let scratch: string;
  beforeAll(async () => {
    t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 2 });
    scratch = mkdtempSync(join(tmpdir(), 'onsale-cli-test-'));
  });
  afterAll(async () => {
    await t?.drop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('event:create --file examples/club.json prints the ids as JSON and writes every seat', async () => {
    // The real binary once (tsx apps/cli/src/main.ts in a child process): output, exit status, nothing on stderr.
    const r = await onsaleProcess(t.url, 'event:create', '--file', 'examples/club.json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { eventId: string; listingId: string; capacity: number };
    expect(out).toEqual({ eventId: expect.any(String), listingId: expect.any(String), capacity: 300, signedOff: true });
    // An operator tool: the actor's sign-off of the fairness mode is recorded with the event, so it opens at its time.
    const signOff = await t.db
      .selectFrom('fairness_signoffs')
      .select(['fairness_mode', 'signed_off_by', 'superseded_at'])
      .where('event_id', '=', out.eventId)
      .execute();
    expect(signOff).toEqual([
      { fairness_mode: 'RANDOMIZED_PREOPEN_THEN_FIFO', signed_off_by: expect.stringMatching(/^cli:/), superseded_at: null },
    ]);

    const seats = await t.db.selectFrom('seats').select(['section_code', 'status']).where('event_id', '=', out.eventId).execute();
    expect(seats).toHaveLength(300);
    expect(seats.every((s) => s.status === 'AVAILABLE')).toBe(true);
    const sections = await t.db
      .selectFrom('sections')
      .select(['code', 'capacity'])
      .where('event_id', '=', out.eventId)
      .orderBy('code')
      .execute();
    expect(sections).toEqual([
      { code: 'BALC', capacity: 64 },
      { code: 'FRONT', capacity: 76 },
      { code: 'MAIN', capacity: 160 },
    ]);
    const event = await t.db
      .selectFrom('events')
      .select(['listing_id', 'capacity'])
      .where('id', '=', out.eventId)
      .executeTakeFirstOrThrow();
    expect(event).toEqual({ listing_id: out.listingId, capacity: 300 });
  });

  it('event:create --no-signoff leaves the sign-off to a promoter: the event is created but will not open', async () => {
    const unsigned = JSON.parse(
      (await onsale(t.url, 'event:create', '--file', 'examples/club.json', '--no-signoff', '--actor', 'ops@example.com')).stdout,
    ) as { eventId: string; signedOff: boolean };
    expect(unsigned.signedOff).toBe(false);
    expect(await t.db.selectFrom('fairness_signoffs').select('id').where('event_id', '=', unsigned.eventId).execute()).toEqual([]);
    expect(await getEvent(t.db, unsigned.eventId)).toMatchObject({ fairnessSignedOff: false, awaitingSignOff: true });
    const created = await t.db
      .selectFrom('audit_log')
      .select('actor')
      .where('event_id', '=', unsigned.eventId)
      .where('action', '=', 'event.created')
      .executeTakeFirstOrThrow();
    expect(created.actor).toBe('ops@example.com');
  });

  it('event:show prints settings and inventory counts; an unknown id is a clear error', async () => {
    const created = JSON.parse((await onsale(t.url, 'event:create', '--file', 'examples/club.json')).stdout) as { eventId: string };
    const r = await onsale(t.url, 'event:show', created.eventId);
    expect(r.code).toBe(0);
    const shown = JSON.parse(r.stdout);
    expect(shown.event).toMatchObject({
      id: created.eventId,
      venueName: 'The Lantern Room',
      holdTtlSeconds: 360,
      perAccountSeatLimit: 4,
      capacity: 300,
    });
    expect(shown.inventory).toEqual({ capacity: 300, available: 300, held: 0, sold: 0, drift: 0 });
    expect(shown.sections.map((s: { code: string; available: number; priceCents: number }) => [s.code, s.available, s.priceCents])).toEqual(
      [
        ['FRONT', 76, 6500],
        ['MAIN', 160, 3800],
        ['BALC', 64, 3800],
      ],
    );

    const ids = ['00000000-0000-4000-8000-000000000000', 'not-a-uuid'];
    const runs = await Promise.all(ids.map((id) => onsale(t.url, 'event:show', id)));
    for (const [i, missing] of runs.entries()) {
      const id = ids[i]!;
      expect(missing.code).toBe(1);
      expect(missing.stdout).toBe('');
      expect(missing.stderr).toContain('EVENT_NOT_FOUND');
      expect(missing.stderr).toContain(id);
      expect(missing.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('event:list lists created events', async () => {
    const r = await onsale(t.url, 'event:list');
    expect(r.code).toBe(0);
    const events = JSON.parse(r.stdout) as { name: string; capacity: number }[];
    expect(events.length).toBeGreaterThanOrEqual(1);
    expect(events[0]).toMatchObject({ venueName: 'The Lantern Room', capacity: 300 });
  });

  it('an invalid event file: exit 1, every issue named by its path on stderr, nothing written', async () => {
    const bad = readJson('examples/club.json') as { sections: Record<string, unknown>[]; holds: Record<string, unknown> };
    bad.sections[1]!.priceLevel = 'VIP';
    bad.sections.push({ ...bad.sections[2]!, seatsPerRow: undefined, qualityRank: 3 });
    const file = join(scratch, 'bad.json');
    writeFileSync(file, JSON.stringify(bad));
    const before = await counts(t);

    const r = await onsale(t.url, 'event:create', '--file', file);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('sections.3.rows: give the number of rows and the seats per row (or the rows one by one)');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(await counts(t)).toEqual(before);

    // Once the shape is right, cross-field rules name their paths too.
    bad.sections.pop();
    writeFileSync(file, JSON.stringify(bad));
    const r2 = await onsale(t.url, 'event:create', '--file', file);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain('sections.1.priceLevel: there is no price level VIP; choose one of the price levels above');
    expect(await counts(t)).toEqual(before);

    const notJson = join(scratch, 'not.json');
    writeFileSync(notJson, '{ not json');
    const [r3, r4] = await Promise.all([
      onsale(t.url, 'event:create', '--file', notJson),
      onsale(t.url, 'event:create', '--file', join(scratch, 'missing.json')),
    ]);
    expect(r3.code).toBe(1);
    expect(r3.stderr).toContain('INVALID_JSON');
    expect(r4.code).toBe(1);
    expect(r4.stderr).toContain('no such file');
    expect(await counts(t)).toEqual(before);
  });

  it('event:create refuses a show time that has passed and an on-sale more than 5 minutes ago, as the console does; within 5 minutes it opens now; a free price level is a warning', async () => {
    const club = readJson('examples/club.json') as { priceLevels: Record<string, unknown>[] };
    const file = join(scratch, 'times.json');
    const before = await counts(t);
    writeFileSync(file, JSON.stringify({ ...club, startsAt: '2025-01-01T20:00:00Z', onsaleAt: '2025-01-01T10:00:00Z' }));
    const past = await onsale(t.url, 'event:create', '--file', file);
    expect(past.code).toBe(1);
    expect(past.stdout).toBe('');
    expect(past.stderr).toContain('error EVENT_TIME_PASSED: the event file has 2 problems; nothing was written');
    expect(past.stderr).toContain('startsAt: this time has passed: enter when the show starts, later than now');
    expect(past.stderr).toContain('onsaleAt: this time has passed: choose when the sale opens, later than now, or open the sale now');
    expect(await counts(t)).toEqual(before);

    const starts = new Date(Date.now() + 30 * 86_400_000).toISOString();
    writeFileSync(file, JSON.stringify({ ...club, startsAt: starts, onsaleAt: new Date(Date.now() - 6 * 60_000).toISOString() }));
    const late = await onsale(t.url, 'event:create', '--file', file);
    expect(late.code).toBe(1);
    expect(late.stderr).toContain('error EVENT_TIME_PASSED: the event file has 1 problem;');
    expect(await counts(t)).toEqual(before);

    const free = club.priceLevels.map((p, i) => (i === 0 ? { ...p, priceCents: 0 } : p));
    writeFileSync(
      file,
      JSON.stringify({ ...club, priceLevels: free, startsAt: starts, onsaleAt: new Date(Date.now() - 60_000).toISOString() }),
    );
    const now = await onsale(t.url, 'event:create', '--file', file);
    expect(now.code).toBe(0);
    expect(now.stderr).toMatch(/^warning FREE_PRICE_LEVEL \(priceLevels\.0\.priceCents\): The price level ".+" costs nothing/);
    const { eventId } = JSON.parse(now.stdout) as { eventId: string };
    expect((await getEvent(t.db, eventId)).onsaleAt.getTime()).toBeLessThan(Date.now());
  });

  it('migrate applies pending migrations, then is a no-op', async () => {
    // An empty database, never migrated; dropped below whatever happens.
    const name = `onsale_cli_${randomBytes(6).toString('hex')}`;
    const admin = withDatabase(inject('templateDatabaseUrl'), 'postgres');
    await withAdminClient(admin, (c) => c.query(`CREATE DATABASE ${name}`));
    try {
      const url = withDatabase(admin, name);
      const [notMigrated, onTemplateCopy] = await Promise.all([
        onsale(url, 'event:create', '--file', 'examples/club.json'),
        onsale(t.url, 'migrate'),
      ]);
      expect(notMigrated.code).toBe(1);
      expect(notMigrated.stderr).toContain('NOT_MIGRATED');
      const first = await onsale(url, 'migrate');
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/^applied 2026_11_29_1530_create_core_schema$/m);
      const second = await onsale(url, 'migrate');
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).not.toContain('applied');
      expect(second.stdout).toContain('up to date');
      expect(onTemplateCopy.code, onTemplateCopy.stderr).toBe(0);
      expect(onTemplateCopy.stdout).not.toContain('applied');
    } finally {
      await withAdminClient(admin, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    }
  });

  it('a bad command line prints usage to stderr and exits 2', async () => {
    const lines = [['frobnicate'], ['event:create'], ['event:create', '--fiel', 'x.json'], ['event:show'], ['migrate', 'extra'], []];
    const runs = await Promise.all(lines.map((args, i) => (i === 0 ? onsaleProcess(t.url, ...args) : onsale(t.url, ...args))));
    runs.forEach((r, i) => {
      expect(r.code, lines[i]!.join(' ')).toBe(2);
      expect(r.stderr).toContain('usage: onsale <command>');
      expect(r.stdout).toBe('');
    });
    const badConfig = await onsaleProcess('mysql://somewhere/db', 'event:list');
    expect(badConfig.code).toBe(1);
    expect(badConfig.stderr).toContain('DATABASE_URL: must be a postgres:// or postgresql:// URL');
    const help = await onsale(t.url, 'help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('event:create --file <json>');
  });
});
