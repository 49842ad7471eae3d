import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil } from '@onsale/shared/testing';
import { sql } from '@onsale/shared/db';
import { commitSeed } from '@onsale/shared/queue';
import { bearer, login, makeEvent, setupApp, type TestApp } from './helper.js';

let h: TestApp;
let eventId: string;
let alice: string;

beforeAll(async () => {
  h = await setupApp();
  ({ eventId } = await makeEvent(h.t, { fairnessMode: 'FIFO' }));
  alice = await login(h.app, 'q-alice');
});
afterAll(() => h.close());

const join = (token: string, id = eventId, device = 'device-alice-1') =>
  h.app.inject({ method: 'POST', url: `/events/${id}/queue`, headers: { ...bearer(token), 'x-device-id': device } });
const status = (token: string, queueToken: string, id = eventId, device = 'device-alice-1') =>
  h.app.inject({ url: `/events/${id}/queue/status`, headers: { ...bearer(token), 'x-device-id': device, 'x-queue-token': queueToken } });

describe('joining the waiting room', () => {
  it('gives one position per account: a repeated join returns the same position', async () => {
    const a = await join(alice);
    expect(a.statusCode).toBe(200);
    const b = await join(alice);
    const claims = (t: string) => JSON.parse(Buffer.from(t.split('.')[0]!, 'base64url').toString());
    expect(claims(b.json().queueToken).joinIndex).toBe(claims(a.json().queueToken).joinIndex);
    expect(b.json().position).toBe(a.json().position);
    const rows = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM queue_entries WHERE event_id = ${eventId} AND account_id = 'q-alice'`.execute(h.t.db);
    expect(rows.rows[0]!.n).toBe(1);
  });

  it('makes one row for concurrent identical joins', async () => {
    const bob = await login(h.app, 'q-bob');
    const results = await Promise.all(Array.from({ length: 20 }, () => join(bob, eventId, 'device-bob-1')));
    for (const r of results) expect(r.statusCode).toBe(200);
    expect(new Set(results.map((r) => r.json().position)).size).toBe(1);
    const rows = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM queue_entries WHERE event_id = ${eventId} AND account_id = 'q-bob'`.execute(h.t.db);
    expect(rows.rows[0]!.n).toBe(1);
  });

  it('refuses a join without a device id, or for an unknown event (a join from another device moves the place: place-moves.test.ts)', async () => {
    const noDevice = await h.app.inject({ method: 'POST', url: `/events/${eventId}/queue`, headers: bearer(alice) });
    expect(noDevice.statusCode).toBe(400);
    expect(noDevice.json().field).toContain('x-device-id');
    const unknown = await join(alice, '00000000-0000-0000-0000-000000000000');
    expect(unknown.statusCode).toBe(404);
  });
});

describe('status polls', () => {
  it('fail closed: with no controller heartbeat the queue is PAUSED and nobody is admitted', async () => {
    const q = (await join(alice)).json().queueToken;
    await sql`UPDATE queue_state SET admitted_through = 1000, heartbeat_at = NULL WHERE event_id = ${eventId}`.execute(h.t.db);
    const r = await pollUntil(
      () => status(alice, q),
      (x) => x.json().admittedThrough === 1000,
    );
    expect(r.json()).toMatchObject({ state: 'PAUSED', admittedThrough: 1000 });
    expect(r.json().message).toMatch(/paused/i);
    expect(r.json().admissionToken).toBeUndefined();
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('admit at or below the watermark while the controller is alive, and pause when an operator pauses', async () => {
    const q = (await join(alice)).json().queueToken;
    await sql`UPDATE queue_state SET admitted_through = 1000, heartbeat_at = now() + interval '1 minute', paused = false WHERE event_id = ${eventId}`.execute(
      h.t.db,
    );
    const r = await pollUntil(
      () => status(alice, q),
      (x) => x.json().state === 'ADMITTED',
    );
    expect(r.json().state).toBe('ADMITTED');
    expect(r.json().admissionToken).toMatch(/^[\w-]+\.[\w-]+$/);

    await sql`UPDATE queue_state SET paused = true, paused_reason = 'test' WHERE event_id = ${eventId}`.execute(h.t.db);
    const p = await pollUntil(
      () => status(alice, q),
      (x) => x.json().state === 'PAUSED',
    );
    expect(p.json().state).toBe('PAUSED');
    expect(p.json().admissionToken).toBeUndefined();
    await sql`UPDATE queue_state SET paused = false, heartbeat_at = NULL WHERE event_id = ${eventId}`.execute(h.t.db);
  });

  it('refuse forged tokens, tokens of another device, and tokens for another event', async () => {
    const q = (await join(alice)).json().queueToken as string;
    const forged = await status(alice, q.slice(0, -3) + (q.endsWith('AAA') ? 'BBB' : 'AAA'));
    expect(forged.statusCode).toBe(401);
    expect(forged.json().error).toBe('TOKEN_FORGED');
    const device = await status(alice, q, eventId, 'device-alice-9');
    expect(device.statusCode).toBe(403);
    expect(device.json().error).toBe('TOKEN_WRONG_DEVICE');
    const { eventId: other } = await makeEvent(h.t);
    const wrongEvent = await status(alice, q, other);
    expect(wrongEvent.statusCode).toBe(403);
    expect(wrongEvent.json().error).toBe('TOKEN_WRONG_EVENT');
    const missing = await h.app.inject({
      url: `/events/${eventId}/queue/status`,
      headers: { ...bearer(alice), 'x-device-id': 'device-alice-1' },
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().field).toContain('x-queue-token');
  });
});

describe('public fairness facts', () => {
  it('publish the mode, its description and the seed commitment before the open, never the seed', async () => {
    const { eventId: later } = await makeEvent(h.t, {
      onsaleAt: new Date(Date.now() + 86400_000).toISOString(),
      queueCopy: { WAITING: 'You are in the pre-sale group: your place is drawn at the open.' },
    });
    const f = await h.app.inject({ url: `/events/${later}/fairness` });
    expect(f.statusCode).toBe(200);
    expect(f.json()).toMatchObject({ mode: 'RANDOMIZED_PREOPEN_THEN_FIFO', seed: null, cohortSize: null });
    expect(f.json().seedCommitment).toMatch(/^[0-9a-f]{64}$/);
    const stored = await sql<{ seed_hex: string }>`SELECT seed_hex FROM queue_state WHERE event_id = ${later}`.execute(h.t.db);
    expect(await commitSeed(stored.rows[0]!.seed_hex)).toBe(f.json().seedCommitment);

    // A pre-open join is in the cohort: no position until the open is sealed.
    const j = await join(alice, later);
    // Before the open: WAITING even with no controller heartbeat (nobody is admitted before the open anyway).
    expect(j.json()).toMatchObject({
      cohort: 'PREOPEN',
      position: null,
      state: 'WAITING',
      message: 'You are in the pre-sale group: your place is drawn at the open.',
    });
    const w = await h.app.inject({ url: `/events/${later}/watermark` });
    expect(w.json()).toMatchObject({ admittedThrough: 0, state: 'NOT_OPEN' });
  });
});

describe('queue metrics', () => {
  it('exports joins, the watermark, admissions per minute and sold-out propagation', async () => {
    const m = await h.app.inject({ url: '/metrics' });
    expect(m.statusCode).toBe(200);
    for (const name of [
      'queue_joined_total',
      'admission_watermark',
      'admitted_per_min',
      'holds_created_per_min_per_admitted_per_min',
      'soldout_propagation_seconds',
      'requests_without_admission_token_total',
    ])
      expect(m.body, name).toContain(name);
    expect(m.body).toMatch(new RegExp(`queue_joined_total\\{event="${eventId}"\\} [1-9]`));
  });
});

describe('a position reached and never used', () => {
  it('expires after the claim window: status says POSITION_EXPIRED, and joining again puts the fan at the back', async () => {
    const { eventId: ev } = await makeEvent(h.t, { fairnessMode: 'FIFO' });
    const late = await login(h.app, 'q-late');
    const first = await join(late, ev, 'device-late-1');
    const pos = first.json().position as number;
    // The fan joined 20 minutes ago; the watermark passed their position 11 minutes ago and nobody claimed it.
    await sql`UPDATE queue_entries SET joined_at = now() - interval '20 minutes' WHERE event_id = ${ev}`.execute(h.t.db);
    const reached = Date.now() - 11 * 60_000;
    await sql`UPDATE queue_state SET admitted_through = ${pos}, heartbeat_at = now() + interval '1 minute',
              watermark_history = ${JSON.stringify([[reached, pos]])}::jsonb WHERE event_id = ${ev}`.execute(h.t.db);
    const token = (await join(late, ev, 'device-late-1')).json().queueToken; // signed with the entry's joined_at
    const s = await pollUntil(
      () => status(late, token, ev, 'device-late-1'),
      (x) => x.statusCode === 410,
    );
    expect(s.statusCode).toBe(410);
    expect(s.json()).toMatchObject({ error: 'POSITION_EXPIRED', field: 'x-queue-token' });
    const again = await join(late, ev, 'device-late-1');
    expect(again.statusCode).toBe(200);
    expect(again.json().position).toBeGreaterThan(pos);
    expect(again.json().state).toBe('WAITING');
    // and a fresh place does not expire at once, even behind an old watermark
    const fresh = await status(late, again.json().queueToken, ev, 'device-late-1');
    expect(fresh.statusCode).toBe(200);
  });
});
