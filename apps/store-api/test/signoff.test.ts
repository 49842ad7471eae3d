import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil } from '@onsale/shared/testing';
import { sql } from '@onsale/shared/db';
import { AWAITING_SIGNOFF_MESSAGE, parseEventFile } from '@onsale/shared/events';
import { createEvent, signOffFairness } from '@onsale/shared/sale-setup';
import { findActiveEvents, setRateOverride, tickEvent } from '@onsale/shared/admission';
import { bearer, eventFile, login, setupApp, type TestApp } from './helper.js';

// An event whose fairness mode is not signed off does not open. Its queue stays closed (no seal,
// no reveal, nobody admitted) with a plain message to fans; signing it off opens it at the next tick.

let h: TestApp;

beforeAll(async () => {
  h = await setupApp();
});
afterAll(() => h.close());

const join = (token: string, eventId: string, device: string) =>
  h.app.inject({ method: 'POST', url: `/events/${eventId}/queue`, headers: { ...bearer(token), 'x-device-id': device } });
const status = (token: string, eventId: string, device: string, queueToken: string) =>
  h.app.inject({
    url: `/events/${eventId}/queue/status`,
    headers: { ...bearer(token), 'x-device-id': device, 'x-queue-token': queueToken },
  });

/** One controller tick of the event's own queue, as the worker's loop runs it. */
async function tick(eventId: string) {
  const event = (await findActiveEvents(h.t.db, 7200)).find((e) => e.event_id === eventId);
  if (!event) throw new Error('event not in the controller window');
  return tickEvent(h.t.db, { event, controllerId: 'signoff-test', tickMs: 1000 });
}

describe('an event that is not signed off does not open', () => {
  it('past its on-sale time it admits nobody, seals nothing and tells fans it has not opened; the sign-off opens it at the next tick', async () => {
    const { eventId } = await h.t.db
      .transaction()
      .execute((trx) => createEvent(trx, parseEventFile(eventFile({ name: 'Unsigned Night' })), 'test'));
    const fans = await Promise.all(['u-1', 'u-2', 'u-3'].map((id) => login(h.app, id)));
    const tokens: string[] = [];
    for (const [i, fan] of fans.entries()) {
      const r = await join(fan, eventId, `unsigned-device-${i}`);
      expect(r.statusCode).toBe(200);
      expect(r.json()).toMatchObject({ state: 'WAITING', message: AWAITING_SIGNOFF_MESSAGE });
      tokens.push(r.json().queueToken);
    }
    await setRateOverride(h.t.db, eventId, 600, { actor: 'test', reason: 'let them in at once' });
    for (let i = 0; i < 3; i++) {
      const t = await tick(eventId);
      expect(t).toMatchObject({ status: 'ticked', phase: 'AWAITING_SIGNOFF', advanced: 0, ratePerMinute: 0 });
    }
    const q = await h.t.db
      .selectFrom('queue_state')
      .select(['admitted_through', 'sealed_at', 'seed_revealed_at', 'heartbeat_at'])
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
    expect(q).toMatchObject({ admitted_through: 0, sealed_at: null, seed_revealed_at: null });
    expect(q.heartbeat_at).not.toBeNull();
    // The published watermark says NOT_OPEN, so an edge keeps the queue closed too.
    const watermark = await pollUntil(
      () => h.app.inject({ url: `/events/${eventId}/watermark` }),
      (r) => r.json().state === 'NOT_OPEN',
    );
    expect(watermark.json()).toMatchObject({ state: 'NOT_OPEN', admittedThrough: 0 });
    const s = await status(fans[0]!, eventId, 'unsigned-device-0', tokens[0]!);
    expect(s.json()).toMatchObject({ state: 'WAITING', message: AWAITING_SIGNOFF_MESSAGE });
    expect(s.json().admissionToken).toBeUndefined();

    await h.t.db
      .transaction()
      .execute((trx) => signOffFairness(trx, { eventId, fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO' }, 'promoter@example.com'));
    const opened = await tick(eventId);
    // The pre-open cohort (fans who joined before the on-sale time: none here, they came after it) is sealed and
    // revealed now; the fans who came after the time wait in the order they joined.
    expect(opened).toMatchObject({ status: 'ticked', phase: 'ADMITTING', sealedCohortSize: 0 });
    // The controller ticks on (600/min: a position every 100 ms) until the first fan's status reads ADMITTED.
    const admittedStatus = await pollUntil(
      async () => {
        await tick(eventId);
        return status(fans[0]!, eventId, 'unsigned-device-0', tokens[0]!);
      },
      (r) => r.json().state === 'ADMITTED',
    );
    expect(admittedStatus.json().state).toBe('ADMITTED');
    expect(admittedStatus.json().admissionToken).toBeTruthy();
    // Once it opened, a sign-off cannot be added (or needed) again.
    const again = await h.t.db
      .transaction()
      .execute((trx) => signOffFairness(trx, { eventId, fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO' }, 'promoter@example.com'));
    expect(again.alreadySignedOff).toBe(true);
  });

  it('a sale that opened unsigned before sign-offs were enforced keeps admitting, and refuses a sign-off after the fact', async () => {
    const { eventId } = await h.t.db
      .transaction()
      .execute((trx) => createEvent(trx, parseEventFile(eventFile({ name: 'Legacy Night', fairnessMode: 'FIFO' })), 'test'));
    // As the controller left it before this rule: opened (cohort sealed) with no sign-off.
    await sql`UPDATE queue_state SET sealed_at = now() - interval '10 minutes', cohort_size = 0, seed_revealed_at = now() - interval '10 minutes' WHERE event_id = ${eventId}`.execute(
      h.t.db,
    );
    const fan = await login(h.app, 'legacy-1');
    expect((await join(fan, eventId, 'legacy-device-1')).statusCode).toBe(200);
    await setRateOverride(h.t.db, eventId, 600, { actor: 'test', reason: 'let them in' });
    await tick(eventId);
    const t = await tick(eventId);
    expect(t).toMatchObject({ status: 'ticked', phase: 'ADMITTING' });
    const refused = await h.t.db
      .transaction()
      .execute((trx) => signOffFairness(trx, { eventId, fairnessMode: 'FIFO' }, 'promoter@example.com'))
      .catch((e: unknown) => e as { code: string; details?: { field?: string } });
    expect(refused).toMatchObject({ code: 'SALE_ALREADY_OPEN' });
  });
});
