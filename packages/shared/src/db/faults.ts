import { EventEmitter } from 'node:events';

// Database faults as the product answers them: an outage (the server is unreachable, restarting, refusing
// connections) is retryable by the client and is a 503 with Retry-After, never a 500; so is a statement the server
// gave up on for load (a timeout, a deadlock victim). Everything else is a bug and stays an internal error.
//
// A fault is recognised by where it happened, not by its code alone: a socket error (ECONNRESET, say) is the
// database's only when it came from a database connection, never when a client of the HTTP server hung up. createDb
// marks what its pool meets (markDatabaseFault): any failure to obtain a connection (refused, reset, a password
// rotated, too many connections, the database missing or not accepting connections, whatever the code), a
// connection lost under a query, an idle connection the server ended.

/**
 * `unavailable`: the database cannot be reached or is not accepting work (an outage); `busy`: it refused one statement
 * under load; `saturated`: this process's pool had no free connection within its wait while the database kept
 * answering the others (the process is overloaded, the database is not down).
 */
export type DatabaseFault = 'unavailable' | 'busy' | 'saturated';

/** pg-pool's words when a query waited its whole connectionTimeoutMillis in the pool's queue (every connection busy). */
export const POOL_WAIT_EXCEEDED = 'timeout exceeded when trying to connect';

/** Where createDb records the fault it found on an error, on the error itself (it travels with any wrapper's `cause`). */
const FAULT = Symbol.for('onsale.databaseFault');

/**
 * Records on `err` that it is a database fault, found where it happened: `unavailable` for a failure to obtain a
 * connection or a connection lost. Returns `err` (a non-object is wrapped in an Error first).
 */
export function markDatabaseFault(err: unknown, fault: DatabaseFault): Error {
  const e = err !== null && typeof err === 'object' ? (err as Error) : new Error(String(err));
  if (!(FAULT in e)) Object.defineProperty(e, FAULT, { value: fault, enumerable: false, configurable: true });
  return e;
}

/**
 * An error answer from the PostgreSQL server itself (pg's DatabaseError: a severity and a SQLSTATE), which can only
 * have come over a database connection.
 */
const fromServer = (x: { code?: unknown; severity?: unknown }) =>
  typeof x.severity === 'string' && typeof x.code === 'string' && /^[0-9A-Z]{5}$/.test(x.code);
/**
 * The server's codes that say it is not serving (whether met while connecting or on a live session): connection
 * exceptions (class 08), shutting down or starting up (57P01-57P03), too many connections (53300), a database not
 * accepting connections (55000 at connection time comes with FATAL severity, caught by the severity rule).
 */
const SERVER_UNAVAILABLE = /^(08...|57P0[1-3]|53300)$/;
/**
 * The pg driver's own words for a lost or never-made connection (with no code, or a socket's): only pg says these,
 * so they are the database's wherever they are met.
 */
const DRIVER_UNAVAILABLE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|Query read timeout)/;
/** Statements the server refused under load: a statement or lock timeout, a serialization failure, a deadlock victim. */
const BUSY_CODES = new Set(['57014', '55P03', '40001', '40P01']);

/**
 * Whether `err` (or an error it wraps: `cause`, an AggregateError's `errors`) is a database fault, and which: the
 * fault createDb marked where it happened, else what the server's own error answer or the driver's own words say.
 * An unmarked socket error is nobody's database fault (a client that hung up on the HTTP server is not an outage).
 */
export function databaseFaultOf(err: unknown): DatabaseFault | null {
  const seen = new Set<unknown>();
  const walk = (e: unknown, depth: number): DatabaseFault | null => {
    if (!e || typeof e !== 'object' || seen.has(e) || depth > 5) return null;
    seen.add(e);
    const marked = (e as { [FAULT]?: DatabaseFault })[FAULT];
    if (marked) return marked;
    const x = e as { code?: unknown; message?: unknown; severity?: unknown; cause?: unknown; errors?: unknown };
    if (fromServer(x)) {
      const code = x.code as string;
      if (BUSY_CODES.has(code)) return 'busy';
      if (x.severity === 'FATAL' || x.severity === 'PANIC' || SERVER_UNAVAILABLE.test(code)) return 'unavailable';
    } else if (typeof x.message === 'string' && DRIVER_UNAVAILABLE.test(x.message)) return 'unavailable';
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
  private readonly noted = new WeakSet<object>();
  private lastSuccessAt = 0;
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

  /** Failures seen in the current outage (0 when up). */
  get failures(): number {
    return this.downSince === null ? 0 : this.failuresInOutage;
  }

  /** Milliseconds since the current outage began (0 when up). */
  get downForMs(): number {
    return this.downSince === null ? 0 : this.now() - this.downSince;
  }

  /**
   * Records an error; only connection-class errors count, each once (the same error reported again by its query's
   * caller, or logged after the outage ended, neither counts twice nor starts another outage). Returns the fault
   * (null: not a database fault).
   */
  noteError(err: unknown): DatabaseFault | null {
    const fault = databaseFaultOf(err);
    if (fault !== 'unavailable') return fault;
    if (err !== null && typeof err === 'object') {
      if (this.noted.has(err)) return fault;
      this.noted.add(err);
    }
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

  /** Resolves once no outage is in progress (at once when up), or after `timeoutMs`, or when `signal` aborts. */
  whenUp(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.up || signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.off('up', done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.on('up', done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * Whether, since `at` (epoch ms, this tracker's clock), the database answered a query and no connection to it failed:
   * it kept serving this process the whole time.
   */
  servedSince(at: number): boolean {
    return this.lastSuccessAt > at && this.lastFailureAt < at;
  }

  /** The time now on this tracker's clock (epoch ms). */
  clock(): number {
    return this.now();
  }

  /** Records a query that succeeded. */
  noteSuccess(): void {
    const at = this.now();
    this.lastSuccessAt = at;
    if (this.downSince === null) return;
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

/** Where logOutages writes (a pino logger, or anything with its two methods). */
export interface OutageLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Logs each outage `health` sees twice, as every process of the product does: once when it starts (`database
 * unavailable: <what the process does meanwhile>`) and once when it ends (`database back after N s (M failed
 * database calls meanwhile)`), never once per failed call. Returns what stops it.
 */
export function logOutages(health: DatabaseHealth, log: OutageLogger, meanwhile: string): () => void {
  const onDown = (e: { error: string }) => log.error({ error: e.error }, `database unavailable: ${meanwhile}`);
  const onUp = (e: { downForMs: number; failures: number }) =>
    log.warn(
      { downForMs: e.downForMs, failures: e.failures },
      `database back after ${(e.downForMs / 1000).toFixed(1)} s (${e.failures} failed database calls meanwhile)`,
    );
  health.on('down', onDown);
  health.on('up', onUp);
  return () => {
    health.off('down', onDown);
    health.off('up', onUp);
  };
}
