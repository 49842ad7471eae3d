import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pollUntil } from '@onsale/shared/testing';
import { sql } from '@onsale/shared/db';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { ADMISSION_OPT_OUT } from '../src/plugins/admission-gate.js';
import { admitted, bearer, login, makeEvent, setupApp, type TestApp } from './helper.js';

let h: TestApp;
let eventId: string;
let fan: string;

beforeAll(async () => {
  h = await setupApp();
  ({ eventId } = await makeEvent(h.t, { fairnessMode: 'FIFO' }));
  fan = await login(h.app, 'gate-fan');
});
afterAll(() => h.close());

describe('the admission gate', () => {
  it('refuses every store route without admission, except those opted out by name (from the route table)', async () => {
    const gated = h.app.routeTable.filter((r) => !r.url.startsWith('/docs') && !ADMISSION_OPT_OUT.has(`${r.method} ${r.url}`));
    expect(gated.length).toBeGreaterThanOrEqual(5);
    for (const r of gated) {
      const url = r.url.replace(':id', r.url.startsWith('/events') ? eventId : '00000000-0000-0000-0000-000000000000');
      const res = await h.app.inject({
        method: r.method as 'GET',
        url,
        headers: { ...bearer(fan), 'idempotency-key': 'gate-test-key-1' },
        payload: r.method === 'GET' || r.method === 'DELETE' ? undefined : {},
      });
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(401);
      expect(res.json().error, `${r.method} ${r.url}`).toBe('ADMISSION_REQUIRED');
    }
    // and the opted-out ones answer without it
    for (const name of ['GET /events/:id', 'GET /events/:id/seatmap', 'GET /events/:id/watermark', 'GET /events/:id/fairness']) {
      const [method, path] = name.split(' ') as [string, string];
      const res = await h.app.inject({ method: method as 'GET', url: path.replace(':id', eventId) });
      expect(res.statusCode, name).toBe(200);
    }
    const m = await h.app.inject({ url: '/metrics' });
    expect(m.body).toMatch(/requests_without_admission_token_total\{route="\/events\/:id\/holds"\} [1-9]/);
  });

  it('refuses a token presented from another device or account, and counts it', async () => {
    const other = await login(h.app, 'gate-other');
    const headers = await admitted(fan, eventId, 'device-of-the-fan');
    const fromElsewhere = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: { ...headers, 'x-device-id': 'a-resold-device' },
      payload: { section: 'A', quantity: 1 },
    });
    expect(fromElsewhere.statusCode).toBe(403);
    expect(fromElsewhere.json().error).toBe('TOKEN_WRONG_DEVICE');
    const otherAccount = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: { ...headers, ...bearer(other) },
      payload: { section: 'A', quantity: 1 },
    });
    expect(otherAccount.statusCode).toBe(403);
    expect(otherAccount.json().error).toBe('TOKEN_WRONG_ACCOUNT');
    const { eventId: second } = await makeEvent(h.t);
    const wrongEvent = await h.app.inject({
      method: 'POST',
      url: `/events/${second}/holds`,
      headers,
      payload: { section: 'A', quantity: 1 },
    });
    expect(wrongEvent.json().error).toBe('TOKEN_WRONG_EVENT');
    const m = await h.app.inject({ url: '/metrics' });
    expect(m.body).toMatch(/admission_token_device_mismatch_total [2-9]/);
    const holds = await sql<{ n: number }>`SELECT count(*)::int AS n FROM holds`.execute(h.t.db);
    expect(holds.rows[0]!.n).toBe(0);
  });

  it('lets an admitted fan through, end to end: join, poll, admitted, hold, pay', async () => {
    const device = { 'x-device-id': 'phone-of-gate-fan' };
    const joined = await h.app.inject({ method: 'POST', url: `/events/${eventId}/queue`, headers: { ...bearer(fan), ...device } });
    expect(joined.statusCode).toBe(200);
    await sql`UPDATE queue_state SET admitted_through = 100, heartbeat_at = now() + interval '1 minute' WHERE event_id = ${eventId}`.execute(
      h.t.db,
    );
    // Each store-API instance reads the watermarks every half second.
    const admission = (
      await pollUntil(
        () =>
          h.app.inject({
            url: `/events/${eventId}/queue/status`,
            headers: { ...bearer(fan), ...device, 'x-queue-token': joined.json().queueToken },
          }),
        (s) => Boolean(s.json().admissionToken),
      )
    ).json().admissionToken as string | undefined;
    expect(admission).toBeDefined();
    const headers = { ...bearer(fan), ...device, 'x-admission-token': admission! };
    const held = await h.app.inject({ method: 'POST', url: `/events/${eventId}/holds`, headers, payload: { section: 'B', quantity: 2 } });
    expect(held.statusCode).toBe(201);
    const paid = await h.app.inject({
      method: 'POST',
      url: `/holds/${held.json().holdId}/checkout`,
      headers: { ...headers, 'idempotency-key': 'gate-fan-pays-0001' },
      payload: { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } },
    });
    expect(paid.statusCode).toBe(200);
    // The claim was counted in memory and flushed in a batch (every half second).
    await vi.waitFor(
      async () => {
        const claimed = await sql<{
          claimed_at: Date | null;
        }>`SELECT claimed_at FROM queue_entries WHERE event_id = ${eventId} AND account_id = 'gate-fan'`.execute(h.t.db);
        expect(claimed.rows[0]!.claimed_at).not.toBeNull();
        // Hold outcomes are flushed the same way, for the controller's hold-failure slow-down.
        const outcomes = await sql<{
          created: number;
        }>`SELECT coalesce(sum(holds_created), 0)::int AS created FROM admission_minutes WHERE event_id = ${eventId}`.execute(h.t.db);
        expect(outcomes.rows[0]!.created).toBeGreaterThanOrEqual(1);
      },
      { timeout: 60_000, interval: 50 },
    );
  });
});
