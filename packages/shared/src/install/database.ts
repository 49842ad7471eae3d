import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { EmbeddedPostgresError, embeddedSocketDir, embeddedUrl, startEmbeddedPostgres } from '../db/embedded.js';

/** Where an install keeps its embedded server's port and superuser password (mode 0600), beside `pg/`. */
export const EMBEDDED_SETTINGS_FILE = 'embedded-postgres.json';

/** The port every install used before ports were per install; a data directory made then is moved off it. */
const LEGACY_PORT = 54320;
const LEGACY_PASSWORD = 'postgres';

export interface EmbeddedSettings {
  port: number;
  password: string;
}

export interface InstallDatabase {
  url: string;
  /** `env`: DATABASE_URL; `embedded-running`: this install's embedded server, started by another process; `embedded`: started here. */
  source: 'env' | 'embedded-running' | 'embedded';
  /** Stops the embedded server if this process started it; a no-op otherwise. */
  release(): Promise<void>;
}

/** This install's database could not be had; the message is one line an operator can act on. */
export class InstallDatabaseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InstallDatabaseError';
  }
}

const none = async () => {};

/**
 * The database of the install whose data directory is `dataDir`: `databaseUrl` when given (DATABASE_URL); else the
 * install's own embedded PostgreSQL under `dataDir/pg`. That server listens on 127.0.0.1 and on a Unix socket in
 * `dataDir/socket` (private to its user; the URL goes through it), nowhere else, on a port chosen
 * free when the install was made and kept in `dataDir/embedded-postgres.json` with a random superuser password,
 * so two installs side by side never share a server. When the install's server already runs (another process of
 * the install started it), this connects to it, after checking that the server answering on that port really
 * serves this data directory; otherwise it starts it. A busy port is an InstallDatabaseError with one line.
 */
export async function openInstallDatabase(dataDir: string, databaseUrl?: string): Promise<InstallDatabase> {
  if (databaseUrl) return { url: databaseUrl, source: 'env', release: none };
  mkdirSync(dataDir, { recursive: true });
  const pgDir = join(dataDir, 'pg');
  const settingsPath = join(dataDir, EMBEDDED_SETTINGS_FILE);
  const initialised = existsSync(join(pgDir, 'PG_VERSION'));
  let settings = readSettings(settingsPath);

  if (settings && initialised && (await servesDirectory(settings, pgDir)))
    return { url: runningUrl(dataDir, settings), source: 'embedded-running', release: none };

  if (initialised && !settings) {
    // Made before installs had their own port and password: superuser password "postgres", port 54320.
    const upgraded = await upgradeLegacy(dataDir, pgDir, settingsPath);
    if (upgraded === 'running')
      throw new InstallDatabaseError(
        `this install's embedded PostgreSQL (${pgDir}) is running from an earlier version on port ${LEGACY_PORT}; stop that \`npm start\` and start again`,
      );
    settings = upgraded;
  } else if (!settings) {
    settings = { port: await pickPort(), password: randomBytes(24).toString('base64url') };
    writeSettings(settingsPath, settings);
  } else if (settings.port === 0) {
    settings = { ...settings, port: await pickPort() };
    writeSettings(settingsPath, settings);
  }

  if (!(await portFree(settings.port)))
    throw new InstallDatabaseError(
      `port ${settings.port} (this install's embedded PostgreSQL, kept in ${settingsPath}) is in use by another program; stop it, or delete "port" from that file to pick a new one`,
    );
  let server;
  try {
    server = await startEmbeddedPostgres(dataDir, settings);
  } catch (e) {
    // Another process of this install may have started it meanwhile.
    if (await servesDirectory(settings, pgDir)) return { url: runningUrl(dataDir, settings), source: 'embedded-running', release: none };
    if (e instanceof EmbeddedPostgresError) throw new InstallDatabaseError(`embedded PostgreSQL: ${e.message}`);
    throw e;
  }
  let stopped = false;
  return {
    url: server.url,
    source: 'embedded',
    async release() {
      if (stopped) return;
      stopped = true;
      await server.stop();
    },
  };
}

/**
 * The URL of this install's server already running: through its Unix socket when it made one (embeddedUrl), else
 * over TCP (a server started by an earlier version, which listened on 127.0.0.1 alone).
 */
function runningUrl(dataDir: string, s: EmbeddedSettings): string {
  const socket = embeddedSocketDir(dataDir, s.port);
  return socket !== undefined && existsSync(join(socket, `.s.PGSQL.${s.port}`)) ? embeddedUrl(dataDir, s.port, s.password) : urlOf(s);
}

/** Its URL over TCP (127.0.0.1), which every version of its server listens on. */
function urlOf(s: EmbeddedSettings): string {
  return `postgres://postgres:${encodeURIComponent(s.password)}@127.0.0.1:${s.port}/onsale`;
}

function readSettings(path: string): EmbeddedSettings | undefined {
  if (!existsSync(path)) return undefined;
  const mode = statSync(path).mode;
  if ((mode & 0o077) !== 0)
    throw new InstallDatabaseError(`${path} is readable by other users (mode ${(mode & 0o777).toString(8)}); run \`chmod 600 ${path}\``);
  let raw: { port?: unknown; password?: unknown };
  try {
    raw = JSON.parse(readFileSync(path, 'utf8')) as typeof raw;
  } catch {
    throw new InstallDatabaseError(`${path} is not valid JSON`);
  }
  if (typeof raw.password !== 'string' || raw.password.length < 16)
    throw new InstallDatabaseError(
      `${path} has no "password"; it is made with the data directory (restore it, or delete ${path} and pg/ beside it to start afresh)`,
    );
  // A deleted port is chosen again (the server takes its port from the command line, not from its data).
  const port = typeof raw.port === 'number' && Number.isInteger(raw.port) && raw.port > 0 && raw.port < 65536 ? raw.port : undefined;
  return { port: port ?? 0, password: raw.password };
}

function writeSettings(path: string, s: EmbeddedSettings): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ port: s.port, password: s.password }, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

/** Whether the server on the settings' port takes this password and serves `pgDir` (and so is this install's). */
async function servesDirectory(s: EmbeddedSettings, pgDir: string): Promise<boolean> {
  if (s.port <= 0) return false;
  const client = new pg.Client({ connectionString: urlOf(s), connectionTimeoutMillis: 1500 });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ dir: string }>(`SELECT current_setting('data_directory') AS dir`);
    return rows[0] !== undefined && sameDirectory(rows[0].dir, pgDir);
  } catch {
    return false;
  } finally {
    await endSoon(client);
  }
}

/** Ends a client without waiting on a peer that never answers (something else on the port that is not PostgreSQL). */
async function endSoon(client: pg.Client): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  // Ignored on purpose: Closing a probe connection: it may not be PostgreSQL at all, and the probe's answer is already known.
  await Promise.race([client.end().catch(() => {}), new Promise<void>((resolve) => (timer = setTimeout(resolve, 1000)))]);
  clearTimeout(timer);
  (client as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream?.destroy?.();
}

function sameDirectory(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return a === b;
  }
}

/** A data directory from before: started once on a free port with the old password, which is then replaced. */
async function upgradeLegacy(dataDir: string, pgDir: string, settingsPath: string): Promise<EmbeddedSettings | 'running'> {
  if (await servesDirectory({ port: LEGACY_PORT, password: LEGACY_PASSWORD }, pgDir)) return 'running';
  const legacy = { port: await pickPort(), password: LEGACY_PASSWORD };
  const server = await startEmbeddedPostgres(dataDir, legacy).catch((e: unknown) => {
    throw new InstallDatabaseError(`embedded PostgreSQL: ${e instanceof Error ? e.message : String(e)}`);
  });
  const settings = { port: legacy.port, password: randomBytes(24).toString('base64url') };
  const client = new pg.Client({ connectionString: urlOf(legacy) });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query(`ALTER ROLE postgres PASSWORD ${client.escapeLiteral(settings.password)}`);
  } finally {
    // Ignored on purpose: The password change above succeeded or threw; a failed close of this one-off connection changes nothing.
    await client.end().catch(() => {});
  }
  writeSettings(settingsPath, settings);
  await server.stop();
  return settings;
}

/** Ports are picked below Linux's ephemeral range (32768+), so an outgoing connection never holds one at the next start. */
async function pickPort(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    if (await portFree(port)) return port;
  }
  throw new InstallDatabaseError('no free port found for the embedded PostgreSQL between 20000 and 29999');
}

function portFree(port: number): Promise<boolean> {
  if (port <= 0) return Promise.resolve(false);
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve(true)));
  });
}
