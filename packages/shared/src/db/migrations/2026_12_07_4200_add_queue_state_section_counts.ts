import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * The admission controller counts the event's seats by section on every tick (its inventory read); it keeps that
 * count on the queue's row (`section_counts`: [code, available, held, sold] per section, `counted_at`: the tick's
 * time), so the store's seat map serves it from memory instead of counting every seat again in each process.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE queue_state ADD COLUMN section_counts jsonb, ADD COLUMN counted_at timestamptz`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE queue_state DROP COLUMN section_counts, DROP COLUMN counted_at`.execute(db);
}
