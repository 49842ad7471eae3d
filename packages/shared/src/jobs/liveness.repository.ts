import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

// Worker heartbeats' SQL (liveness.ts), and graphile-worker's own unlock of a dead worker's jobs.

/** This process's workers were seen now. */
export async function saveHeartbeats(db: Db, process: string, workerIds: string[]): Promise<void> {
  await sql`
    INSERT INTO worker_heartbeats (worker_id, process, seen_at)
    SELECT id, ${process}, now() FROM unnest(${workerIds}::text[]) AS id
    ON CONFLICT (worker_id) DO UPDATE SET seen_at = now()`.execute(db);
}

/** Forgets this process's workers (a clean stop). */
export async function forgetHeartbeats(db: Db, process: string): Promise<void> {
  await sql`DELETE FROM worker_heartbeats WHERE process = ${process}`.execute(db);
}

/** Forgets the workers silent for `seconds`; their ids. */
export async function deleteSilentHeartbeats(db: Db, seconds: number): Promise<string[]> {
  const { rows } = await sql<{ worker_id: string }>`
    DELETE FROM worker_heartbeats WHERE seen_at < now() - make_interval(secs => ${seconds}) RETURNING worker_id`.execute(db);
  return rows.map((r) => r.worker_id);
}

/** Releases the jobs the workers had locked (graphile-worker's force_unlock_workers). */
export async function forceUnlockWorkers(db: Db, workerIds: string[]): Promise<void> {
  await sql`SELECT graphile_worker.force_unlock_workers(${workerIds}::text[])`.execute(db);
}
