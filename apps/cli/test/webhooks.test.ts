import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { enqueueDeliveries } from '@onsale/shared/notify';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '@onsale/shared/testing';

import { onsale, onsaleWith } from './run.js';

let t: TestDatabase;
let listingId: string;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
  const { eventId } = await createOpenEvent(t.db);
  ({ listing_id: listingId } = await t.db.selectFrom('events').select('listing_id').where('id', '=', eventId).executeTakeFirstOrThrow());
});
afterAll(() => t?.drop());

describe('onsale webhook:*', () => {
  it('webhook:add prints the endpoint with its secret once; webhook:list never shows a secret; webhook:disable turns it off', async () => {
    const r = await onsale(
      t.url,
      'webhook:add',
      '--url',
      'https://gateway.example/onsale',
      '--listing',
      listingId,
      '--max-attempts',
      '3',
      '--timeout-ms',
      '2000',
    );
    expect(r.code).toBe(0);
    const added = JSON.parse(r.stdout) as { id: string; secret: string };
    expect(added).toMatchObject({
      url: 'https://gateway.example/onsale',
      listingId,
      active: true,
      maxAttempts: 3,
      timeoutMs: 2000,
      secret: expect.stringMatching(/^whsec_/),
    });
    expect(r.stderr).toContain('shown only this once');
    const row = await t.db.selectFrom('webhook_endpoints').select('secret').where('id', '=', added.id).executeTakeFirstOrThrow();
    expect(row.secret).toBe(added.secret);

    const [list, disabled] = await Promise.all([onsale(t.url, 'webhook:list'), onsale(t.url, 'webhook:disable', added.id)]);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toContain(added.secret);
    expect((JSON.parse(list.stdout) as { id: string }[]).map((e) => e.id)).toContain(added.id);
    expect(disabled.code).toBe(0);
    expect(JSON.parse(disabled.stdout)).toMatchObject({ id: added.id, active: false });
  });

  it('bad input: exit 1 naming the field (domain) or exit 2 with usage (command line)', async () => {
    const [ftp, unknown, notANumber, noUrl, missing] = await Promise.all([
      onsale(t.url, 'webhook:add', '--url', 'ftp://gateway.example/x'),
      onsale(t.url, 'webhook:add', '--url', 'https://gateway.example/x', '--listing', '00000000-0000-4000-8000-000000000000'),
      onsale(t.url, 'webhook:add', '--url', 'https://gateway.example/x', '--max-attempts', 'lots'),
      onsale(t.url, 'webhook:add'),
      onsale(t.url, 'webhook:disable', '00000000-0000-4000-8000-000000000000'),
    ]);
    expect(ftp.code).toBe(1);
    expect(ftp.stderr).toContain('error INVALID_WEBHOOK_ENDPOINT: url:');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('error LISTING_NOT_FOUND');
    expect(notANumber.code).toBe(2);
    expect(notANumber.stderr).toContain('--max-attempts must be a whole number');
    expect(noUrl.code).toBe(2);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('error WEBHOOK_ENDPOINT_NOT_FOUND');
    for (const r of [ftp, unknown, notANumber, noUrl, missing]) expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('webhook:add refuses an internal receiver at url, naming WEBHOOK_ALLOW_HOSTS, which admits the hosts it names', async () => {
    const [metadata, loopback] = await Promise.all([
      onsale(t.url, 'webhook:add', '--url', 'http://169.254.169.254/latest/meta-data/'),
      onsale(t.url, 'webhook:add', '--url', 'http://0177.0.0.1:5432/'),
    ]);
    expect(metadata.code).toBe(1);
    expect(metadata.stderr).toContain('error INVALID_WEBHOOK_ENDPOINT: url: 169.254.169.254 is a link-local address');
    expect(loopback.code).toBe(1);
    expect(loopback.stderr).toContain('127.0.0.1 is a loopback address');
    expect(loopback.stderr).toContain('WEBHOOK_ALLOW_HOSTS');
    const allowed = await onsaleWith(
      { DATABASE_URL: t.url, WEBHOOK_ALLOW_HOSTS: '127.0.0.1' },
      'webhook:add',
      '--url',
      'http://127.0.0.1:9/local',
    );
    expect(allowed.code).toBe(0);
    expect(JSON.parse(allowed.stdout)).toMatchObject({ url: 'http://127.0.0.1:9/local' });
    const bad = await onsaleWith(
      { DATABASE_URL: t.url, WEBHOOK_ALLOW_HOSTS: 'http://x/' },
      'webhook:add',
      '--url',
      'https://gateway.example/x',
    );
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('WEBHOOK_ALLOW_HOSTS');
    await t.db.updateTable('webhook_endpoints').set({ active: false }).where('url', '=', 'http://127.0.0.1:9/local').execute();
  });

  it('webhook:deliveries lists the dead letters; webhook:redeliver sends a DEAD one again and refuses anything else', async () => {
    const add = await onsale(t.url, 'webhook:add', '--url', 'https://receiver.example/hook', '--listing', listingId);
    const endpoint = JSON.parse(add.stdout) as { id: string };
    const [dead, pending] = await t.db
      .transaction()
      .execute(async (trx) => [
        ...(await enqueueDeliveries(trx, { listingId, availabilityId: null, notificationIds: [1, 2] })),
        ...(await enqueueDeliveries(trx, { listingId, availabilityId: null, notificationIds: [3] })),
      ]);
    // As the worker leaves a delivery it gave up on: DEAD, its job gone.
    await sql`DELETE FROM graphile_worker._private_jobs WHERE (payload->>'deliveryId')::bigint = ${dead!}`.execute(t.db);
    await t.db
      .updateTable('webhook_deliveries')
      .set({ status: 'DEAD', attempts: 8, last_status_code: 502, last_error: 'HTTP 502' })
      .where('id', '=', dead!)
      .execute();

    const [deadList, all] = await Promise.all([
      onsale(t.url, 'webhook:deliveries', '--endpoint', endpoint.id, '--status', 'dead'),
      onsale(t.url, 'webhook:deliveries', '--endpoint', endpoint.id),
    ]);
    expect(deadList.code).toBe(0);
    expect(JSON.parse(deadList.stdout)).toEqual([
      expect.objectContaining({ id: dead, status: 'DEAD', attempts: 8, lastError: 'HTTP 502', notificationIds: [1, 2] }),
    ]);
    expect((JSON.parse(all.stdout) as { id: number }[]).map((d) => d.id)).toEqual([pending, dead]);

    const [again, refused] = await Promise.all([
      onsale(t.url, 'webhook:redeliver', String(dead)),
      onsale(t.url, 'webhook:redeliver', String(pending)),
    ]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ id: dead, status: 'PENDING', attempts: 0 });
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE (payload->>'deliveryId')::bigint = ${dead!}`.execute(t.db);
    expect(rows[0]!.n).toBe(1);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('error DELIVERY_NOT_DEAD');
  });
});
