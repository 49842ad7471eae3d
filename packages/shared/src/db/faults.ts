import { EventEmitter } from 'node:events';

// Database faults as the product answers them: an outage (the server is unreachable, restarting or shedding
// connections) is retryable by the client and is a 503 with Retry-After, never a 500; so is a statement the server
// gave up on for load (a timeout, a deadlock victim). Everything else is a bug and stays an internal error.

/** `unavailable`: the database cannot be reached or is not accepting work; `busy`: it refused one statement under load. */
export type DatabaseFault = 'unavailable' | 'busy';

/**
 * Connection-class errors: socket errors, PostgreSQL's connection exceptions (class 08), the server shutting down
 * or starting up (57P01-57P03), too many connections (53300), and the pg driver's own words for a lost or
 * never-made connection (pool wait timeout included).
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin_shutdown: terminating connection due to administrator command
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: the database system is starting up
  '53300', // too_many_connections
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '08P01',
]);
const UNAVAILABLE_MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|not queryable|the database system is (starting up|shutting down|in recovery mode|not yet accepting connections)|connection timeout|server closed the connection unexpectedly|Query read timeout/i;
/** Statements the server refused under load: a statement or lock timeout, a serialization failure, a deadlock victim. */
const BUSY_CODES = new Set(['57014', '55P03', '40001', '40P01']);

/** Whether `err` (or an error it wraps: `cause`, an AggregateError's `errors`) is a database fault, and which. */
export function databaseFaultOf(err: unknown): DatabaseFault | null {
  const seen = new Set<unknown>();
  const walk = (e: unknown, depth: number): DatabaseFault | null => {
    if (!e || typeof e !== 'object' || seen.has(e) || depth > 5) return null;
    seen.add(e);
    const x = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    const code = typeof x.code === 'string' ? x.code : undefined;
    if (code && UNAVAILABLE_CODES.has(code)) return 'unavailable';
    if (code && BUSY_CODES.has(code)) return 'busy';
    // The driver's own errors carry no code; a query's error from the server always has one.
    if (!code && typeof x.message === 'string' && UNAVAILABLE_MESSAGES.test(x.message)) return 'unavailable';
    if (Array.isArray(x.errors))
      for (const inner of x.errors) {
        const f = walk(inner, depth + 1);
        if (f) return f;
      }
    return walk(x.cause, depth + 1);
  };
  return walk(err, 0);
}

/**
 * Whether `err` says the connection it came from is gone: the server ended the session (an error of FATAL or PANIC
 * severity, such as 57P01 when it is stopping or a backend is terminated, precedes its closing the socket), the
 * socket was reset or closed, or the driver already knows the client is dead. Such a client is never used again.
 */
export function isConnectionLost(err: unknown): boolean {
  const e = err as { code?: unknown; severity?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (e.severity === 'FATAL' || e.severity === 'PANIC') return true;
  if (typeof e.code === 'string') return LOST_SOCKET_CODES.has(e.code);
  return typeof e.message === 'string' && /connection terminated|not queryable/i.test(e.message);
}
const LOST_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT']);

/**
 * Whether a statement that failed with `err` certainly did not take effect, so running it again elsewhere cannot
 * repeat it: the server answered it with an error that ended the session (FATAL or PANIC, which aborts any
 * transaction the statement was in), or the driver refused to send it on a client it already knew was dead. A
 * socket that was reset or closed while the statement was out says nothing of the kind: the server may have run
 * and committed it before the answer was lost.
 */
export function statementNeverRan(err: unknown): boolean {
  const e = err as { code?: unknown; severity?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (e.severity === 'FATAL' || e.severity === 'PANIC') return true;
  return typeof e.code !== 'string' && typeof e.message === 'string' && /is not queryable/i.test(e.message);
}

/** What the database's health tracker tells its listeners. */
export interface DatabaseHealthEvents {
  /** The first failure of an outage. */
  down: [{ at: number; error: string }];
  /** The outage is over: a query succeeded and no connection failed for `settleMs`. */
  up: [{ at: number; downForMs: number; failures: number }];
}

/**
 * Whether one pool's database answers, learnt from its own traffic (no probe): a connection-class failure starts an
 * outage (one `down` event), a successful query with no failure for `settleMs` ends it (one `up` event). So a
 * process logs an outage twice (when it starts and when it ends, with how many failures it saw) rather than once
 * per failed request. createDb attaches one to every pool (see healthOf).
 */
export class DatabaseHealth extends EventEmitter<DatabaseHealthEvents> {
  private downSince: number | null = null;
  private lastFailureAt = 0;
  private failuresInOutage = 0;
  /** Outages seen since the process started. */
  outages = 0;
  /** The error that started the current outage. */
  lastError: string | null = null;

  constructor(
    private readonly settleMs = 1000,
    private readonly now: () => number = Date.now,
  ) {
    super();
  }

  /** True unless an outage is in progress. */
  get up(): boolean {
    return this.downSince === null;
  }

  /** Milliseconds since the current outage began (0 when up). */
  get downForMs(): number {
    return this.downSince === null ? 0 : this.now() - this.downSince;
  }

  /** Records an error; only connection-class errors count. Returns the fault (null: not a database fault). */
  noteError(err: unknown): DatabaseFault | null {
    const fault = databaseFaultOf(err);
    if (fault !== 'unavailable') return fault;
    const at = this.now();
    this.lastFailureAt = at;
    this.failuresInOutage++;
    if (this.downSince === null) {
      this.downSince = at;
      this.failuresInOutage = 1;
      this.outages++;
      this.lastError = describe(err);
      this.emit('down', { at, error: this.lastError });
    }
    return fault;
  }

  /** Records a query that succeeded. */
  noteSuccess(): void {
    if (this.downSince === null) return;
    const at = this.now();
    if (at - this.lastFailureAt < this.settleMs) return;
    const downForMs = at - this.downSince;
    const failures = this.failuresInOutage;
    this.downSince = null;
    this.failuresInOutage = 0;
    this.emit('up', { at, downForMs, failures });
  }
}

function describe(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; errors?: unknown };
  const inner = Array.isArray(e?.errors) && e.errors[0] ? describe(e.errors[0]) : '';
  const text = typeof e?.message === 'string' && e.message ? e.message : inner || String(err);
  return typeof e?.code === 'string' && !text.includes(e.code) ? `${e.code}: ${text}` : text;
}
