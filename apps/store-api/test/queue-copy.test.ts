import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { getQueueCopy, setQueueCopy } from '@onsale/shared/sale-setup';
import { domainError, pollUntil } from '@onsale/shared/testing';
import { bearer, login, makeEvent, setupApp, type TestApp } from './helper.js';

// The words waiting fans read, edited live from the war room, audited, read on the next poll.

let h: TestApp;
let eventId: string;

beforeAll(async () => {
  h = await setupApp();
  ({ eventId } = await makeEvent(h.t, { fairnessMode: 'FIFO' }));
  // Admitting (a fresh heartbeat, nobody admitted yet): a fan reads the WAITING words.
  await sql`UPDATE queue_state SET heartbeat_at = now() + interval '1 hour' WHERE event_id = ${eventId}`.execute(h.t.db);
});
afterAll(() => h.close());

describe('the words fans read, edited live', () => {
  it('a change reaches a polling fan on their next poll (in their language), is audited, and a stale edit is refused', async () => {
    const fan = await login(h.app, 'copy-fan');
    const headers = { ...bearer(fan), 'x-device-id': 'copy-fan-device' };
    const join = await h.app.inject({ method: 'POST', url: `/events/${eventId}/queue`, headers });
    const queueToken = join.json().queueToken as string;
    const poll = (lang = 'en') =>
      h.app.inject({
        url: `/events/${eventId}/queue/status`,
        headers: { ...headers, 'x-queue-token': queueToken, 'accept-language': lang },
      });
    const view = await getQueueCopy(h.t.db, eventId);
    expect((await poll()).json().message).toBe(view.words.en.WAITING.text);
    expect(view.words.en.WAITING).toMatchObject({ custom: false });

    const saved = await h.t.db.transaction().execute((trx) =>
      setQueueCopy(
        trx,
        {
          eventId,
          expectedVersion: view.version,
          words: {
            en: { WAITING: 'Doors are busy tonight: stay on this page, your place is safe.' },
            es: { WAITING: 'Hay mucha gente esta noche: tu lugar está asegurado.' },
          },
          reason: 'calmer words for a slow open',
        },
        'ops@example.com',
      ),
    );
    expect(saved).toMatchObject({ changed: 2, version: view.version + 1 });
    expect(saved.words.en.WAITING).toMatchObject({ text: 'Doors are busy tonight: stay on this page, your place is safe.', custom: true });
    expect(saved.words.en.PAUSED.custom).toBe(false);
    // The store API re-reads the words with the watermark (every 500 ms): the next poll has them.
    expect(
      (
        await pollUntil(
          () => poll(),
          (r) => r.json().message !== view.words.en.WAITING.text,
        )
      ).json().message,
    ).toBe('Doors are busy tonight: stay on this page, your place is safe.');
    expect(
      (
        await pollUntil(
          () => poll('es'),
          (r) => r.json().message.startsWith('Hay'),
        )
      ).json().message,
    ).toBe('Hay mucha gente esta noche: tu lugar está asegurado.');

    const audit = await h.t.db
      .selectFrom('audit_log')
      .select(['actor', 'details'])
      .where('action', '=', 'event.queue_copy_changed')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({
      actor: 'ops@example.com',
      details: {
        reason: 'calmer words for a slow open',
        changes: [
          { language: 'en', state: 'WAITING' },
          { language: 'es', state: 'WAITING' },
        ],
      },
    });

    // Edited from the old version: refused, nothing overwritten.
    const stale = await domainError(
      h.t.db
        .transaction()
        .execute((trx) =>
          setQueueCopy(
            trx,
            { eventId, expectedVersion: view.version, words: { en: { WAITING: 'late edit' } }, reason: 'x' },
            'other@example.com',
          ),
        ),
    );
    expect(stale).toMatchObject({ code: 'STALE_EVENT_VERSION', details: { field: 'version' } });
    // Back to the default: stored as no words of its own.
    const reset = await h.t.db.transaction().execute((trx) =>
      setQueueCopy(
        trx,
        {
          eventId,
          expectedVersion: saved.version,
          words: { en: { WAITING: view.words.en.WAITING.defaultText } },
          reason: 'back to normal',
        },
        'ops@example.com',
      ),
    );
    expect(reset.words.en.WAITING.custom).toBe(false);
    const row = await h.t.db.selectFrom('events').select(['queue_copy']).where('id', '=', eventId).executeTakeFirstOrThrow();
    expect(row.queue_copy).toBeNull();
    const bad = await domainError(
      h.t.db
        .transaction()
        .execute((trx) =>
          setQueueCopy(trx, { eventId, expectedVersion: reset.version, words: { en: { WAITING: '' } }, reason: 'x' }, 'ops@example.com'),
        ),
    );
    expect(bad).toMatchObject({ code: 'INVALID_QUEUE_COPY', details: { field: 'words.en.WAITING' } });
  });
});
