export type { Database } from './database.js';
export {
  createDb,
  dedicatedConnection,
  healthOf,
  inPoolLane,
  observePoolWait,
  poolOf,
  warmPool,
  type Db,
  type Trx,
  type DbOptions,
} from './connect.js';
export {
  databaseFaultOf,
  DatabaseHealth,
  isConnectionLost,
  logOutages,
  markDatabaseFault,
  type DatabaseFault,
  type DatabaseHealthEvents,
  type OutageLogger,
} from './faults.js';
export { migrateToLatest, MigrationError } from './migrate.js';
export { startEmbeddedPostgres, EmbeddedPostgresError, type EmbeddedServer, type EmbeddedOptions } from './embedded.js';
export { sql } from 'kysely';
export { GroupCommit } from './group-commit.js';
export { databaseCores, storePoolSize, STORE_CONNECTIONS_PER_DB_CORE, MIN_STORE_POOL } from './pool-size.js';
export { StatsKeeper, HOT_TABLES, type StatsKeeperOptions } from './stats-keeper.js';
export { committedTransactions, ping } from './probe.js';
export { BACKGROUND, type PoolLane, type PoolTag, type PoolWaitObserver } from './pool-lanes.js';
