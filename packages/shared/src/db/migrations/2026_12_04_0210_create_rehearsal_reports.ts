import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * One row per rehearsal run: what was asked (the command line's settings), when it started and finished, its
 * status (RUNNING while it runs, then PASS, FAIL or ERROR) and the whole report as JSON. The event id has no
 * foreign key: a rehearsal with its own scratch database (`--spawn`) reports here about an event that lived there.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rehearsal_reports')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('event_id', 'uuid')
    .addColumn('event_name', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('fans', 'integer', (c) => c.notNull())
    .addColumn('time_scale', 'double precision', (c) => c.notNull())
    .addColumn('settings', 'jsonb', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('RUNNING'))
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .addColumn('report', 'jsonb')
    .addCheckConstraint('rehearsal_reports_status', sql`status IN ('RUNNING', 'PASS', 'FAIL', 'ERROR')`)
    .execute();
  await db.schema.createIndex('rehearsal_reports_started_idx').on('rehearsal_reports').column('started_at').execute();
  await db.schema.createIndex('rehearsal_reports_event_idx').on('rehearsal_reports').column('event_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rehearsal_reports').ifExists().execute();
}
