import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { createTokenKey, EDGE_REPORT_MAX_CLAIMS, signClaimsReport, signPayload, type TokenKey } from '@onsale/shared/queue';
import { testSecrets } from '@onsale/shared/testing';
import { bearer, login, makeEvent, setupApp, type TestApp } from './helper.js';

// The two routes an edge worker uses (apps/edge): the state it answers polls from, and its reports of admissions.

let h: TestApp;
let key: TokenKey;
const at = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();

beforeAll(async () => {
  h = await setupApp();
  key = await createTokenKey(testSecrets().queueTokenSecret);
});
afterAll(() => h.close());

describe('GET /events/:id/edge-state', () => {
  it('publishes every queue of the event with the watermark, its heartbeat and history, the words and the tier; public', async () => {
    const { eventId } = await makeEvent(h.t, {
      fairnessMode: 'FIFO',
      onsaleAt: at(-60),
      allocations: [
        { code: 'FANCLUB', name: 'Fan club', share: 0.3, access: 'OPEN', opensAt: at(-90), closesAt: at(120), fairnessMode: 'FIFO' },
        { code: 'GENERAL', name: 'General sale' },
      ],
    });
    await sql`UPDATE queue_state SET admitted_through = 37, heartbeat_at = now(), rate_per_min = 900 WHERE event_id = ${eventId}`.execute(
      h.t.db,
    );
    const r = await h.app.inject({ url: `/events/${eventId}/edge-state` });
    expect(r.statusCode).toBe(200);
    expect(r.headers['cache-control']).toBe('public, max-age=1');
    const s = r.json();
    expect(s.eventId).toBe(eventId);
    expect(s.tiers.map((t: { code: string }) => t.code)).toEqual(['FANCLUB', 'GENERAL']);
    const presaleQueue = s.tiers[0].queueId;
    expect(s.tiers[1]).toEqual({ code: 'GENERAL', queueId: eventId, general: true });
    expect(s.queues.map((q: { queueId: string }) => q.queueId).sort()).toEqual([eventId, presaleQueue].sort());
    const own = s.queues.find((q: { queueId: string }) => q.queueId === eventId);
    expect(own).toMatchObject({ tier: null, closesAt: null, copy: { WAITING: expect.any(String), PAUSED: expect.any(String) } });
    expect(own.watermark).toMatchObject({ eventId, state: 'OPEN', seedHex: null, heartbeatAt: expect.any(Number) });
    const presale = s.queues.find((q: { queueId: string }) => q.queueId === presaleQueue);
    expect(presale).toMatchObject({ tier: 'FANCLUB', tierName: 'Fan club', closesAt: expect.any(Number) });
    // The watermark the edge reads moves with the database (within the store's 500 ms refresh).
    await expect
      .poll(
        async () =>
          (await h.app.inject({ url: `/events/${eventId}/edge-state` }))
            .json()
            .queues.find((q: { queueId: string }) => q.queueId === eventId).watermark.admittedThrough,
      )
      .toBe(37);
  });

  it('answers 404 EVENT_NOT_FOUND for an unknown event, needs no account and no admission', async () => {
    const r = await h.app.inject({ url: `/events/00000000-0000-0000-0000-000000000000/edge-state` });
    expect(r.statusCode).toBe(404);
    expect(r.json().error).toBe('EVENT_NOT_FOUND');
  });
});

describe('POST /edge/claims', () => {
  it("counts an edge's admissions as the status route counts its own (claimed_at and the minute's tokens), each report once", async () => {
    const { eventId } = await makeEvent(h.t, { fairnessMode: 'FIFO' });
    const fan = await login(h.app, 'edge-claim-fan');
    const joined = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/queue`,
      headers: { ...bearer(fan), 'x-device-id': 'edge-claim-device' },
    });
    expect(joined.statusCode).toBe(200);
    const report = await signClaimsReport(
      key,
      [
        { queueId: eventId, accountId: 'edge-claim-fan' },
        { queueId: eventId, accountId: 'never-joined' },
      ],
      Date.now(),
    );
    const r = await h.app.inject({ method: 'POST', url: '/edge/claims', payload: { report } });
    expect(r.statusCode).toBe(202);
    expect(r.json()).toEqual({ counted: 2 });
    const again = await h.app.inject({ method: 'POST', url: '/edge/claims', payload: { report } });
    expect(again.json()).toEqual({ counted: 0 });
    await expect
      .poll(
        async () =>
          (
            await sql<{
              n: number;
            }>`SELECT coalesce(sum(admission_tokens_issued), 0)::int AS n FROM admission_minutes WHERE event_id = ${eventId}`.execute(
              h.t.db,
            )
          ).rows[0]!.n,
      )
      .toBe(2);
    const entry = await sql<{
      claimed_at: Date | null;
    }>`SELECT claimed_at FROM queue_entries WHERE event_id = ${eventId} AND account_id = 'edge-claim-fan'`.execute(h.t.db);
    expect(entry.rows[0]!.claimed_at).not.toBeNull();
  });

  it('takes a full report (EDGE_REPORT_MAX_CLAIMS claims at the longest ids): every fan in it claimed (issue 28: past ~30 claims a report was refused TOKEN_MALFORMED)', async () => {
    const { eventId } = await makeEvent(h.t, { fairnessMode: 'FIFO' });
    const joined = ['edge-wave-1', 'edge-wave-2', 'edge-wave-3'];
    for (const id of joined) {
      const fan = await login(h.app, id);
      const r = await h.app.inject({
        method: 'POST',
        url: `/events/${eventId}/queue`,
        headers: { ...bearer(fan), 'x-device-id': `${id}-device` },
      });
      expect(r.statusCode).toBe(200);
    }
    const claims = [
      ...joined.map((accountId) => ({ queueId: eventId, accountId })),
      ...Array.from({ length: EDGE_REPORT_MAX_CLAIMS - joined.length }, (_, i) => ({
        queueId: eventId,
        accountId: `${i}-`.padEnd(256, 'x'),
      })),
    ];
    const report = await signClaimsReport(key, claims, Date.now());
    const r = await h.app.inject({ method: 'POST', url: '/edge/claims', payload: { report } });
    expect(r.statusCode, r.body.slice(0, 200)).toBe(202);
    expect(r.json()).toEqual({ counted: EDGE_REPORT_MAX_CLAIMS });
    await expect
      .poll(
        async () =>
          (
            await sql<{
              n: number;
            }>`SELECT count(*)::int AS n FROM queue_entries WHERE event_id = ${eventId} AND claimed_at IS NOT NULL`.execute(h.t.db)
          ).rows[0]!.n,
      )
      .toBe(joined.length);
  });

  it('refuses a report signed with another secret, too old, or not a report, with nothing counted', async () => {
    const { eventId } = await makeEvent(h.t, { fairnessMode: 'FIFO' });
    const claims = [{ queueId: eventId, accountId: 'x' }];
    const cases: [string, string][] = [
      [await signClaimsReport(await createTokenKey('another install, another secret, 32+ chars'), claims, Date.now()), 'TOKEN_FORGED'],
      [await signClaimsReport(key, claims, Date.now() - 5 * 60_000), 'TOKEN_EXPIRED'],
      [await signPayload(key, { kind: 'queue', claims }), 'TOKEN_MALFORMED'],
      ['garbage', 'TOKEN_MALFORMED'],
    ];
    for (const [report, code] of cases) {
      const r = await h.app.inject({ method: 'POST', url: '/edge/claims', payload: { report } });
      expect(r.statusCode).toBe(401);
      expect(r.json()).toMatchObject({ error: code, field: 'report' });
    }
    const empty = await h.app.inject({ method: 'POST', url: '/edge/claims', payload: {} });
    expect(empty.statusCode).toBe(400);
    // A good report for another event after them: once it is in the database, the counters were flushed after the refusals.
    const marker = await makeEvent(h.t, { fairnessMode: 'FIFO' });
    await h.app.inject({
      method: 'POST',
      url: '/edge/claims',
      payload: { report: await signClaimsReport(key, [{ queueId: marker.eventId, accountId: 'y' }], Date.now()) },
    });
    await expect
      .poll(
        async () =>
          (
            await sql<{
              n: number;
            }>`SELECT coalesce(sum(admission_tokens_issued), 0)::int AS n FROM admission_minutes WHERE event_id = ${marker.eventId}`.execute(
              h.t.db,
            )
          ).rows[0]!.n,
      )
      .toBe(1);
    const n = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM admission_minutes WHERE event_id = ${eventId} AND admission_tokens_issued > 0`.execute(h.t.db);
    expect(n.rows[0]!.n).toBe(0);
  });
});
