import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * The admission controller counts as inside only fans who can still buy: holders, fans who claimed their
 * admission within the event's checkout time and hold nothing yet, and fans on their way to claim a position the
 * watermark passed moments ago. For the last of these it keeps its recent advances (`recent_advances`,
 * [[epoch ms, positions]] over the last minute); for the second it reads recent claims by time (the index). Each
 * tick also records why it admitted what it did (`controller_constraint`, a stable code, and `controller_reason`,
 * in words), how many fans it counted inside and its cap, so the war room can say why nobody is being let in.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE queue_state
      ADD COLUMN recent_advances jsonb NOT NULL DEFAULT '[]'::jsonb,
      ADD COLUMN controller_constraint text,
      ADD COLUMN controller_reason text,
      ADD COLUMN fans_inside integer,
      ADD COLUMN admit_cap integer`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS queue_entries_claimed_idx ON queue_entries (event_id, claimed_at) WHERE claimed_at IS NOT NULL`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS queue_entries_claimed_idx`.execute(db);
  await sql`
    ALTER TABLE queue_state
      DROP COLUMN recent_advances, DROP COLUMN controller_constraint, DROP COLUMN controller_reason,
      DROP COLUMN fans_inside, DROP COLUMN admit_cap`.execute(db);
}
