import {
  Kysely,
  PostgresDialect,
  type LogEvent,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
  type Transaction,
} from 'kysely';
import pg from 'pg';
import type { Database } from './database.js';
import { DatabaseHealth, isConnectionLost, markDatabaseFault, POOL_WAIT_EXCEEDED, statementNeverRan } from './faults.js';
import { laneConnect, type PoolTag, type PoolWaitObserver } from './pool-lanes.js';

// int8 (counts, identity ids) as JS numbers: every such value here stays far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));
// numeric as number (aggregates such as SUM over integers).
pg.types.setTypeParser(1700, (v) => Number(v));
// `date` columns read as 'YYYY-MM-DD' (pg's default makes a local-time Date of them).
pg.types.setTypeParser(1082, (v) => v);

export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;

/**
 * Parameterized queries run as named prepared statements, one name per distinct SQL text, so PostgreSQL plans
 * each hot statement once per connection instead of on every call (planning dominated the hold path's cost).
 * So do reads without parameters (a SELECT or WITH with no values, such as each store process's watermark read
 * twice a second, planned on every call as an unnamed statement: 1.6 ms of planning against 0.6 of execution in a
 * loaded rehearsal); other queries without parameters (BEGIN, COMMIT, SET, DDL) keep the simple protocol.
 */
/** One SELECT or WITH statement (no `;`: a text of several statements cannot be prepared; it keeps the simple protocol). */
const READ = /^\s*(select|with)\b[^;]*$/i;

function preparePerConnection(pool: pg.Pool): void {
  const names = new Map<string, string>();
  pool.on('connect', (client) => {
    const raw = client.query.bind(client) as (...args: unknown[]) => unknown;
    // pg writes each protocol message (parse, bind, describe, execute, sync) separately; corking the socket
    // for the tick sends a query in one write, which matters where system calls are dear.
    const stream = (client as unknown as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } }).connection?.stream;
    const query = (...args: unknown[]) => {
      if (!stream?.cork) return raw(...args);
      stream.cork();
      try {
        return raw(...args);
      } finally {
        process.nextTick(() => stream.uncork!());
      }
    };
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (config: unknown, values?: unknown, cb?: unknown) => {
      if (
        typeof config === 'string' &&
        typeof cb !== 'function' &&
        ((Array.isArray(values) && values.length > 0) ||
          ((values === undefined || (Array.isArray(values) && values.length === 0)) && READ.test(config)))
      ) {
        let name = names.get(config);
        if (!name) {
          name = `k${names.size.toString(36)}`;
          if (names.size < 5000) names.set(config, name);
          else return query(config, values);
        }
        return query({ name, text: config, values: values ?? [] });
      }
      return query(config, values, cb);
    };
  });
}

export interface DbOptions {
  /** Pool size; a store-API instance under load wants a few dozen. */
  max?: number;
  applicationName?: string;
  onError?: (err: Error) => void;
  /** How long an idle connection stays open (ms). A server's pool keeps its connections: opening and closing
   *  backends under load costs the database far more than an idle connection does. Default 5 minutes. */
  idleTimeoutMillis?: number;
  /**
   * The longest a query waits for a pooled connection (or for a new one to open), in ms; past it the query fails
   * with a connection-class error (a 503 at the store API). Default: wait as long as it takes.
   */
  connectionTimeoutMillis?: number;
  /**
   * The health tracker this pool reports to (default: its own). Pools of one process that serve one purpose share
   * one (the worker's job pool and its queries), so an outage is one outage, logged once.
   */
  health?: DatabaseHealth;
  /** Queries of the purchase lane (inPoolLane) wait ahead of the others (default true; false: one queue, in order). */
  priority?: boolean;
}

/** Opens a pool on `connectionString`. Its 'error' listeners keep a restarting or stopping server from crashing Node. */
export function createDb(connectionString: string, opts: DbOptions = {}): Db {
  const pool = new pg.Pool({
    connectionString,
    max: opts.max ?? 20,
    application_name: opts.applicationName ?? 'onsale',
    idleTimeoutMillis: opts.idleTimeoutMillis ?? 300_000,
    ...(opts.connectionTimeoutMillis ? { connectionTimeoutMillis: opts.connectionTimeoutMillis } : {}),
    // Idle connections do not keep a process alive (a CLI command that is done exits).
    allowExitOnIdle: true,
  });
  // The database's health, learnt from the pool's own traffic: a connection that cannot be had or is lost starts
  // an outage, a query that succeeds ends it (see DatabaseHealth).
  // Faults are marked where they happen (see markDatabaseFault): whatever its code, a failure to obtain a connection
  // is an outage (refused, reset, a rotated password, too many connections, a database missing or not accepting
  // connections), and so is an idle connection the server ended.
  const health = opts.health ?? new DatabaseHealth();
  pool.on('error', (err) => {
    health.noteError(markDatabaseFault(err, 'unavailable'));
    opts.onError?.(err);
  });
  // The pool's queue in two lanes, purchase first (pool-lanes.ts); the pool wait is kept there, and so is the count
  // of waiting queries the load shedder reads.
  const lanes = laneConnect(
    pool,
    pool.connect.bind(pool) as (cb?: unknown) => unknown,
    opts.connectionTimeoutMillis ?? 0,
    opts.priority ?? true,
  );
  // pg-pool's own queue (empty while the lanes hold back all but `max` checkouts) is its _pendingQueue.
  const pgQueue = (pool as unknown as { _pendingQueue?: unknown[] })._pendingQueue;
  Object.defineProperty(pool, 'waitingCount', {
    configurable: true,
    get: () => lanes.waiting() + (pgQueue?.length ?? 0),
  });
  waitObservers.set(pool, lanes.observe);
  const connect = lanes.connect;
  // Except one: a query that waited its whole pool wait in this process's queue (every connection busy) while the
  // database kept answering the others (a query succeeded, and no connection failed, after it began waiting) is an
  // overloaded process, not an outage: a 503 all the same, but no alarm.
  const connectFailed = (err: unknown, waitingSince: number) => {
    const saturated = (err as { message?: unknown })?.message === POOL_WAIT_EXCEEDED && health.servedSince(waitingSince);
    const marked = markDatabaseFault(err, saturated ? 'saturated' : 'unavailable');
    health.noteError(marked);
    return marked;
  };
  // pool.connect waits untagged (the standard lane); a lane's Db (inPoolLane) checks out with its tag.
  const tagged = (tag: PoolTag | undefined) => (cb?: unknown) => {
    const waitingSince = health.clock();
    if (typeof cb === 'function')
      return connect(
        (err: unknown, client: unknown, done: unknown) =>
          (cb as (...a: unknown[]) => void)(err ? connectFailed(err, waitingSince) : err, client, done),
        tag,
      );
    return (connect(undefined, tag) as Promise<pg.PoolClient>).catch((err: unknown) => {
      throw connectFailed(err, waitingSince);
    });
  };
  (pool as unknown as { connect: (cb?: unknown) => unknown }).connect = tagged(undefined);
  // The pool listens to its idle clients only. A client checked out when the server ends its connection (an
  // embedded server stopping on Ctrl-C, say) emits 'error' on itself, and an 'error' nobody listens to ends the
  // process: so every client has a listener. What it would report reaches the client's user anyway (its query
  // rejects, and so does any later one), so it says nothing itself.
  pool.on('connect', (client) => client.on('error', () => {}));
  preparePerConnection(pool);
  const log = (event: LogEvent) => {
    if (event.level === 'error') health.noteError(event.error);
    else health.noteSuccess();
  };
  // Clients seen by any of the pool's Dbs (checkoutsOf: a reused client's first statement may run again).
  const seen = new WeakSet<pg.PoolClient>();
  const shared = new WeakMap<PoolTag, Db>();
  const lane: LaneOf = (tag) => {
    const known = tag.begun === undefined ? shared.get(tag) : undefined;
    if (known) return known;
    const take = tagged(tag) as () => Promise<pg.PoolClient>;
    // Ending a lane's Db ends nothing: the pool is its createDb Db's.
    const laneDb = new Kysely<Database>({ dialect: new PostgresDialect({ pool: checkoutsOf(pool, take, false, seen) }), log });
    register(laneDb, pool, health, lane);
    if (tag.begun === undefined) shared.set(tag, laneDb);
    return laneDb;
  };
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: checkoutsOf(pool, () => pool.connect(), true, seen) }),
    log,
  });
  register(db, pool, health, lane);
  return db;
}

type LaneOf = (tag: PoolTag) => Db;
const lanesOf = new WeakMap<Db, LaneOf>();

function register(db: Db, pool: pg.Pool, health: DatabaseHealth, lane: LaneOf): void {
  pools.set(db, pool);
  healths.set(db, health);
  lanesOf.set(db, lane);
}

/**
 * `db` with its queries in `tag`'s pool lane (pool-lanes.ts), timed under its kind: a Kysely over the same pool whose
 * checkouts carry the tag. A shared tag (no `begun`) gets one Db, made once; a request's own tag (`begun: false`, where
 * its later queries must wait ahead of new purchase work, as a checkout's second transaction) a Db of its own. A Db
 * not made by createDb is returned as it is. Its `destroy` ends nothing (the pool is `db`'s).
 */
export function inPoolLane(db: Db, tag: PoolTag): Db {
  return lanesOf.get(db)?.(tag) ?? db;
}

/**
 * The pool as Kysely checks connections out of it, with two rules for connections the server has ended (a backend
 * terminated, a database restart) that pg and pg-pool leave to their user:
 *
 * - A client whose query failed because its connection is gone goes back to the pool as broken, so the pool
 *   destroys it. pg marks a client unusable on a socket error, but not on the server's FATAL error message (57P01
 *   and the like) that precedes the socket's close, and pg-pool keeps any client released without an error: the
 *   next checkout would get the dead client.
 * - An idle pooled client can be handed out after the server ended its backend but before the end reaches the
 *   client (no check at checkout can see a close the socket has not read yet). Its first statement then fails
 *   with the server's 57P01 (or the driver refuses it on a client it knows is dead), and runs again on the next
 *   connection. This is only for a client that was idle in the pool, the checkout's first statement (an
 *   autocommit statement, or the BEGIN of a transaction), and a failure that proves the statement did not run
 *   (statementNeverRan): a socket reset while the statement was out may have followed its commit, and running it
 *   again would repeat it. Any other failure reaches the caller as it is.
 */
function checkoutsOf(pool: pg.Pool, connect: () => Promise<pg.PoolClient>, owner: boolean, seen: WeakSet<pg.PoolClient>): PostgresPool {
  const take = async () => {
    const client = await connect();
    const reused = seen.has(client);
    seen.add(client);
    return { client, reused };
  };
  return {
    end: () => (owner ? pool.end() : Promise.resolve()),
    async connect(): Promise<PostgresPoolClient> {
      let { client, reused } = await take();
      // Undefined once released, or while a dead client has been let go and no other could be had.
      let held: pg.PoolClient | undefined = client;
      let first = true;
      let lost: Error | undefined;
      const run = async <R>(sqlText: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> => {
        if (!held) throw lost ?? new Error('this connection has been released');
        const retry = first && reused;
        first = false;
        try {
          return (await held.query(sqlText, parameters as unknown[])) as unknown as PostgresQueryResult<R>;
        } catch (err) {
          if (!isConnectionLost(err)) throw err;
          // The connection is gone under the statement: an outage, whatever the socket's or the server's words.
          lost = markDatabaseFault(err, 'unavailable');
          if (!retry || !statementNeverRan(err)) throw err;
          // A restart ends every idle connection: each dead one found this way is destroyed and the next taken,
          // until a live one or a new one (whose failure is the caller's) answers.
          held.release(lost);
          held = undefined;
          ({ client, reused } = await take());
          held = client;
          lost = undefined;
          first = true;
          return run(sqlText, parameters);
        }
      };
      return {
        query: run as PostgresPoolClient['query'],
        release: (destroy?: boolean) => {
          const c = held;
          held = undefined;
          c?.release(lost ?? destroy);
        },
      };
    },
  };
}

const pools = new WeakMap<Db, pg.Pool>();
const waitObservers = new WeakMap<pg.Pool, (o: PoolWaitObserver | undefined) => void>();

/**
 * Tells `observer` how long each connection of a Db made by createDb waited for the pool, with the lane tag it waited
 * under (inPoolLane; none: undefined); undefined stops it. A Db not made by createDb is ignored.
 */
export function observePoolWait(db: Db, observer: PoolWaitObserver | undefined): void {
  const pool = pools.get(db);
  if (pool) waitObservers.get(pool)?.(observer);
}
const healths = new WeakMap<Db, DatabaseHealth>();

/** The health tracker of a Db made by createDb: outages start and end there, once each (see DatabaseHealth). */
export function healthOf(db: Db): DatabaseHealth {
  const health = healths.get(db);
  if (!health) throw new Error('this Db was not made by createDb');
  return health;
}

/**
 * Opens the pool's connections (up to `count`, default its max) before traffic arrives, so the first burst of an
 * on-sale does not wait for backends to start and statements to be prepared one connection at a time.
 */
export async function warmPool(db: Db, count?: number): Promise<void> {
  const pool = poolOf(db);
  const clients = await Promise.all(Array.from({ length: count ?? pool.options.max }, () => pool.connect()));
  await Promise.all(clients.map((c) => c.query('SELECT 1')));
  for (const c of clients) c.release();
}

/**
 * A connection of its own on the same database as `db` (a pool of one that keeps it open), for a little work that
 * must never wait behind the pool's queue nor take one of its connections (a process's lease). A lost connection
 * is opened again on the next statement, waiting at most `connectionTimeoutMillis` for it.
 */
export function dedicatedConnection(db: Db, applicationName: string, connectionTimeoutMillis = 2000): Db {
  const { connectionString } = poolOf(db).options as { connectionString?: string };
  if (!connectionString) throw new Error('this Db was not made from a connection string');
  return createDb(connectionString, { max: 1, idleTimeoutMillis: 0, applicationName, connectionTimeoutMillis });
}

/** The pg pool under a Db made by createDb (for libraries that take a pool, such as graphile-worker). */
export function poolOf(db: Db): pg.Pool {
  const pool = pools.get(db);
  if (!pool) throw new Error('this Db was not made by createDb');
  return pool;
}
