import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * The fan's display name, as their identity provider's token states it (the OIDC `name` claim), so that support can
 * find a fan by the name they give on the phone. Null until a token with a name is seen; at most 200 characters.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE accounts
      ADD COLUMN display_name text CONSTRAINT accounts_display_name_length CHECK (char_length(display_name) BETWEEN 1 AND 200)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE accounts DROP COLUMN display_name`.execute(db);
}
