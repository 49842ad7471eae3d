import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { JoinRow } from './queue.repository.js';

// The join batcher's statement (join-batcher.ts): a burst of joins in one INSERT.

export interface PendingJoin {
  /** The queue's id: the event's, or a presale tier's. */
  eventId: string;
  accountId: string;
  deviceHash: string;
  randomizedPreopen: boolean;
}

type EntryRow = {
  event_id: string;
  account_id: string;
  join_index: number;
  cohort: 'PREOPEN' | 'FIFO';
  device_hash: string;
  joined_at: Date;
  device_moves: number;
};

/**
 * One statement numbers the batch in arrival order (join indexes from each event's sequence), inserts it in key order
 * (accounts by id, entries by event and account: two processes' statements over the same fans take their locks in one
 * order, so they wait for each other instead of deadlocking) and returns the rows it
 * created; only the joins it did not create (an account already in line, or one a concurrent statement inserted
 * first: its row is committed once this statement returns) are read back, by a second statement with a snapshot of
 * its own. A burst of new fans is one statement and one round trip.
 */
export async function insertBatch(db: Db, batch: PendingJoin[]): Promise<Map<string, JoinRow>> {
  const events = batch.map((p) => p.eventId);
  const accounts = batch.map((p) => p.accountId);
  const { rows: created } = await sql<EntryRow>`
    WITH input AS (
      SELECT * FROM unnest(${events}::uuid[], ${accounts}::text[], ${batch.map((p) => p.deviceHash)}::text[],
                           ${batch.map((p) => p.randomizedPreopen)}::boolean[]) WITH ORDINALITY AS t(event_id, account_id, device_hash, randomized, ord)),
    account AS (INSERT INTO accounts (id) SELECT DISTINCT account_id FROM input ORDER BY account_id ON CONFLICT (id) DO NOTHING),
    -- A queue is an event's own or a presale tier's (keyed by the tier's id; it opens at the tier's window).
    ordered AS (
      SELECT i.*, coalesce(a.opens_at, e.onsale_at) AS onsale_at, q.sealed_at FROM input i
      JOIN queue_state q ON q.event_id = i.event_id
      LEFT JOIN events e ON e.id = i.event_id
      LEFT JOIN allocations a ON a.queue_id = i.event_id AND NOT a.general
      ORDER BY i.ord),
    numbered AS (
      SELECT event_id, account_id, device_hash, ord,
             nextval(('queue_join_' || replace(event_id::text, '-', ''))::regclass) AS join_index,
             CASE WHEN randomized AND now() < onsale_at AND sealed_at IS NULL THEN 'PREOPEN' ELSE 'FIFO' END AS cohort
      FROM ordered)
    INSERT INTO queue_entries (event_id, account_id, device_hash, join_index, cohort)
    SELECT event_id, account_id, device_hash, join_index, cohort FROM numbered ORDER BY event_id, account_id, ord
    ON CONFLICT (event_id, account_id) DO NOTHING
    RETURNING event_id, account_id, join_index, cohort, device_hash, joined_at, device_moves`.execute(db);
  const out = new Map<string, JoinRow>();
  const put = (r: EntryRow, fresh: boolean) =>
    out.set(`${r.event_id}\u0000${r.account_id}`, {
      join_index: r.join_index,
      cohort: r.cohort,
      device_hash: r.device_hash,
      joined_at: r.joined_at,
      device_moves: r.device_moves,
      created: fresh,
    });
  for (const r of created) put(r, true);
  // The joins whose row the insert did not create (each pair once): read as they are now.
  const seen = new Set(out.keys());
  const otherEvents: string[] = [];
  const otherAccounts: string[] = [];
  for (const p of batch) {
    const k = `${p.eventId}\u0000${p.accountId}`;
    if (seen.has(k)) continue;
    seen.add(k);
    otherEvents.push(p.eventId);
    otherAccounts.push(p.accountId);
  }
  if (otherEvents.length === 0) return out;
  const { rows } = await sql<EntryRow>`
    SELECT q.event_id, q.account_id, q.join_index, q.cohort, q.device_hash, q.joined_at, q.device_moves
    FROM queue_entries q JOIN unnest(${otherEvents}::uuid[], ${otherAccounts}::text[]) AS t(event_id, account_id)
      ON q.event_id = t.event_id AND q.account_id = t.account_id`.execute(db);
  for (const r of rows) put(r, false);
  return out;
}
