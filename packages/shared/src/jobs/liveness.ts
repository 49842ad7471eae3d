import { randomUUID } from 'node:crypto';
import type { WorkerEvents } from 'graphile-worker';
import type { Db } from '../db/connect.js';
import { deleteSilentHeartbeats, forceUnlockWorkers, forgetHeartbeats, saveHeartbeats } from './liveness.repository.js';

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
    await saveHeartbeats(this.db, this.process, [...this.ids]);
  }

  /** A clean stop: the runner has released its jobs; forget this process's ids. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await forgetHeartbeats(this.db, this.process).catch(this.onError);
  }
}

/** Releases the jobs of workers whose heartbeat stopped; returns their ids. */
export async function releaseDeadWorkers(db: Db, deadAfterMs = DEAD_AFTER_MS): Promise<string[]> {
  const ids = await deleteSilentHeartbeats(db, deadAfterMs / 1000);
  if (ids.length > 0) await forceUnlockWorkers(db, ids);
  return ids;
}
