import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * The venue's time zone (IANA name; the console shows every time of the event in it) and the currency its prices
 * are in (ISO 4217). Events made before these existed were shown in UTC and US dollars, so those are the defaults.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('events')
    .addColumn('time_zone', 'text', (c) => c.notNull().defaultTo('UTC'))
    .addColumn('currency', 'text', (c) => c.notNull().defaultTo('USD'))
    .execute();
  await sql`ALTER TABLE events ADD CONSTRAINT events_currency_code CHECK (currency ~ '^[A-Z]{3}$')`.execute(db);
  await sql`ALTER TABLE events ADD CONSTRAINT events_time_zone_length CHECK (char_length(time_zone) BETWEEN 1 AND 64)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').dropColumn('time_zone').dropColumn('currency').execute();
}
