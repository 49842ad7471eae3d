import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AdmissionController } from '@onsale/shared/admission';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { generateSeed } from '@onsale/shared/queue/fairness';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';

import { onsale } from './run.js';

let t: TestDatabase;
let eventId: string;
const MISSING = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
  const spec = parseEventFile({
    name: 'CLI queue',
    venueName: 'Hall',
    startsAt: new Date(Date.now() + 86_400_000).toISOString(),
    onsaleAt: new Date(Date.now() - 1000).toISOString(),
    priceLevels: [{ code: 'P', name: 'All', priceCents: 1000 }],
    sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 5, seatsPerRow: 10 }],
  });
  ({ eventId } = await t.db.transaction().execute((trx) => createEvent(trx, spec, 'test', { signOff: true })));
});
afterAll(() => t?.drop());

const audits = (action: string) =>
  t.db
    .selectFrom('audit_log')
    .select(['actor', 'details'])
    .where('event_id', '=', eventId)
    .where('action', '=', action)
    .orderBy('id')
    .execute();

describe('onsale queue:pause / queue:resume / queue:rate', () => {
  it('pause with a reason: prints the controls as JSON, writes queue_state and the audit log', async () => {
    const r = await onsale(t.url, 'queue:pause', eventId, '--reason', 'payment provider degraded', '--actor', 'ops:alice');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ eventId, paused: true, pausedReason: 'payment provider degraded', pausedBy: 'ops:alice' });
    const q = await t.db
      .selectFrom('queue_state')
      .select(['paused', 'paused_by'])
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
    expect(q).toEqual({ paused: true, paused_by: 'ops:alice' });
    expect((await audits('queue.paused')).at(-1)).toMatchObject({ actor: 'ops:alice', details: { reason: 'payment provider degraded' } });
  });

  it('resume; the actor defaults to cli:<os user>', async () => {
    const r = await onsale(t.url, 'queue:resume', eventId);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ paused: false, pausedReason: null });
    expect((await audits('queue.resumed')).at(-1)!.actor).toMatch(/^cli:.+/);
  });

  it('a pause without --reason is a bad command line (exit 2); an empty reason is refused by the domain (exit 1)', async () => {
    const [none, empty] = await Promise.all([
      onsale(t.url, 'queue:pause', eventId),
      onsale(t.url, 'queue:pause', eventId, '--reason', '  '),
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--reason');
    expect(none.stderr).toContain('usage: onsale');
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('error REASON_REQUIRED');
    expect(empty.stderr).not.toMatch(/\n\s+at /);
    expect((await t.db.selectFrom('queue_state').select('paused').where('event_id', '=', eventId).executeTakeFirstOrThrow()).paused).toBe(
      false,
    );
  });

  it('rate: sets and clears the override; a bad value is exit 2 naming <perMinute>', async () => {
    const set = await onsale(t.url, 'queue:rate', eventId, '900', '--actor', 'ops:bob', '--reason', 'gateway at half capacity');
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ rateOverridePerMin: 900 });
    const off = await onsale(t.url, 'queue:rate', eventId, 'off');
    expect(off.code).toBe(0);
    expect(JSON.parse(off.stdout)).toMatchObject({ rateOverridePerMin: null });
    expect((await audits('queue.rate_override')).map((a) => a.details)).toEqual([
      { perMinute: 900, previousPerMinute: null, reason: 'gateway at half capacity' },
      { perMinute: null, previousPerMinute: 900 },
    ]);

    const bad = await Promise.all([
      onsale(t.url, 'queue:rate', eventId, 'fast'),
      onsale(t.url, 'queue:rate', eventId, '200000'),
      onsale(t.url, 'queue:rate', eventId),
    ]);
    for (const r of bad) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
    }
    expect(bad[0].stderr).toContain('<perMinute> must be a whole number');
    expect(bad[1].stderr).toContain('<perMinute>: the rate must be a whole number of admits per minute from 0 to 100000');
    expect(bad[2].stderr).toContain('<eventId> <perMinute|off>');
  });

  it('an unknown event: exit 1, EVENT_NOT_FOUND, no stack trace', async () => {
    const runs = await Promise.all([
      onsale(t.url, 'queue:pause', MISSING, '--reason', 'x'),
      onsale(t.url, 'queue:resume', 'not-an-id'),
      onsale(t.url, 'queue:rate', MISSING, '10'),
      onsale(t.url, 'audit:verify', MISSING),
      onsale(t.url, 'audit:summary', MISSING),
    ]);
    for (const r of runs) {
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('error EVENT_NOT_FOUND');
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});

describe('onsale audit:verify / audit:summary', () => {
  beforeAll(async () => {
    await sql`INSERT INTO accounts (id) SELECT 'cli-fan-' || g FROM generate_series(0, 199) g`.execute(t.db);
    await sql`
      INSERT INTO queue_entries (event_id, account_id, device_hash, join_index, cohort)
      SELECT ${eventId}, 'cli-fan-' || g, md5(g::text), g, 'PREOPEN' FROM generate_series(0, 199) g`.execute(t.db);
    const controller = new AdmissionController({ db: t.db, connectionString: t.url, instanceId: 'cli-test' });
    await controller.tickOnce(); // seals the cohort and reveals the seed
    await controller.stop();
  });

  it('verify prints every check and exits 0 when the published data holds', async () => {
    const r = await onsale(t.url, 'audit:verify', eventId);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('pre-open cohort of 200, 200 accounts');
    for (const check of ['seed_revealed', 'commitment', 'cohort_sealed', 'join_list', 'permutation', 'positions'])
      expect(r.stdout).toMatch(new RegExp(`ok +${check} `));
    expect(r.stdout).toContain('verified: all 6 checks passed');
  });

  it('summary: the publishable one (nothing private) as markdown by default, JSON with --format json, the complete one with --operator; a bad format is exit 2', async () => {
    const [md, js, ops, bad] = await Promise.all([
      onsale(t.url, 'audit:summary', eventId),
      onsale(t.url, 'audit:summary', eventId, '--format', 'json'),
      onsale(t.url, 'audit:summary', eventId, '--format', 'json', '--operator'),
      onsale(t.url, 'audit:summary', eventId, '--format', 'xml'),
    ]);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain('# On-sale summary: CLI queue');
    expect(md.stdout).toContain('## When the queue stopped');
    expect(md.stdout).not.toContain('payment provider degraded');
    expect(md.stdout).not.toContain('ops:alice');
    expect(js.code).toBe(0);
    const summary = JSON.parse(js.stdout);
    expect(summary).toMatchObject({ eventId, fairness: { mode: 'RANDOMIZED_PREOPEN_THEN_FIFO', cohortSize: 200 } });
    // The pause of the first test, resumed by the second: its length is published, not who paused or why.
    expect(summary.pauses[0]).toEqual({
      pausedAt: expect.any(String),
      resumedAt: expect.any(String),
      pausedSeconds: expect.any(Number),
      note: null,
    });
    expect(JSON.parse(ops.stdout).pauses[0]).toMatchObject({ pausedBy: 'ops:alice', reason: 'payment provider degraded' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--format must be markdown or json');
  });

  it('verify fails (exit 1, AUDIT_FAILED) when the revealed seed does not match the commitment', async () => {
    await sql`UPDATE queue_state SET seed_hex = ${generateSeed()} WHERE event_id = ${eventId}`.execute(t.db);
    const r = await onsale(t.url, 'audit:verify', eventId);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAIL +commitment /);
    expect(r.stderr).toContain('error AUDIT_FAILED: 1 of 6 checks failed: commitment');
  });
});

describe('usage', () => {
  it('lists the war-room and audit commands', async () => {
    const r = await onsale(t.url, 'help');
    expect(r.code).toBe(0);
    for (const c of [
      'queue:pause <eventId> --reason <text>',
      'queue:resume <eventId>',
      'queue:rate <eventId> <perMinute|off>',
      'audit:verify <eventId>',
      'audit:summary <eventId> [--format markdown|json]',
    ])
      expect(r.stdout).toContain(c);
  });
});
