import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import { STORE_LOAD_FRESH_MS, type StoreLoadSnapshot } from './store-load.js';

// SQL of the store's load reports: each store-API process upserts its row per event; the controller sums the fresh ones.

/**
 * Writes one process's reports (one row per event and process), dated `at` (the database's clock by default), and
 * drops reports an hour old (processes that stopped: a restart reports under a new name), so the table stays a few
 * rows per event on sale.
 */
export async function reportStoreLoad(db: Db, instance: string, rows: readonly StoreLoadSnapshot[], at?: Date): Promise<void> {
  if (rows.length === 0) return;
  const when = at ? sql`${at}::timestamptz` : sql`now()`;
  await sql`
    INSERT INTO store_load (event_id, instance, reported_at, holds_in_flight, checkouts_in_flight, holds_answered, hold_latency_p90_ms, oldest_in_flight_ms,
                            admitted_wait_p90_ms, holds_shed)
    SELECT e, ${instance}, ${when}, h, c, a, p, o, w, s
    FROM unnest(${rows.map((r) => r.eventId)}::uuid[], ${rows.map((r) => r.holdsInFlight)}::int[], ${rows.map((r) => r.checkoutsInFlight)}::int[],
                ${rows.map((r) => r.holdsAnswered)}::int[], ${rows.map((r) => r.holdLatencyP90Ms)}::float8[],
                ${rows.map((r) => r.oldestInFlightMs)}::float8[], ${rows.map((r) => r.admittedWaitP90Ms)}::float8[],
                ${rows.map((r) => r.holdsShed)}::int[]) AS t(e, h, c, a, p, o, w, s)
    ON CONFLICT (event_id, instance) DO UPDATE
    SET reported_at = excluded.reported_at, holds_in_flight = excluded.holds_in_flight, checkouts_in_flight = excluded.checkouts_in_flight,
        holds_answered = excluded.holds_answered, hold_latency_p90_ms = excluded.hold_latency_p90_ms,
        oldest_in_flight_ms = excluded.oldest_in_flight_ms, admitted_wait_p90_ms = excluded.admitted_wait_p90_ms,
        holds_shed = excluded.holds_shed`.execute(db);
  await sql`DELETE FROM store_load WHERE reported_at < ${when} - interval '1 hour'`.execute(db);
}

/** The store's load for one event, summed over the processes that reported within STORE_LOAD_FRESH_MS of `at`. */
export interface StoreLoadRow {
  /** Processes with a fresh report. */
  reporting: number;
  holds_in_flight: number;
  checkouts_in_flight: number;
  holds_answered: number;
  /** The slowest process's 90th percentile (ms); 0 when no hold was answered. */
  hold_latency_p90_ms: number;
  oldest_in_flight_ms: number;
  /** The longest of the processes' waits since admission (90th percentile each, ms); 0 when none is known. */
  admitted_wait_p90_ms: number;
  /** Holds of admitted fans shed (503 unserved) over the last 5 s, summed over the processes. */
  holds_shed: number;
}

export async function readStoreLoad(db: Db | Trx, eventId: string, at?: Date): Promise<StoreLoadRow> {
  const now = at ? sql`${at}::timestamptz` : sql`now()`;
  const { rows } = await sql<StoreLoadRow>`
    SELECT count(*)::int AS reporting, coalesce(sum(holds_in_flight), 0)::int AS holds_in_flight,
           coalesce(sum(checkouts_in_flight), 0)::int AS checkouts_in_flight, coalesce(sum(holds_answered), 0)::int AS holds_answered,
           coalesce(max(hold_latency_p90_ms) FILTER (WHERE holds_answered > 0), 0)::float8 AS hold_latency_p90_ms,
           coalesce(max(oldest_in_flight_ms), 0)::float8 AS oldest_in_flight_ms,
           coalesce(max(admitted_wait_p90_ms), 0)::float8 AS admitted_wait_p90_ms, coalesce(sum(holds_shed), 0)::int AS holds_shed
    FROM store_load
    WHERE event_id = ${eventId} AND reported_at > ${now} - make_interval(secs => ${STORE_LOAD_FRESH_MS / 1000})
      AND reported_at <= ${now} + interval '1 second'`.execute(db);
  return rows[0]!;
}
