// How many connections the store API's processes open, bounded by the cores the database has. PostgreSQL runs one
// process per connection and a database with C cores runs at most C statements at once: a connection beyond what
// keeps those cores busy is one more backend to schedule, not throughput (on 2 cores 8-12 connections in the store's
// pool out-ran 24 and 48, and rehearsals with 2 store processes and a worker counted 72-91 backends).
import { cpus } from 'node:os';

/** Busy connections from all store processes together, per core of the database (10 on 2 cores). */
export const STORE_CONNECTIONS_PER_DB_CORE = 5;

/** The fewest connections a store process keeps, whatever the split (a hold and a join batch in flight at once). */
export const MIN_STORE_POOL = 2;

/**
 * The database's cores: `DB_CORES` when set, else this machine's when the database is on it (a
 * Unix socket, a loopback address, or no host: the embedded server), else null (unknown: the pools are not bounded).
 */
export function databaseCores(url: string, dbCores: number | undefined, localCores = cpus().length): number | null {
  if (dbCores !== undefined) return dbCores;
  let host: string;
  try {
    const u = new URL(url);
    host = decodeURIComponent(u.hostname || u.searchParams.get('host') || '');
  } catch {
    return null;
  }
  const local =
    host === '' || host.startsWith('/') || host === 'localhost' || host === '::1' || host === '[::1]' || host.startsWith('127.');
  return local ? Math.max(1, localCores) : null;
}

/**
 * Connections for one store process: `DB_POOL_MAX`, unless the store processes together would hold more than
 * STORE_CONNECTIONS_PER_DB_CORE per core of the database; then an equal share of that (at least MIN_STORE_POOL).
 */
export function storePoolSize(o: { poolMax: number; processes: number; dbCores: number | null }): number {
  if (o.dbCores === null) return o.poolMax;
  const share = Math.floor((STORE_CONNECTIONS_PER_DB_CORE * o.dbCores) / Math.max(1, o.processes));
  return Math.min(o.poolMax, Math.max(MIN_STORE_POOL, share));
}
