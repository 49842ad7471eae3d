import type { AddressInfo } from 'node:net';
import { createTRPCClient, httpSubscriptionLink, type TRPCClientError } from '@trpc/client';
import { EventSource } from 'eventsource';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { signIn } from '@onsale/shared/users';
import { WarRoomHub, type WarRoomMessage } from '@onsale/shared/warroom';
import { buildBff } from '../src/app.js';
import { SESSION_COOKIE } from '../src/context.js';
import type { AppRouter } from '../src/root.js';
import { seedUser, smallEventFile } from './fixtures.js';

// The war room's stream over real HTTP: Server-Sent Events from the BFF to tRPC's httpSubscriptionLink, with the
// `eventsource` package standing in for the browser's EventSource (carrying the session cookie).

let tdb: TestDatabase;
let app: FastifyInstance;
let baseUrl: string;
let eventId: string;
let cookie: string;
let hub: WarRoomHub;

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await tdb.db.transaction().execute((trx) =>
    createEvent(
      trx,
      parseEventFile({
        ...smallEventFile('SSE Night'),
        onsaleAt: new Date(Date.now() - 60_000).toISOString(),
        startsAt: new Date(Date.now() + 86_400_000).toISOString(),
      }),
      'test',
      { signOff: true },
    ),
  ));
  await seedUser(tdb.db, 'viewer@sse.test', 'viewer');
  cookie = `${SESSION_COOKIE}=${(await signIn(tdb.db, { email: 'viewer@sse.test', password: 'password of viewer@sse.test' })).token}`;
  hub = new WarRoomHub({ db: tdb.db, tickMs: 200 });
  app = await buildBff({ db: tdb.db, warRoom: hub });
  await app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app?.close();
  await hub?.close();
  await tdb?.drop();
});

/** A tRPC client whose EventSource sends `cookieHeader` (a browser sends the session cookie by itself). */
function client(cookieHeader: string | null) {
  return createTRPCClient<AppRouter>({
    links: [
      httpSubscriptionLink({
        url: `${baseUrl}/trpc`,
        EventSource,
        eventSourceOptions: {
          fetch: (input, init) =>
            fetch(input, { ...init, headers: { ...(init?.headers ?? {}), ...(cookieHeader ? { cookie: cookieHeader } : {}) } }),
        },
      }),
    ],
  });
}

/** Waits until `check` holds, polling; fails after `ms`. */
async function until(check: () => boolean, ms = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('warRoom.watch over SSE', () => {
  it('streams figures every tick; a change in the database shows within a tick or two; a closed stream is let go', async () => {
    const messages: WarRoomMessage[] = [];
    const states: string[] = [];
    const sub = client(cookie).warRoom.watch.subscribe(
      { eventId },
      { onData: (m) => messages.push(m), onConnectionStateChange: (s) => states.push(s.state) },
    );
    try {
      await until(() => messages.length >= 2, 10_000, 'two messages');
      const first = messages[0]!;
      expect(first.type).toBe('snapshot');
      if (first.type !== 'snapshot') return;
      expect(first.snapshot).toMatchObject({ eventId, name: 'SSE Night', inventory: { available: 22, held: 0 } });
      expect(first.history?.length).toBeGreaterThanOrEqual(1);
      expect(states).toContain('pending');

      await sql`UPDATE seats SET status = 'HELD', hold_id = gen_random_uuid(), expires_at = now() + interval '5 min'
                WHERE event_id = ${eventId} AND section_code = 'A' AND row_index = 0`.execute(tdb.db);
      const seen = messages.length;
      await until(
        () => messages.slice(seen).some((m) => m.type === 'snapshot' && m.snapshot.inventory.held === 4),
        5_000,
        'the held seats',
      );
    } finally {
      sub.unsubscribe();
    }
    // The client went away: the request's signal ends the hub's stream, and with no stream left the hub stops reading
    // (its last read, if one was running, schedules no other): nothing more can be sent to anyone.
    await until(() => hub.watchers.events === 0 && !hub.reading, 5_000, 'the hub to let the stream go and stop reading');
    const before = messages.length;
    // A later stream's first two reads are ticks that come after the first stream went: none of them reached it.
    const later: WarRoomMessage[] = [];
    const next = client(cookie).warRoom.watch.subscribe({ eventId }, { onData: (m) => later.push(m) });
    try {
      await until(() => later.length >= 2, 10_000, 'two messages on a later stream');
    } finally {
      next.unsubscribe();
    }
    expect(messages.length).toBe(before);
    await until(() => hub.watchers.events === 0, 5_000, 'the hub to let the later stream go');
  });

  it('a dropped connection reads as "connecting" (the console shows it as lost), then the stream comes back by itself', async () => {
    const messages: WarRoomMessage[] = [];
    const states: string[] = [];
    const sub = client(cookie).warRoom.watch.subscribe(
      { eventId },
      { onData: (m) => messages.push(m), onConnectionStateChange: (s) => states.push(s.state) },
    );
    try {
      await until(() => messages.length >= 1, 10_000, 'a first message');
      states.length = 0;
      app.server.closeAllConnections();
      await until(() => states.includes('connecting'), 5_000, 'the reconnecting state');
      const seen = messages.length;
      await until(() => states.at(-1) === 'pending' && messages.length > seen, 10_000, 'the stream to come back');
      // The dropped stream was let go; only the new one is read for.
      await until(() => hub.watchers.events === 1, 5_000, 'one stream');
    } finally {
      sub.unsubscribe();
    }
  });

  it('without a session the stream is refused as UNAUTHORIZED', async () => {
    let error: TRPCClientError<AppRouter> | undefined;
    const sub = client(null).warRoom.watch.subscribe({ eventId }, { onError: (e) => (error = e) });
    try {
      await until(() => error !== undefined, 5_000, 'the refusal');
      expect(error!.data?.code).toBe('UNAUTHORIZED');
    } finally {
      sub.unsubscribe();
    }
  });
});
