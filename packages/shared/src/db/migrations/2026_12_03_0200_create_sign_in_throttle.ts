import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * Console sign-in throttling, shared by every BFF instance. `sign_in_failures` has one row per sign-in attempt
 * that has not (yet) succeeded, written before the password is checked, so attempts sent at once are counted
 * before any of them is verified; a success deletes its e-mail's rows. `sign_in_lockouts` holds the current and
 * last lockout of an e-mail address or a client address, and how many in a row (each lasts longer).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sign_in_failures')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('failed_at', 'timestamptz', (c) => c.notNull())
    .addCheckConstraint('sign_in_failures_email_length', sql`char_length(email) BETWEEN 1 AND 254`)
    .addCheckConstraint('sign_in_failures_ip_length', sql`ip IS NULL OR char_length(ip) BETWEEN 1 AND 64`)
    .execute();
  await db.schema.createIndex('sign_in_failures_email_idx').on('sign_in_failures').columns(['email', 'failed_at']).execute();
  await db.schema
    .createIndex('sign_in_failures_ip_idx')
    .on('sign_in_failures')
    .columns(['ip', 'failed_at'])
    .where(sql.ref('ip'), 'is not', null)
    .execute();
  await db.schema.createIndex('sign_in_failures_failed_at_idx').on('sign_in_failures').column('failed_at').execute();

  await db.schema
    .createTable('sign_in_lockouts')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('locked_at', 'timestamptz', (c) => c.notNull())
    .addColumn('locked_until', 'timestamptz', (c) => c.notNull())
    .addColumn('lockouts', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('sign_in_lockouts_pk', ['scope', 'key'])
    .addCheckConstraint('sign_in_lockouts_scope', sql`scope IN ('email', 'ip')`)
    .addCheckConstraint('sign_in_lockouts_order', sql`locked_until > locked_at AND lockouts >= 1`)
    .execute();
  await db.schema.createIndex('sign_in_lockouts_locked_until_idx').on('sign_in_lockouts').column('locked_until').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sign_in_lockouts').ifExists().execute();
  await db.schema.dropTable('sign_in_failures').ifExists().execute();
}
