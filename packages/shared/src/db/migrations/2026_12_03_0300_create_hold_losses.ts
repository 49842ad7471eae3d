import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * Holds lost to a PostgreSQL crash under HOLD_COMMIT=async: answered to the fan (who holds a token signed for the
 * hold) but never durable. One row per hold, written when the fan next touches it; the war room counts them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('hold_losses')
    .addColumn('hold_id', 'uuid', (c) => c.primaryKey())
    .addColumn('event_id', 'uuid', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('detected_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('hold_losses_event_idx').on('hold_losses').columns(['event_id', 'detected_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('hold_losses').ifExists().execute();
}
