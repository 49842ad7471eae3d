import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { WorkerEvents } from 'graphile-worker';
import type { Db } from '../db/connect.js';

/** How often a live worker process says so, and how long a silence means it is gone. */
export const HEARTBEAT_MS = 5_000;
export const DEAD_AFTER_MS = 30_000;

/**
 * Worker liveness: each process records the job-queue worker ids it runs and renews them every few seconds.
 * graphile-worker keeps a job locked by a worker that died (SIGKILL, OOM, a lost machine) for hours before
 * retrying it; with heartbeats, a surviving or restarted worker releases those jobs within half a minute
 * (releaseDeadWorkers), so interrupted work (a fan-out page, a webhook delivery) resumes promptly.
 */
export class WorkerHeartbeat {
  private readonly process = randomUUID();
  private readonly ids = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly heartbeatMs = HEARTBEAT_MS,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  /**
   * Learns the ids that lock jobs from the runner's events (pass the emitter to run() so none is missed): the
   * pool's (jobs fetched in batches for the local queue are locked by the pool) and each worker's; and beats.
   */
  listen(events: WorkerEvents): void {
    const learn = (id: string) => {
      this.ids.add(id);
      this.beat().catch(this.onError);
    };
    events.on('pool:create', ({ workerPool }) => learn(workerPool.id));
    events.on('worker:create', ({ worker }) => learn(worker.workerId));
    this.timer = setInterval(() => void this.beat().catch(this.onError), this.heartbeatMs);
    this.timer.unref();
  }

  async beat(): Promise<void> {
    if (this.ids.size === 0) return;
    await sql`
      INSERT INTO worker_heartbeats (worker_id, process, seen_at)
      SELECT id, ${this.process}, now() FROM unnest(${[...this.ids]}::text[]) AS id
      ON CONFLICT (worker_id) DO UPDATE SET seen_at = now()`.execute(this.db);
  }

  /** A clean stop: the runner has released its jobs; forget this process's ids. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await sql`DELETE FROM worker_heartbeats WHERE process = ${this.process}`.execute(this.db).catch(this.onError);
  }
}

/** Releases the jobs of workers whose heartbeat stopped; returns their ids. */
export async function releaseDeadWorkers(db: Db, deadAfterMs = DEAD_AFTER_MS): Promise<string[]> {
  const { rows } = await sql<{ worker_id: string }>`
    DELETE FROM worker_heartbeats WHERE seen_at < now() - make_interval(secs => ${deadAfterMs / 1000}) RETURNING worker_id`.execute(db);
  const ids = rows.map((r) => r.worker_id);
  if (ids.length > 0) await sql`SELECT graphile_worker.force_unlock_workers(${ids}::text[])`.execute(db);
  return ids;
}
