import type { Db } from '../db/connect.js';
import { GroupCommit } from '../db/group-commit.js';
import type { JoinRow } from './queue.repository.js';
import { insertBatch, type PendingJoin } from './join-batch.repository.js';

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
