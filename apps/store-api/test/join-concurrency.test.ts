import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createDb, sql, type Db } from '@onsale/shared/db';
import { buildStoreApi } from '../src/app.js';
import { loadStoreApiConfig } from '../src/env.js';
import { login, makeEvent, setupApp, type TestApp } from './helper.js';

// One place per account when the same fans join at once through two store APIs (each with its own pool and join
// batcher, as two processes have) over real HTTP: the join batcher's insert returns the rows it created and reads
// back only the rest, so a join that lost its account's row to the other store's statement must still be answered
// with the row that won.

let h: TestApp;
let other: { app: FastifyInstance; db: Db };
const bases: string[] = [];

beforeAll(async () => {
  h = await setupApp();
  const db = createDb(h.t.url, { max: 4, applicationName: 'onsale-test-second-store' });
  const config = loadStoreApiConfig({
    NODE_ENV: 'test',
    DEV_AUTH: 'true',
    RATE_LIMIT_ENABLED: 'false',
    BOT_GATE_ENABLED: 'false',
    LOAD_SHED_ENABLED: 'false',
    REQUEST_BUDGET_MS: '0',
  });
  other = { app: await buildStoreApi({ db, config }), db };
  for (const app of [h.app, other.app]) bases.push(await app.listen({ port: 0, host: '127.0.0.1' }));
});
afterAll(async () => {
  await other.app.close();
  await other.db.destroy();
  await h.close();
});

const joinIndexOf = (queueToken: string) =>
  (JSON.parse(Buffer.from(queueToken.split('.')[0]!, 'base64url').toString()) as { joinIndex: number }).joinIndex;

describe('concurrent joins of the same fans through two store APIs', () => {
  it('answers every join of an account with its one place, created once', async () => {
    const { eventId } = await makeEvent(h.t, { fairnessMode: 'FIFO' });
    const fans = await Promise.all(Array.from({ length: 40 }, (_, i) => login(h.app, `race-fan-${i}`).then((token) => ({ i, token }))));
    // Each fan joins four times at once, twice through each store, from its one device.
    const answers = await Promise.all(
      fans.flatMap(({ i, token }) =>
        [0, 1, 2, 3].map(async (k) => {
          const r = await fetch(`${bases[k % 2]}/events/${eventId}/queue`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'x-device-id': `race-device-${i}` },
          });
          return { i, status: r.status, body: (await r.json()) as { queueToken?: string; position?: number } };
        }),
      ),
    );
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
    const { rows } = await sql<{ account_id: string; join_index: number }>`
      SELECT account_id, join_index FROM queue_entries WHERE event_id = ${eventId}`.execute(h.t.db);
    expect(rows.length).toBe(fans.length);
    const stored = new Map(rows.map((r) => [r.account_id, r.join_index]));
    for (const a of answers) expect(joinIndexOf(a.body.queueToken!)).toBe(stored.get(`race-fan-${a.i}`));
    expect(new Set(rows.map((r) => r.join_index)).size).toBe(fans.length);
  });
});
