import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * A fan account blocked from one event by an operator (fan support): the store API refuses it the queue, holds and
 * checkout of that event. One row per (event, account); lifting the block deletes the row (both are audited).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('account_blocks')
    .addColumn('event_id', 'uuid', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('blocked_by', 'text', (c) => c.notNull())
    .addColumn('blocked_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('account_blocks_pk', ['event_id', 'account_id'])
    .addCheckConstraint('account_blocks_reason_length', sql`char_length(reason) BETWEEN 1 AND 500`)
    .execute();
  await db.schema.createIndex('account_blocks_account_idx').on('account_blocks').column('account_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('account_blocks').ifExists().execute();
}
