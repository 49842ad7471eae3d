import net from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createDb, type Db } from '@onsale/shared/db';
import { SimulatedPaymentGateway } from '@onsale/shared/checkout';
import { createTestDatabase, withAdminClient, withDatabase, type TestDatabase } from '@onsale/shared/testing';
import { buildStoreApi } from '../src/app.js';
import { loadStoreApiConfig } from '../src/env.js';
import { admitted, cardNumberOf, login, makeEvent } from './helper.js';

// Database faults are classified by where they happened, not by a list of codes:
// - a client that cuts its request body short (Content-Length: 100, 17 bytes sent, socket closed) made the store
//   log "database unavailable", set database_up 0 and count an outage (Node says ECONNRESET for the aborted body);
// - a database that refuses new connections (ALTER DATABASE ... ALLOW_CONNECTIONS false and its backends ended, as
//   an operator does for maintenance) made holds, checkouts and releases answer 500 (SQLSTATE 55000 while
//   connecting). Too many connections (53300) is met the same way, through a role's connection limit.
// The store API here connects as a role of its own to a database of its own, so the refusals touch no other test
// on the shared server (its max_connections is never approached).

let t: TestDatabase;
let appDb: Db;
let app: FastifyInstance;
let base: string;
let port: number;
const role = `onsale_refusals_${randomBytes(4).toString('hex')}`;
const logLines: Record<string, unknown>[] = [];
/** Errors the error handler answered (Fastify's onError hook runs once it has sent its answer). */
const answeredErrors: { url: string; code?: string; message: string }[] = [];
const templateUrl = () => inject('templateDatabaseUrl');
const databaseName = () => new URL(t.url).pathname.slice(1);
const asAdmin = <T>(fn: Parameters<typeof withAdminClient<T>>[1]) => withAdminClient(withDatabase(templateUrl(), 'postgres'), fn);

beforeAll(async () => {
  t = await createTestDatabase(templateUrl(), { max: 2 });
  await asAdmin((c) => c.query(`CREATE ROLE ${role} LOGIN`));
  await withAdminClient(t.url, async (c) => {
    await c.query(`GRANT ALL ON SCHEMA public TO ${role}`);
    await c.query(`GRANT ALL ON ALL TABLES IN SCHEMA public TO ${role}`);
    await c.query(`GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
    await c.query(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO ${role}`);
  });
  const asRole = new URL(t.url);
  asRole.username = role;
  asRole.password = '';
  appDb = createDb(asRole.toString(), { max: 4, connectionTimeoutMillis: 1500, applicationName: 'refusals-test' });
  const config = loadStoreApiConfig({
    NODE_ENV: 'test',
    DEV_AUTH: 'true',
    RATE_LIMIT_ENABLED: 'false',
    BOT_GATE_ENABLED: 'false',
    LOAD_SHED_ENABLED: 'false',
  });
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) logLines.push(JSON.parse(line));
      done();
    },
  });
  app = await buildStoreApi(
    { db: appDb, config, payments: new SimulatedPaymentGateway({ tps: 10_000, latencyMs: 5, failureRate: 0 }) },
    { logger: { level: 'info', stream } },
  );
  app.addHook('onError', async (req, _reply, err) => {
    answeredErrors.push({ url: req.url, code: (err as { code?: string }).code, message: err.message });
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as net.AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await app?.close();
  await appDb?.destroy();
  await asAdmin(async (c) => {
    await c.query(`ALTER DATABASE ${databaseName()} ALLOW_CONNECTIONS true`);
    await c.query(`ALTER ROLE ${role} CONNECTION LIMIT -1`);
  }).catch(() => {});
  // The role has grants in the database: it is dropped once the database is gone.
  await t?.drop({ wait: true });
  await asAdmin((c) => c.query(`DROP ROLE IF EXISTS ${role}`));
});

const metric = async (name: string) => {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
};
const logged = (prefix: string) => logLines.filter((l) => String(l.msg).startsWith(prefix));

interface Answer {
  what: string;
  status: number;
  error?: string;
  /** A 503's rule (`database`, `database_busy`, `overload_pool`, ...). */
  reason?: string;
  retryAfter: string | null;
}
const call = async (what: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> => {
  try {
    const r = await fetch(base + path, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const json = (await r.json().catch(() => ({}))) as { error?: string; reason?: string };
    return { what, status: r.status, error: json.error, reason: json.reason, retryAfter: r.headers.get('retry-after') };
  } catch (err) {
    return { what, status: 0, error: String(err), retryAfter: null }; // a socket closed without an answer
  }
};

/** A request whose body stops short of its Content-Length, its socket then closed by the client. */
async function cutShort(path: string, headers: Record<string, string>): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const head = Object.entries({ host: `127.0.0.1:${port}`, 'content-type': 'application/json', 'content-length': '100', ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  // 17 bytes of the 100 promised.
  const sent = `POST ${path} HTTP/1.1\r\n${head}\r\n{"section":"B","q`;
  await new Promise<void>((resolve) => socket.write(sent, () => resolve()));
  // The server has read the head (and started the request) before the client goes: wait for its first log line of it.
  await vi.waitFor(() =>
    expect(logLines.some((l) => l.msg === 'incoming request' && (l.req as { url?: string })?.url === path)).toBe(true),
  );
  socket.destroy();
}

describe('a client cutting its request short is not a database outage', () => {
  it('Content-Length 100, 17 bytes, socket closed: database_up stays 1, no outage counted or logged', async () => {
    const { eventId } = await makeEvent(t, { fairnessMode: 'FIFO' });
    const fan = await admitted(await login(app, 'cut-body-fan'), eventId);
    // A database answer first, so the gauge reads as it does in service.
    expect((await call('hold', 'POST', `/events/${eventId}/holds`, fan, { section: 'B', quantity: 1 })).status).toBe(201);
    expect(await metric('database_up')).toBe(1);
    const outagesBefore = await metric('database_outages_total');

    // Anonymous (the sign-in reads its body) and signed in (a hold), each cut short.
    for (const [path, headers] of [
      ['/auth/dev-login', {}],
      [`/events/${eventId}/holds`, fan],
    ] as const) {
      const before = answeredErrors.length;
      await cutShort(path, headers);
      // The server met the cut body: its error handler answered it (to a closed socket).
      await vi.waitFor(() => expect(answeredErrors.slice(before).some((e) => e.url === path)).toBe(true), { timeout: 30_000 });
    }
    expect(answeredErrors.filter((e) => e.code === 'ECONNRESET').length).toBeGreaterThan(0);
    expect(await metric('database_up')).toBe(1);
    expect(await metric('database_outages_total')).toBe(outagesBefore);
    expect(logged('database unavailable')).toEqual([]);
    expect(logLines.filter((l) => l.msg === 'unhandled error')).toEqual([]);
  });
});

describe('a database that refuses connections is an outage: 503 with Retry-After, never a 500', () => {
  /** Ends every backend of the test's database (as an operator does after refusing new connections). */
  const endBackends = (who: 'database' | 'role') =>
    asAdmin((c) =>
      c.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ${who === 'database' ? 'datname' : 'usename'} = $1 AND pid <> pg_backend_pid()`,
        [who === 'database' ? databaseName() : role],
      ),
    );

  /** Holds made while the database answers, and the fans who made them, for the checkouts and releases to come. */
  async function holdsToTouch(prefix: string, n: number) {
    const { eventId } = await makeEvent(t, { fairnessMode: 'FIFO' });
    const fans = await Promise.all(Array.from({ length: n }, async (_, i) => admitted(await login(app, `${prefix}-${i}`), eventId)));
    const holds: { fan: Record<string, string>; holdId: string }[] = [];
    for (const fan of fans) {
      const r = await fetch(`${base}/events/${eventId}/holds`, {
        method: 'POST',
        headers: { ...fan, 'content-type': 'application/json' },
        body: JSON.stringify({ section: 'B', quantity: 1 }),
      });
      expect(r.status).toBe(201);
      holds.push({ fan, holdId: ((await r.json()) as { holdId: string }).holdId });
    }
    return { eventId, fans, holds };
  }

  /** Every fan route that needs the database, at once, while connections are refused. */
  async function fanRoutesDuringRefusal(
    eventId: string,
    fans: Record<string, string>[],
    holds: { fan: Record<string, string>; holdId: string }[],
  ) {
    const answers = await Promise.all([
      ...fans.map((fan) => call('hold', 'POST', `/events/${eventId}/holds`, fan, { section: 'C', quantity: 1 })),
      ...holds.map(({ fan, holdId }, i) =>
        call(
          'checkout',
          'POST',
          `/holds/${holdId}/checkout`,
          { ...fan, 'idempotency-key': randomUUID() },
          { payment: { instrument: { type: 'card', number: cardNumberOf(500 + i) } } },
        ),
      ),
      ...holds.map(({ fan, holdId }) => call('release', 'DELETE', `/holds/${holdId}`, fan)),
      ...holds.map(({ fan, holdId }) => call('read hold', 'GET', `/holds/${holdId}`, fan)),
      ...fans.map((fan) =>
        call('join', 'POST', `/events/${eventId}/queue`, { authorization: fan.authorization!, 'x-device-id': fan['x-device-id']! }),
      ),
    ]);
    return answers;
  }

  async function expectRefusedAsOutage(answers: Answer[]) {
    const notRetryable = answers.filter(
      (a) => a.status !== 503 || !a.retryAfter || Number(a.retryAfter) < 1 || a.error !== 'SERVICE_UNAVAILABLE',
    );
    const unhandled = logLines.filter((l) => l.msg === 'unhandled error').map((l) => l.err);
    expect(notRetryable, JSON.stringify(unhandled)).toEqual([]);
    // Each names the rule that answered it: the database out of reach.
    expect(answers.filter((a) => a.reason !== 'database')).toEqual([]);
    for (const what of ['hold', 'checkout', 'release', 'read hold', 'join'])
      expect(answers.filter((a) => a.what === what).length, what).toBeGreaterThan(0);
    expect(await metric('database_up')).toBe(0);
  }

  async function expectBackAfter(eventId: string, fan: Record<string, string>, outagesBefore: number) {
    // Back: holds are served again, and the outage is logged as over once queries have succeeded for a while.
    await vi.waitFor(
      async () => expect((await call('hold', 'POST', `/events/${eventId}/holds`, fan, { section: 'A', quantity: 1 })).status).toBe(201),
      { timeout: 30_000, interval: 100 },
    );
    await vi.waitFor(
      async () => {
        await call('hold', 'POST', `/events/${eventId}/holds`, fan, { section: 'A', quantity: 1 });
        expect(logged('database back after').length).toBe(logged('database unavailable').length);
      },
      { timeout: 30_000, interval: 200 },
    );
    expect(await metric('database_up')).toBe(1);
    expect(await metric('database_outages_total')).toBe(outagesBefore + 1);
    expect(logLines.filter((l) => l.msg === 'unhandled error')).toEqual([]);
  }

  it('ALLOW_CONNECTIONS false with its backends ended (55000 while connecting): holds, checkouts, releases, reads and joins answer 503 with Retry-After; counted as one outage', async () => {
    const { eventId, fans, holds } = await holdsToTouch('maintenance', 3);
    const outagesBefore = await metric('database_outages_total');
    await asAdmin((c) => c.query(`ALTER DATABASE ${databaseName()} ALLOW_CONNECTIONS false`));
    try {
      await endBackends('database');
      await expectRefusedAsOutage(await fanRoutesDuringRefusal(eventId, fans, holds));
      // What the requests met while connecting: the refusal itself (the outage began with the backends' end).
      expect(answeredErrors.some((e) => e.code === '55000' && /not currently accepting connections/.test(e.message))).toBe(true);
    } finally {
      await asAdmin((c) => c.query(`ALTER DATABASE ${databaseName()} ALLOW_CONNECTIONS true`));
    }
    await expectBackAfter(eventId, fans[0]!, outagesBefore);
  });

  it('too many connections for the role (53300 while connecting): every route answers 503 with Retry-After; counted as one outage', async () => {
    const { eventId, fans, holds } = await holdsToTouch('crowded', 3);
    const outagesBefore = await metric('database_outages_total');
    await asAdmin((c) => c.query(`ALTER ROLE ${role} CONNECTION LIMIT 0`));
    try {
      await endBackends('role');
      await expectRefusedAsOutage(await fanRoutesDuringRefusal(eventId, fans, holds));
      expect(answeredErrors.some((e) => e.code === '53300' && /too many connections/.test(e.message))).toBe(true);
    } finally {
      await asAdmin((c) => c.query(`ALTER ROLE ${role} CONNECTION LIMIT -1`));
    }
    await expectBackAfter(eventId, fans[0]!, outagesBefore);
  });
});
