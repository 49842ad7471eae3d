import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TRPCError } from '@trpc/server';
import { createTestDatabase, pollUntil, testSecrets, type TestDatabase } from '@onsale/shared/testing';
import { insertRehearsalRun, finishRehearsalRun } from '@onsale/shared/rehearsal';
import type { ConsoleUser } from '@onsale/shared/users';
import { buildStoreApi } from '@onsale/store-api';
import { loadStoreApiConfig } from '@onsale/store-api/env';
import { AdmissionController } from '@onsale/shared/admission';
import { cliRehearsalLauncher, type RehearsalLauncher } from '../src/rehearsals.js';
import { callerAs, seedUser } from './fixtures.js';

// Rehearsals from the console, through the BFF: the reports every reader reads, a start that only operators and
// admins may make, checked at each field, and a real one: the launcher runs `onsale rehearse` against a store API on
// this database, and the run's report lands where the console reads it.

const root = join(import.meta.dirname, '..', '..', '..');
let tdb: TestDatabase;
let operator: ConsoleUser;
let viewer: ConsoleUser;
let store: Awaited<ReturnType<typeof buildStoreApi>>;
let target: string;
let controller: AdmissionController;
const launchers: RehearsalLauncher[] = [];

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 12 });
  [operator, viewer] = await Promise.all([
    seedUser(tdb.db, 'operator@rehearse.test', 'operator'),
    seedUser(tdb.db, 'viewer@rehearse.test', 'viewer'),
  ]);
  const secrets = testSecrets();
  const config = loadStoreApiConfig({
    NODE_ENV: 'test',
    DEV_AUTH: 'true',
    AUTH_SECRET: secrets.authSecret,
    QUEUE_TOKEN_SECRET: secrets.queueTokenSecret,
    CARD_FINGERPRINT_SECRET: secrets.cardFingerprintSecret,
    STORE_API_TRUST_PROXY: 'loopback',
    LOAD_SHED_ENABLED: 'false',
  });
  store = await buildStoreApi({ db: tdb.db, config });
  await store.listen({ port: 0, host: '127.0.0.1' });
  target = `http://127.0.0.1:${(store.server.address() as AddressInfo).port}`;
  // The product's admission controller (the worker runs it under `npm start`): it lets the rehearsal's fans in.
  controller = new AdmissionController({ db: tdb.db, connectionString: tdb.url, tickMs: 250 });
  await controller.start();
});
afterAll(async () => {
  await Promise.all(launchers.map((l) => l.close()));
  await controller?.stop();
  await store?.close();
  await tdb?.drop();
});

async function refusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TRPCError);
    const e = err as TRPCError;
    return {
      code: e.code,
      domainCode: (e.cause as { code?: string } | undefined)?.code,
      field: (e.cause as { details?: { field?: string } } | undefined)?.details?.field,
    };
  }
  throw new Error('expected the call to be refused');
}

describe('rehearsals in the console', () => {
  it('every reader lists runs and reads a report; an unknown run is NOT_FOUND', async () => {
    const id = await insertRehearsalRun(tdb.db, {
      eventId: null,
      eventName: 'Seeded',
      target: 'http://x',
      fans: 10,
      timeScale: 30,
      settings: {},
    });
    await finishRehearsalRun(tdb.db, id, 'PASS', { verdict: 'PASS', seats: 300, seatsSold: 300 });
    const list = await callerAs(tdb.db, viewer).rehearsals.list();
    expect(list).toContainEqual(
      expect.objectContaining({ id, eventName: 'Seeded', status: 'PASS', verdict: 'PASS', seats: 300, seatsSold: 300 }),
    );
    expect(await callerAs(tdb.db, viewer).rehearsals.get({ id })).toMatchObject({ id, report: { verdict: 'PASS' } });
    expect(await refusal(callerAs(tdb.db, viewer).rehearsals.get({ id: '00000000-0000-4000-8000-000000000000' }))).toMatchObject({
      code: 'NOT_FOUND',
      domainCode: 'REHEARSAL_NOT_FOUND',
    });
    expect(await callerAs(tdb.db, viewer).rehearsals.options()).toMatchObject({
      target: null,
      examples: expect.arrayContaining([expect.objectContaining({ id: 'club' })]),
    });
  });

  it('only operators and admins start one; bad input is refused at its field; without a launcher it says so', async () => {
    const launcher = cliRehearsalLauncher({ db: tdb.db, databaseUrl: tdb.url, target, root });
    expect(
      await refusal(
        callerAs(tdb.db, viewer, { rehearsals: launcher }).rehearsals.start({ example: 'club', fans: 50, botsShare: 0.3, timeScale: 30 }),
      ),
    ).toMatchObject({
      code: 'FORBIDDEN',
    });
    const ops = callerAs(tdb.db, operator, { rehearsals: launcher });
    expect(await refusal(ops.rehearsals.start({ example: 'club', fans: 5, botsShare: 0.3, timeScale: 30 }))).toMatchObject({
      code: 'BAD_REQUEST',
    });
    expect(await refusal(ops.rehearsals.start({ example: 'nowhere' as 'club', fans: 50, botsShare: 0.3, timeScale: 30 }))).toMatchObject({
      code: 'BAD_REQUEST',
    });
    expect(await refusal(ops.rehearsals.start({ example: 'club', fans: 50, botsShare: 0.95, timeScale: 30 }))).toMatchObject({
      code: 'BAD_REQUEST',
    });
    expect(
      await refusal(callerAs(tdb.db, operator).rehearsals.start({ example: 'club', fans: 50, botsShare: 0.3, timeScale: 30 })),
    ).toMatchObject({
      domainCode: 'REHEARSALS_UNAVAILABLE',
      field: 'example',
    });
    expect(await tdb.db.selectFrom('rehearsal_reports').select('id').where('fans', '=', 50).execute()).toEqual([]);
  });

  it('an operator starts a real one against the store API: it runs on a rehearsal event, audited, and its report comes back PASS', async () => {
    const launcher = cliRehearsalLauncher({
      db: tdb.db,
      databaseUrl: tdb.url,
      target,
      root,
      logDir: join(root, '.test-results', 'rehearsals'),
    });
    launchers.push(launcher);
    const ops = callerAs(tdb.db, operator, { rehearsals: launcher });
    expect(await ops.rehearsals.options()).toMatchObject({ target });
    // No bots: this store API holds a suspected bot's join to a real minute after the open (the product's default
    // BOT_LOW_PRIORITY_DELAY_SECONDS, which a console-started run does not compress), and the run would wait most of a
    // minute for them after its humans are done. The bots' seat share is rehearse.test.ts's to check.
    const { runId } = await ops.rehearsals.start({ example: 'club', fans: 60, botsShare: 0, timeScale: 60 });
    const audit = await tdb.db.selectFrom('audit_log').select(['actor', 'details']).where('action', '=', 'rehearsal.started').execute();
    expect(audit).toEqual([{ actor: operator.email, details: expect.objectContaining({ runId, example: 'club', fans: 60, target }) }]);
    const done = await pollUntil(
      () => ops.rehearsals.get({ id: runId }),
      (r) => r.status !== 'RUNNING',
      { timeoutMs: 540_000, intervalMs: 500 },
    );
    // PASS on every check that does not time the product (latencies and fans let in per buyer follow how busy the
    // machine is: the benchmarks and the quiet-machine rehearsals weigh those).
    expect(done.status).not.toBe('ERROR');
    const reasons = (done.report as { reasons?: string[] } | null)?.reasons ?? [];
    expect(reasons.filter((x) => !/hold p99|hold latency|sold-out|let in for each/.test(x))).toEqual([]);
    expect(done.report).toMatchObject({ verdict: done.status, doubleSold: 0, duplicateOrders: 0, drift: 0, fans: 60 });
    // Its event is a rehearsal's, and the board says so.
    const event = await tdb.db
      .selectFrom('events')
      .select('rehearsal_time_scale')
      .where('id', '=', done.eventId!)
      .executeTakeFirstOrThrow();
    expect(event.rehearsal_time_scale).toBe(60);
    const board = await callerAs(tdb.db, viewer).events.list();
    expect(board.find((e) => e.id === done.eventId)).toMatchObject({ rehearsalTimeScale: 60 });
  });
});
