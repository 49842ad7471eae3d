import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // A promoter's company. Names are unique whatever their case, so "Lantern Promotions" is one organisation.
  await db.schema
    .createTable('organisations')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('organisations_name_length', sql`char_length(name) BETWEEN 1 AND 120`)
    .execute();
  await sql`CREATE UNIQUE INDEX organisations_name_uq ON organisations (lower(name))`.execute(db);

  // People who sign in to the console (not fans: those are `accounts`). The e-mail is stored lowercased.
  // password_hash is self-describing (`scrypt$N=..,r=..,p=..$salt$hash`) so the cost can rise later.
  await db.schema
    .createTable('console_users')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'uuid', (c) => c.references('organisations.id'))
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('console_users_role', sql`role IN ('admin', 'operator', 'promoter', 'viewer')`)
    .addCheckConstraint('console_users_email_lower', sql`email = lower(email)`)
    // A promoter is scoped to exactly one organisation; the other roles see every event and have none.
    .addCheckConstraint('console_users_promoter_org', sql`(role = 'promoter') = (organisation_id IS NOT NULL)`)
    .execute();

  // Console sessions: only a SHA-256 of the random token is kept, so a read of this table cannot sign anyone
  // in. Any BFF instance accepts a session; deleting the row is sign-out.
  await db.schema
    .createTable('console_sessions')
    .addColumn('token_hash', 'bytea', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('console_users.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .execute();
  await db.schema.createIndex('console_sessions_user_idx').on('console_sessions').column('user_id').execute();
  await db.schema.createIndex('console_sessions_expires_idx').on('console_sessions').column('expires_at').execute();

  // The organisation that owns an event; NULL: a house event, which promoters do not see.
  await db.schema
    .alterTable('events')
    .addColumn('organisation_id', 'uuid', (c) => c.references('organisations.id'))
    .execute();
  await db.schema.createIndex('events_organisation_idx').on('events').column('organisation_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').dropColumn('organisation_id').execute();
  await db.schema.dropTable('console_sessions').ifExists().execute();
  await db.schema.dropTable('console_users').ifExists().execute();
  await db.schema.dropTable('organisations').ifExists().execute();
}
