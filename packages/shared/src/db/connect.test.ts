import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../testing/index.js';
import { createDb, healthOf, poolOf, warmPool, type Db } from './connect.js';
import { databaseFaultOf } from './faults.js';

let t: TestDatabase;
let db: Db;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 2 });
  db = createDb(t.url, { max: 2 });
});
afterAll(async () => {
  await db.destroy();
  await t.drop();
});

const pidOf = async (conn: Db) => (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(conn)).rows[0]!.pid;
// As a stopping server does (57P01 to every backend). It returns once the signal is sent: the backend's end reaches
// the client's socket some time later, and every test here runs its next statement at once, inside that window.
const terminate = (pid: number) => sql`SELECT pg_terminate_backend(${pid})`.execute(t.db);
const answers = async (conn: Db) => (await sql<{ one: number }>`SELECT 1 AS one`.execute(conn)).rows;

describe('createDb: connections the server ends', () => {
  it('a checked-out connection ended between queries: its holder learns at its next query, the pool serves again at once', async () => {
    const outcome = await db.connection().execute(async (conn) => {
      await terminate(await pidOf(conn));
      return sql`SELECT 1`.execute(conn).then(
        () => 'answered',
        (e: Error) => e.message,
      );
    });
    expect(outcome).not.toBe('answered');
    // The dead client went back broken and was destroyed, not kept for the next checkout.
    expect(await answers(db)).toEqual([{ one: 1 }]);
  });

  it('an idle pooled connection ended: the next statement and the next transaction run on a live one', async () => {
    for (let i = 0; i < 5; i++) {
      await terminate(await pidOf(db));
      expect(await answers(db)).toEqual([{ one: 1 }]);
      await terminate(await pidOf(db));
      expect(await db.transaction().execute(async (trx) => (await answers(trx)).concat(await answers(trx)))).toHaveLength(2);
    }
  });

  it('a restart ends every idle connection: a statement finds a live one after all of them', async () => {
    await warmPool(db, 2);
    const pids = await db.connection().execute(async (a) => db.connection().execute(async (b) => [await pidOf(a), await pidOf(b)]));
    for (const pid of new Set(pids)) await terminate(pid);
    expect(await answers(db)).toEqual([{ one: 1 }]);
    expect(poolOf(db).totalCount).toBeLessThanOrEqual(2);
  });

  it('a connection ended in the middle of a transaction fails the transaction (its work is not run again)', async () => {
    const runs: number[] = [];
    const outcome = await db
      .transaction()
      .execute(async (trx) => {
        runs.push(await pidOf(trx));
        await terminate(runs[0]!);
        return answers(trx);
      })
      .then(
        () => 'committed',
        (e: Error) => e.message,
      );
    expect(outcome).not.toBe('committed');
    expect(runs).toHaveLength(1);
    expect(await answers(db)).toEqual([{ one: 1 }]);
  });
});

describe('createDb: a pool with no free connection is no outage', () => {
  it('a query that waited its whole pool wait while the database answered the others is "saturated": no outage starts', async () => {
    const busy = createDb(t.url, { max: 1, connectionTimeoutMillis: 300, applicationName: 'onsale-test-saturated' });
    try {
      expect(await answers(busy)).toEqual([{ one: 1 }]);
      const health = healthOf(busy);
      // The pool's one connection is held, answering query after query, until the second query has given up waiting
      // for it.
      const waited = await busy.connection().execute(async (conn) => {
        let outcome: unknown;
        const waiting = answers(busy).then(
          () => (outcome = null),
          (e: unknown) => (outcome = e),
        );
        while (outcome === undefined) await answers(conn);
        await waiting;
        return outcome;
      });
      expect((waited as Error).message).toBe('timeout exceeded when trying to connect');
      expect(databaseFaultOf(waited)).toBe('saturated');
      expect(health.up).toBe(true);
      expect(health.outages).toBe(0);
    } finally {
      await busy.destroy();
    }
  });

  it('a query that waited its whole pool wait while nothing answered (a hung database) is an outage', async () => {
    const hung = createDb(t.url, { max: 1, connectionTimeoutMillis: 300, applicationName: 'onsale-test-hung' });
    try {
      expect(await answers(hung)).toEqual([{ one: 1 }]);
      // The one connection is busy with a statement that outlasts the wait: nothing answers meanwhile.
      const waited = await hung.connection().execute(async (conn) => {
        const sleeping = sql`SELECT pg_sleep(1)`.execute(conn);
        const outcome = await answers(hung).then(
          () => null,
          (e: unknown) => e,
        );
        await sleeping;
        return outcome;
      });
      expect(databaseFaultOf(waited)).toBe('unavailable');
      expect(healthOf(hung).outages).toBe(1);
    } finally {
      await hung.destroy();
    }
  });
});
