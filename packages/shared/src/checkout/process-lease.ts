import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { dedicatedConnection, type Db } from '../db/connect.js';
import * as repo from './checkout.repository.js';
import type { GoneRule } from './checkout.repository.js';

/** How often a store-API process renews its lease. */
export const LEASE_BEAT_MS = 1000;
/** A lease not renewed for this long, while the database was reachable, belongs to a process that is gone. */
export const LEASE_SILENT_AFTER_MS = 5000;
/**
 * A lease whose connection ended (the process died: PostgreSQL ends a dead client's backend at once) and that was
 * not renewed for this long since belongs to a process that is gone: a killed process is known for gone within
 * a second or two, while a live one whose connection dropped has the time to renew over a new one.
 */
export const LEASE_CONNECTION_GONE_AFTER_MS = 1500;
/** The connection rule is trusted once this process's own lease connection has been up this long (see GoneRule). */
export const LEASE_OWN_CONNECTION_UP_MS = 2000;

/**
 * A store-API process's lease on the checkouts it starts (store_processes): renewed every second over a connection
 * of its own (never behind the pool's queue, nor taking one of its connections), ended on a clean stop. The lease
 * names that connection's backend. Another process settles this one's unfinished checkouts once its lease ended,
 * or once its connection is gone and it has not renewed since (killed: within LEASE_CONNECTION_GONE_AFTER_MS), or
 * once it went silent for LEASE_SILENT_AFTER_MS while the other's own lease was being renewed without a gap for
 * as long (a lost machine, whose connections linger). A database outage, which silences every lease and ends every
 * connection at once, is never mistaken for a death: every live process renews over a new connection first.
 */
export class ProcessLease {
  readonly id: string;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  /** When the current unbroken run of renewals began (null: the last renewal failed, or none yet). */
  private steadySince: number | null = null;
  private lastRenewedAt = 0;
  private connection: Db | undefined;

  constructor(
    private readonly db: Db,
    private readonly opts: { beatMs?: number; now?: () => number; id?: string; connection?: Db } = {},
  ) {
    this.id = opts.id ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private get beatMs(): number {
    return this.opts.beatMs ?? LEASE_BEAT_MS;
  }

  /** The lease's own connection (opened on first use). */
  private get leaseDb(): Db {
    return (this.connection ??= this.opts.connection ?? dedicatedConnection(this.db, 'store-api lease'));
  }

  /** Takes the lease (first renewal; a database that is down now is retried on the next beat) and renews it every beatMs. */
  async start(): Promise<void> {
    await this.beat();
    // Ignored on purpose: Tidying only (old leases of processes long gone): a database that is down now is the beat's to report.
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
      await repo.renewLease(this.leaseDb, this.id);
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

  /** How this process judges other processes gone now (see GoneRule): the silence rule only while steady for as long. */
  goneRule(): GoneRule {
    return {
      silentSeconds: this.steadyFor(LEASE_SILENT_AFTER_MS) ? LEASE_SILENT_AFTER_MS / 1000 : null,
      connectionGoneSeconds: LEASE_CONNECTION_GONE_AFTER_MS / 1000,
      ownConnectionUpSeconds: LEASE_OWN_CONNECTION_UP_MS / 1000,
    };
  }

  /** A clean stop: the lease ends now, so other processes settle whatever this one left unfinished at once. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.beating;
    // Ignored on purpose: A lease not ended lapses by itself within seconds (its beats stop), and others then settle its checkouts.
    await repo.endLease(this.db, this.id).catch(() => {});
    // Ignored on purpose: the lease's own connection, closed at a stop; one that fails to close is gone with the process.
    if (this.connection && this.connection !== this.opts.connection) await this.connection.destroy().catch(() => {});
    this.connection = undefined;
  }
}
