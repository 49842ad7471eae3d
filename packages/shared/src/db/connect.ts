import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './database.js';

// int8 (counts, identity ids) as JS numbers: every such value here stays far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));
// numeric as number (aggregates such as SUM over integers).
pg.types.setTypeParser(1700, (v) => Number(v));

export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;

export interface DbOptions {
  /** Pool size; a store-API instance under load wants a few dozen. */
  max?: number;
  applicationName?: string;
  onError?: (err: Error) => void;
}

/** Opens a pool on `connectionString`. The pool's 'error' listener keeps a restarting server from crashing Node. */
export function createDb(connectionString: string, opts: DbOptions = {}): Db {
  const pool = new pg.Pool({
    connectionString,
    max: opts.max ?? 20,
    application_name: opts.applicationName ?? 'onsale',
  });
  pool.on('error', (err) => opts.onError?.(err));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
