import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Db } from '../db/connect.js';
import * as repo from './checkout.repository.js';

/** How often a store-API process renews its lease. */
export const LEASE_BEAT_MS = 1000;
/** A lease not renewed for this long, while the database was reachable, belongs to a process that is gone. */
export const LEASE_SILENT_AFTER_MS = 5000;

/**
 * A store-API process's lease on the checkouts it starts (store_processes): renewed every second, ended on a clean
 * stop. Another process settles this one's unfinished checkouts once its lease ended, or went silent for
 * LEASE_SILENT_AFTER_MS while the other's own lease was being renewed without a gap for as long (so a database
 * outage, which silences every lease at once, is never mistaken for a death: every live process renews first).
 */
export class ProcessLease {
  readonly id: string;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  /** When the current unbroken run of renewals began (null: the last renewal failed, or none yet). */
  private steadySince: number | null = null;
  private lastRenewedAt = 0;

  constructor(
    private readonly db: Db,
    private readonly opts: { beatMs?: number; now?: () => number; id?: string } = {},
  ) {
    this.id = opts.id ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private get beatMs(): number {
    return this.opts.beatMs ?? LEASE_BEAT_MS;
  }

  /** Takes the lease (first renewal; a database that is down now is retried on the next beat) and renews it every beatMs. */
  async start(): Promise<void> {
    await this.beat();
    await repo.pruneLeases(this.db).catch(() => {});
    this.timer = setInterval(() => {
      this.beating ??= this.beat().finally(() => (this.beating = undefined));
    }, this.beatMs);
    this.timer.unref();
  }

  /** Renews the lease once (never throws: a failed renewal breaks the steady run). */
  async beat(): Promise<void> {
    const at = this.now();
    try {
      await repo.renewLease(this.db, this.id);
      // A gap longer than two beats (a stalled event loop, a slow database) starts a new run.
      if (this.steadySince === null || at - this.lastRenewedAt > 2.5 * this.beatMs) this.steadySince = at;
      this.lastRenewedAt = at;
    } catch {
      this.steadySince = null;
    }
  }

  /** The lease has been renewed without a gap for at least `ms`, and lately. */
  steadyFor(ms: number): boolean {
    const now = this.now();
    return this.steadySince !== null && now - this.lastRenewedAt <= 2.5 * this.beatMs && now - this.steadySince >= ms;
  }

  /** A clean stop: the lease ends now, so other processes settle whatever this one left unfinished at once. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.beating;
    await repo.endLease(this.db, this.id).catch(() => {});
  }
}
