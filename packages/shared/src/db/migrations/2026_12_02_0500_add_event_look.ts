import type { Kysely } from 'kysely';

// The promoter's look for the fans' page (logo, colours, per-state words per language), as the event file's
// `look`; null: the default look.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('look', 'jsonb').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').dropColumn('look').execute();
}
