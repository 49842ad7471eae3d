import type { Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * "No single seats": best-available and exact-seat holds refuse to leave one seat alone between taken seats or at a
 * row's end, unless it cannot be helped. On for every event, those made before it included; a promoter turns it off.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('events')
    .addColumn('no_single_seats', 'boolean', (c) => c.notNull().defaultTo(true))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').dropColumn('no_single_seats').execute();
}
