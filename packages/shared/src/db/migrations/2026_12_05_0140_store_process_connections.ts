import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * A store-API process renews its lease over a connection of its own, and the lease names that connection's backend
 * (`backend_pid`, `backend_start`). A process killed (or crashed) takes its connections with it, and PostgreSQL ends
 * the backend at once: another process that sees the lease's backend gone (and the lease not renewed since) knows
 * the owner is dead within a second or two, instead of waiting for the lease to go silent for seconds on end.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE store_processes ADD COLUMN backend_pid integer, ADD COLUMN backend_start timestamptz`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE store_processes DROP COLUMN IF EXISTS backend_pid, DROP COLUMN IF EXISTS backend_start`.execute(db);
}
