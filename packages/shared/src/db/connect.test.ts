import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../testing/index.js';
import { createDb, type Db } from './connect.js';

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

describe('createDb', () => {
  it('survives the server ending a connection that is checked out and between queries (no unhandled error)', async () => {
    const outcome = await db.connection().execute(async (conn) => {
      const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(conn);
      // As a stopping server does (57P01 to every backend): end this one while it sits checked out.
      await sql`SELECT pg_terminate_backend(${rows[0]!.pid})`.execute(t.db);
      // The termination reaches this client's socket asynchronously (no event a test can wait on through the pool):
      // its next query comes after it, as a holder's next query would.
      await new Promise((r) => setTimeout(r, 300));
      return sql`SELECT 1`.execute(conn).then(
        () => 'answered',
        (e: Error) => e.message,
      );
    });
    // Its holder learns at its next query; the process is still here, and the pool serves again.
    expect(outcome).not.toBe('answered');
    expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(db)).rows).toEqual([{ one: 1 }]);
  });
});
