import type { Db } from '../db/connect.js';
import { GroupCommit } from '../db/group-commit.js';
import { ensureAccounts } from './accounts.repository.js';

/**
 * Records the accounts a process sees for the first time, many to a statement: a crowd of new fans arriving together
 * (every join of an on-sale's opening minute is a fan the process has not seen) would otherwise cost a transaction
 * and its commit each before the join itself, whose own writes are already shared (the join batcher). A batch that
 * fails as a whole is written again one account at a time, so each request gets the answer it would have had alone;
 * after a lost connection every caller is told of the outage, as it would have been.
 */
export class AccountRecorder {
  private readonly commit: GroupCommit<{ id: string; displayName: string | null }, true>;
  /** Statements written and accounts recorded (an account seen twice in flight counts twice). */
  readonly stats = { statements: 0, accounts: 0 };

  constructor(db: Db, opts: { maxBatch?: number; maxWaitMs?: number } = {}) {
    this.commit = new GroupCommit(
      async (accounts) => {
        this.stats.statements++;
        this.stats.accounts += accounts.length;
        await ensureAccounts(db, accounts);
        return accounts.map(() => true as const);
      },
      { maxBatch: opts.maxBatch ?? 500, maxWaitMs: opts.maxWaitMs ?? 2, maxConcurrentBatches: 2, retryAlone: true },
    );
  }

  /** Resolves once `accountId` is in the database (with its display name, when its token carried one). */
  async record(accountId: string, displayName: string | null = null): Promise<void> {
    await this.commit.submit({ id: accountId, displayName });
  }
}
