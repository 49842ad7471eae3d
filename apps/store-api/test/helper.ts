import type { FastifyInstance } from 'fastify';
import { inject } from 'vitest';
import { createTestDatabase, testSecrets, type TestDatabase } from '@onsale/shared/testing';
import { parseEventFile, type EventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { getInventoryCounts } from '@onsale/shared/inventory';
import { SimulatedPaymentGateway } from '@onsale/shared/checkout';
import { sql } from '@onsale/shared/db';
import { buildStoreApi } from '../src/app.js';
import { loadStoreApiConfig } from '../src/env.js';
import { admissionClaimsFor, createTokenKey, hashDevice, signToken, type TokenKey } from '@onsale/shared/queue';
import type { BotScorer } from '@onsale/shared/abuse';

export interface TestApp {
  t: TestDatabase;
  app: FastifyInstance;
  payments: SimulatedPaymentGateway;
  close(): Promise<void>;
}

/**
 * A store API on its own fresh, migrated, real PostgreSQL database. Request rate limits and the bot gate are off
 * unless `env` turns them on (every test client is one loopback address with no browser headers); the abuse
 * tests turn them on. Load shedding is off too (the test runner shares the server's event loop and blocks it at
 * will); load-shedding.test.ts turns it on. So is the request budget, for the same reason (a stampede of hundreds
 * of requests in the runner's own event loop is slow on a loaded machine, and no socket timeout is involved);
 * request-budget.test.ts runs the store API in a process of its own with its budget.
 */
export async function setupApp(
  opts: {
    poolMax?: number;
    paymentLatencyMs?: number;
    /** The payment gateway on the file's database, instead of an instant one that never fails. */
    payments?: (t: TestDatabase) => SimulatedPaymentGateway;
    env?: Record<string, string>;
    botScorer?: BotScorer;
    clock?: () => number;
  } = {},
): Promise<TestApp> {
  const t = await createTestDatabase(inject('templateDatabaseUrl'), { max: opts.poolMax ?? 12 });
  const config = loadStoreApiConfig({
    NODE_ENV: 'test',
    DEV_AUTH: 'true',
    RATE_LIMIT_ENABLED: 'false',
    BOT_GATE_ENABLED: 'false',
    LOAD_SHED_ENABLED: 'false',
    REQUEST_BUDGET_MS: '0',
    ...opts.env,
  });
  const payments =
    opts.payments?.(t) ?? new SimulatedPaymentGateway({ tps: 10_000, latencyMs: opts.paymentLatencyMs ?? 5, failureRate: 0 });
  const app = await buildStoreApi({ db: t.db, config, payments, botScorer: opts.botScorer, ...(opts.clock ? { clock: opts.clock } : {}) });
  await app.ready();
  return {
    t,
    app,
    payments,
    async close() {
      await app.close();
      await t.drop();
    },
  };
}

const hourAgo = () => new Date(Date.now() - 3600_000).toISOString();
const nextMonth = () => new Date(Date.now() + 30 * 86400_000).toISOString();

/** A small event already on sale: section A (rows x seats), B and C; best-available only for the next 30 min. */
export function eventFile(over: Partial<EventFile> = {}): EventFile {
  return {
    name: 'Test Night',
    venueName: 'Test Hall',
    startsAt: nextMonth(),
    onsaleAt: hourAgo(),
    seatPickingOpensAfterMinutes: 120,
    priceLevels: [
      { code: 'P1', name: 'Front', priceCents: 12_000 },
      { code: 'P2', name: 'Back', priceCents: 6_000 },
    ],
    sections: [
      { code: 'A', priceLevel: 'P1', qualityRank: 1, rowCount: 15, seatsPerRow: 20 },
      { code: 'B', priceLevel: 'P1', qualityRank: 2, rowCount: 5, seatsPerRow: 10 },
      { code: 'C', priceLevel: 'P2', qualityRank: 3, rowCount: 5, seatsPerRow: 10 },
    ],
    ...over,
  };
}

export async function makeEvent(t: TestDatabase, over: Partial<EventFile> = {}) {
  return t.db.transaction().execute((trx) => createEvent(trx, parseEventFile(eventFile(over)), 'test', { signOff: true }));
}

const accountOfToken = new Map<string, string>();

export async function login(app: FastifyInstance, accountId: string): Promise<string> {
  const r = await app.inject({ method: 'POST', url: '/auth/dev-login', payload: { accountId } });
  if (r.statusCode !== 200) throw new Error(`login failed ${r.statusCode} ${r.body}`);
  accountOfToken.set(r.json().token, accountId);
  return r.json().token;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

let key: Promise<TokenKey> | undefined;
const admissions = new Map<string, string>();

/**
 * Headers of a fan the waiting room has admitted to `eventId`: account token, device id (the fan's own unless
 * `device` is given) and an admission token signed as the status route would sign it (the queue itself is tested
 * in queue.test.ts); `tier`: admitted through that presale tier's queue.
 */
export async function admitted(token: string, eventId: string, device?: string, tier?: string): Promise<Record<string, string>> {
  const accountId = accountOfToken.get(token);
  if (!accountId) throw new Error('admitted(): log the fan in with login() first');
  // Each fan on a phone of their own unless told otherwise (holds count seats per device too).
  const deviceId = device ?? `test-device-of-${accountId}`;
  const cacheKey = `${token}|${eventId}|${deviceId}|${tier ?? ''}`;
  let admission = admissions.get(cacheKey);
  if (!admission) {
    key ??= createTokenKey(testSecrets().queueTokenSecret);
    const deviceHash = await hashDevice(deviceId, accountId);
    const claims = admissionClaimsFor(
      { kind: 'queue', eventId, accountId, deviceHash, joinIndex: 0, cohort: 'FIFO', iat: 0, exp: 0 },
      1,
      Date.now(),
      tier,
    );
    admission = await signToken(await key, claims);
    admissions.set(cacheKey, admission);
  }
  return { authorization: `Bearer ${token}`, 'x-device-id': deviceId, 'x-admission-token': admission };
}

/**
 * The invariants after any scenario: available + held + sold = capacity; held seats = seats of live holds;
 * sold seats = seats of confirmed orders; no seat belongs to two holds.
 */
export async function checkInvariants(t: TestDatabase, eventId: string, capacity: number) {
  const counts = await getInventoryCounts(t.db, eventId, capacity);
  const { rows } = await sql<{ live: number; ordered: number; heldseats: number; soldseats: number; holdseatmismatch: number }>`
    SELECT
      (SELECT coalesce(sum(quantity), 0) FROM holds WHERE event_id = ${eventId} AND status IN ('HELD','PAYING') AND expires_at > now())::int AS live,
      (SELECT coalesce(sum(seat_count), 0) FROM orders WHERE event_id = ${eventId} AND status = 'CONFIRMED')::int AS ordered,
      (SELECT count(*) FROM seats WHERE event_id = ${eventId} AND status = 'HELD' AND expires_at > now())::int AS heldseats,
      (SELECT count(*) FROM seats WHERE event_id = ${eventId} AND status = 'SOLD')::int AS soldseats,
      (SELECT count(*) FROM holds h WHERE h.event_id = ${eventId} AND (h.status = 'PURCHASED' OR (h.status IN ('HELD','PAYING') AND h.expires_at > now()))
         AND h.quantity <> (SELECT count(*) FROM seats s WHERE s.hold_id = h.id))::int AS holdseatmismatch`.execute(t.db);
  return { counts, ...rows[0]! };
}

/** A card of one's own (the per-instrument limit is per event): a Luhn-valid 16-digit number from `i`. */
export function cardNumberOf(i: number): string {
  const body = `4111${String(i).padStart(11, '0')}`;
  let sum = 0;
  for (let k = 0; k < body.length; k++) {
    let d = Number(body[body.length - 1 - k]);
    if (k % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}
