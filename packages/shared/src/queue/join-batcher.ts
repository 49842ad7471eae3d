import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { GroupCommit } from '../db/group-commit.js';
import type { JoinRow } from './queue.repository.js';

interface PendingJoin {
  /** The queue's id: the event's, or a presale tier's. */
  eventId: string;
  accountId: string;
  deviceHash: string;
  randomizedPreopen: boolean;
}

/**
 * Joins under a burst: requests arriving within a few milliseconds of each other share one INSERT and one
 * commit (GroupCommit, an application-level group commit), so a join costs a fraction of a transaction. One
 * position per account still holds: the unique (event, account) key decides, and every caller gets the row that won.
 */
export class JoinBatcher {
  private readonly commit: GroupCommit<PendingJoin, JoinRow | undefined>;

  constructor(db: Db, opts: { maxBatch?: number; maxWaitMs?: number; maxConcurrentBatches?: number } = {}) {
    this.commit = new GroupCommit(
      async (batch) => {
        const rows = await insertBatch(db, batch);
        return batch.map((p) => rows.get(`${p.eventId}\u0000${p.accountId}`));
      },
      { maxBatch: opts.maxBatch ?? 200, maxWaitMs: opts.maxWaitMs ?? 5, maxConcurrentBatches: opts.maxConcurrentBatches ?? 2 },
    );
  }

  join(eventId: string, accountId: string, deviceHash: string, randomizedPreopen: boolean): Promise<JoinRow | undefined> {
    return this.commit.submit({ eventId, accountId, deviceHash, randomizedPreopen });
  }
}

/** One statement inserts the batch in arrival order (join indexes from each event's sequence); a second reads back every row. */
async function insertBatch(db: Db, batch: PendingJoin[]): Promise<Map<string, JoinRow>> {
  const events = batch.map((p) => p.eventId);
  const accounts = batch.map((p) => p.accountId);
  const { rows: created } = await sql<{ event_id: string; account_id: string }>`
    WITH input AS (
      SELECT * FROM unnest(${events}::uuid[], ${accounts}::text[], ${batch.map((p) => p.deviceHash)}::text[],
                           ${batch.map((p) => p.randomizedPreopen)}::boolean[]) WITH ORDINALITY AS t(event_id, account_id, device_hash, randomized, ord)),
    account AS (INSERT INTO accounts (id) SELECT DISTINCT account_id FROM input ON CONFLICT (id) DO NOTHING),
    -- A queue is an event's own or a presale tier's (keyed by the tier's id; it opens at the tier's window).
    ordered AS (
      SELECT i.*, coalesce(a.opens_at, e.onsale_at) AS onsale_at, q.sealed_at FROM input i
      JOIN queue_state q ON q.event_id = i.event_id
      LEFT JOIN events e ON e.id = i.event_id
      LEFT JOIN allocations a ON a.queue_id = i.event_id AND NOT a.general
      ORDER BY i.ord)
    INSERT INTO queue_entries (event_id, account_id, device_hash, join_index, cohort)
    SELECT event_id, account_id, device_hash, nextval(('queue_join_' || replace(event_id::text, '-', ''))::regclass),
           CASE WHEN randomized AND now() < onsale_at AND sealed_at IS NULL THEN 'PREOPEN' ELSE 'FIFO' END
    FROM ordered
    ON CONFLICT (event_id, account_id) DO NOTHING
    RETURNING event_id, account_id`.execute(db);
  const fresh = new Set(created.map((r) => `${r.event_id}\u0000${r.account_id}`));
  const { rows } = await sql<{
    event_id: string;
    account_id: string;
    join_index: number;
    cohort: 'PREOPEN' | 'FIFO';
    device_hash: string;
    joined_at: Date;
    device_moves: number;
  }>`
    SELECT q.event_id, q.account_id, q.join_index, q.cohort, q.device_hash, q.joined_at, q.device_moves
    FROM queue_entries q JOIN unnest(${events}::uuid[], ${accounts}::text[]) AS t(event_id, account_id)
      ON q.event_id = t.event_id AND q.account_id = t.account_id`.execute(db);
  const out = new Map<string, JoinRow>();
  for (const r of rows) {
    const k = `${r.event_id}\u0000${r.account_id}`;
    out.set(k, {
      join_index: r.join_index,
      cohort: r.cohort,
      device_hash: r.device_hash,
      joined_at: r.joined_at,
      device_moves: r.device_moves,
      created: fresh.has(k),
    });
  }
  return out;
}
