import type { Db, Trx } from '../db/connect.js';
import { GroupCommit } from '../db/group-commit.js';
import { setCommitMode, type HoldCommit } from './hold-commit.js';
import type { HoldAttempt, HoldAttemptResult } from './holds.repository.js';
import { runBatch } from './hold-batch.repository.js';

export type AttemptResult = HoldAttemptResult;

/**
 * Hold attempts under load: attempts arriving within a few milliseconds share one statement and one commit
 * (each still all-or-nothing, under its own account's lock), so the cost of a round trip and a commit is paid
 * once per batch instead of once per fan (a GroupCommit). Two rules keep a batch exact:
 *  - one attempt per (event, account) and per (event, device) in flight at a time: a second waits for the next
 *    batch, so its count sees the first (a statement cannot see its own writes);
 *  - the seats of the attempts in a batch are disjoint: the hold service claims a block in memory before it
 *    attempts it, and the batcher does not mix attempts that share a seat.
 * Account locks are taken in account order, then device locks in device order, so two batches never wait on
 * each other in a cycle. Each attempt's Idempotency-Key is written with its hold, in the batch's statement (an
 * attempt whose key has a hold already does nothing and answers with that hold); a batch that fails as a whole (a deadlock with another process, say) is retried one
 * attempt at a time.
 */
export class HoldBatcher {
  private readonly commit: GroupCommit<HoldAttempt, AttemptResult>;

  constructor(db: Db, commit: HoldCommit, opts: { maxBatch?: number; maxWaitMs?: number; maxConcurrentBatches?: number } = {}) {
    this.commit = new GroupCommit((attempts) => runBatch(db, attempts, commit), {
      maxBatch: opts.maxBatch ?? 100,
      maxWaitMs: opts.maxWaitMs ?? 2,
      maxConcurrentBatches: opts.maxConcurrentBatches ?? 2,
      retryAlone: true,
      keys: (a) => [
        `${a.eventId}\u0000${a.accountId}`,
        // Devices share the account keys' space under a prefix no account id has.
        ...(a.deviceHash ? [`${a.eventId}\u0000\u0001device:${a.deviceHash}`] : []),
        ...a.seatIds.map((id) => `${a.eventId}\u0000\u0002seat:${id}`),
      ],
    });
  }

  attempt(a: HoldAttempt): Promise<AttemptResult> {
    return this.commit.submit(a);
  }
}

/**
 * Releases under load: those arriving within a few milliseconds share one transaction (`releaseMany` checks and
 * answers each alone), so a stampede of releases costs a handful of statements and one commit per batch instead
 * of per fan (a GroupCommit). A hold appears in one batch at a time (a second release of it waits for the next). A
 * batch whose transaction fails as a whole (a deadlock with another process, say) is retried one release at a time.
 */
export class ReleaseBatcher<R extends { holdId: string }, H> {
  private readonly commit: GroupCommit<R, H>;

  constructor(db: Db, commit: HoldCommit, releaseMany: (trx: Trx, reqs: R[]) => Promise<(H | Error)[]>) {
    this.commit = new GroupCommit(
      (reqs) =>
        db.transaction().execute(async (trx) => {
          await setCommitMode(trx, commit);
          return releaseMany(trx, reqs);
        }),
      {
        maxBatch: 100,
        maxWaitMs: 2,
        maxConcurrentBatches: 2,
        retryAlone: true,
        keys: (r) => [r.holdId],
      },
    );
  }

  release(req: R): Promise<H> {
    return this.commit.submit(req);
  }
}

export { runBatch } from './hold-batch.repository.js';
