import { sql } from 'kysely';
import type { Db } from './connect.js';

/**
 * The tables an on-sale writes fast: holds, their GA units, accounts, queue positions, orders and checkouts,
 * waitlist entries and notifications.
 */
export const HOT_TABLES = [
  'holds',
  'ga_hold_units',
  'accounts',
  'queue_entries',
  'orders',
  'checkout_attempts',
  'waitlist_entries',
  'notifications',
] as const;

export interface StatsKeeperOptions {
  /** How often to look (default 5 s). */
  intervalMs?: number;
  /** Re-analyze a table once this many rows changed since its last analyze... */
  minChangedRows?: number;
  /** ...and at least this share of its rows (default 0.2). */
  changedShare?: number;
  onError?: (err: unknown) => void;
}

/**
 * Keeps the planner's statistics of the hot tables current while an on-sale fills them. A pooled connection keeps
 * the plans its functions' statements settled on (PL/pgSQL caches a generic plan after five runs), and a plan made
 * while a table was nearly empty (a fresh database, the first seconds of a sale) scans it whole; nothing replans it
 * until the table is analyzed. Autovacuum gets there within a minute or more; measured on the GA hold, the rate
 * halved within 8,000 holds and doubled again after an ANALYZE (README, bench ga). This analyzes a hot table as
 * soon as a fifth of its rows (and at least 500) changed since its last analyze, which invalidates those plans in
 * every session. Several processes may run one: a transaction-scoped advisory lock lets one analyze at a time.
 */
export class StatsKeeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** Tables analyzed by this keeper, for tests and logs. */
  readonly analyzed: string[] = [];

  constructor(
    private readonly db: Db,
    private readonly opts: StatsKeeperOptions = {},
  ) {}

  /** One look: analyzes each hot table that changed enough; returns the ones it analyzed. */
  async tick(): Promise<string[]> {
    const min = this.opts.minChangedRows ?? 500;
    const share = this.opts.changedShare ?? 0.2;
    const { rows } = await sql<{ relname: string }>`
      SELECT s.relname FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
      WHERE s.relname = ANY(${[...HOT_TABLES]}::text[])
        AND s.n_mod_since_analyze >= greatest(${min}::bigint, (${share}::float8 * greatest(c.reltuples, 0))::bigint)`.execute(this.db);
    const done: string[] = [];
    for (const { relname } of rows) {
      const ran = await this.db.transaction().execute(async (trx) => {
        const { rows: lock } = await sql<{
          ok: boolean;
        }>`SELECT pg_try_advisory_xact_lock(hashtextextended(${`onsale:analyze:${relname}`}, 0)) AS ok`.execute(trx);
        if (!lock[0]?.ok) return false;
        await sql`ANALYZE ${sql.id(relname)}`.execute(trx);
        return true;
      });
      if (ran) done.push(relname);
    }
    this.analyzed.push(...done);
    return done;
  }

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.tick()
        .then(() => undefined)
        .catch((err: unknown) => this.opts.onError?.(err))
        .finally(() => (this.running = undefined));
    }, this.opts.intervalMs ?? 5000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
