import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * The seats' counts by event, section, allocation ('' for none) and stored status, kept by the database itself so
 * that nobody counts 60,000 seats a second (the admission controller's tick, the seat map, the war room did):
 *
 * - `seat_count_changes`: one row per statement that inserts, updates or deletes seats, with what it changed
 *   (statement-level triggers with transition tables, in the writer's own transaction, so a rolled-back hold
 *   changes nothing). Insert-only: concurrent holds in one section never wait on each other for a counter row.
 * - `seat_counts`: the folded totals. The admission controller folds an event's changes into it on its tick
 *   (one DELETE ... RETURNING); a reader adds the changes not folded yet.
 *
 * Read-time expiry stays the seats' own: a HELD seat whose `expires_at` passed counts as available, read through
 * `seats_lapsed_idx` (HELD seats by expiry: the few the sweeper has not given back yet).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE seat_counts (
      event_id uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      section_code text NOT NULL,
      allocation text NOT NULL DEFAULT '',
      available integer NOT NULL DEFAULT 0,
      held integer NOT NULL DEFAULT 0,
      sold integer NOT NULL DEFAULT 0,
      PRIMARY KEY (event_id, section_code, allocation)
    )`.execute(db);
  await sql`
    CREATE TABLE seat_count_changes (
      event_id uuid NOT NULL,
      section_code text NOT NULL,
      allocation text NOT NULL DEFAULT '',
      available integer NOT NULL,
      held integer NOT NULL,
      sold integer NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX seat_count_changes_event_idx ON seat_count_changes (event_id)`.execute(db);
  await sql`CREATE INDEX seats_lapsed_idx ON seats (event_id, expires_at) WHERE status = 'HELD'`.execute(db);

  // One function per trigger kind: a trigger with transition tables fires for one kind of statement only.
  const fold = (rows: string) =>
    sql.raw(`
    INSERT INTO seat_count_changes (event_id, section_code, allocation, available, held, sold)
    SELECT event_id, section_code, allocation, sum(available), sum(held), sum(sold)
    FROM (${rows}) c
    GROUP BY event_id, section_code, allocation
    HAVING sum(available) <> 0 OR sum(held) <> 0 OR sum(sold) <> 0;`);
  const signed = (table: string, sign: string) => `
    SELECT event_id, section_code, coalesce(allocation, '') AS allocation,
           ${sign}(status = 'AVAILABLE')::int AS available, ${sign}(status = 'HELD')::int AS held,
           ${sign}(status = 'SOLD')::int AS sold
    FROM ${table}`;
  await sql`
    CREATE FUNCTION seat_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN ${fold(signed('new_seats', ''))} RETURN NULL; END $$`.execute(db);
  await sql`
    CREATE FUNCTION seat_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN ${fold(signed('old_seats', '-'))} RETURN NULL; END $$`.execute(db);
  await sql`
    CREATE FUNCTION seat_counts_updated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN ${fold(`${signed('new_seats', '')} UNION ALL ${signed('old_seats', '-')}`)} RETURN NULL; END $$`.execute(db);
  await sql`CREATE TRIGGER seat_counts_insert AFTER INSERT ON seats REFERENCING NEW TABLE AS new_seats
            FOR EACH STATEMENT EXECUTE FUNCTION seat_counts_inserted()`.execute(db);
  await sql`CREATE TRIGGER seat_counts_delete AFTER DELETE ON seats REFERENCING OLD TABLE AS old_seats
            FOR EACH STATEMENT EXECUTE FUNCTION seat_counts_deleted()`.execute(db);
  await sql`CREATE TRIGGER seat_counts_update AFTER UPDATE ON seats REFERENCING OLD TABLE AS old_seats NEW TABLE AS new_seats
            FOR EACH STATEMENT EXECUTE FUNCTION seat_counts_updated()`.execute(db);

  // The seats already there: counted once.
  await sql`
    INSERT INTO seat_counts (event_id, section_code, allocation, available, held, sold)
    SELECT event_id, section_code, coalesce(allocation, ''), count(*) FILTER (WHERE status = 'AVAILABLE'),
           count(*) FILTER (WHERE status = 'HELD'), count(*) FILTER (WHERE status = 'SOLD')
    FROM seats GROUP BY event_id, section_code, coalesce(allocation, '')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER seat_counts_insert ON seats`.execute(db);
  await sql`DROP TRIGGER seat_counts_delete ON seats`.execute(db);
  await sql`DROP TRIGGER seat_counts_update ON seats`.execute(db);
  await sql`DROP FUNCTION seat_counts_inserted(), seat_counts_deleted(), seat_counts_updated()`.execute(db);
  await sql`DROP INDEX seats_lapsed_idx`.execute(db);
  await sql`DROP TABLE seat_count_changes, seat_counts`.execute(db);
}
