import { type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * An admin may disable a console user (someone who left, a lost laptop) without deleting who they were: the audit
 * log keeps naming them. A disabled user cannot sign in and their sessions are gone; enabling clears both columns.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('console_users').addColumn('disabled_at', 'timestamptz').addColumn('disabled_by', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('console_users').dropColumn('disabled_at').dropColumn('disabled_by').execute();
}
