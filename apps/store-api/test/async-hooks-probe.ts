// Run by async-hooks.test.ts in a process of its own (node --import tsx), as the store runs: builds the store API on
// DATABASE_URL, serves a join, a hold and its checkout for EVENT_ID, and prints one JSON line: whether promises had
// async ids of their own (a promise hook: an AsyncLocalStorage or async hook in use) before and after, the answers'
// statuses, and the same check once an AsyncLocalStorage is used (the probe's control: it must see that one).
import { AsyncLocalStorage, executionAsyncId } from 'node:async_hooks';
import { createDb } from '@onsale/shared/db';
import { SimulatedPaymentGateway } from '@onsale/shared/checkout';
import { admissionClaimsFor, createTokenKey, hashDevice, signToken } from '@onsale/shared/queue';
import { buildStoreApi } from '../src/app.js';
import { loadStoreApiConfig } from '../src/env.js';

/**
 * True when promises get async ids of their own: two reactions of one promise then run under different ids. With no
 * promise hook they run under the same one (Node's docs: promise contexts get no ids by default).
 */
async function promiseHooksOn(): Promise<boolean> {
  const p = Promise.resolve();
  const [a, b] = await Promise.all([p.then(() => executionAsyncId()), p.then(() => executionAsyncId())]);
  return a !== b;
}

const before = await promiseHooksOn();
const eventId = process.env.EVENT_ID!;
// No load shedding and no request budget: on a loaded machine (two test runs at once) either may answer 503, and
// this probe is about promise hooks, not overload.
const config = loadStoreApiConfig({
  NODE_ENV: 'test',
  DEV_AUTH: 'true',
  RATE_LIMIT_ENABLED: 'false',
  BOT_GATE_ENABLED: 'false',
  LOAD_SHED_ENABLED: 'false',
  REQUEST_BUDGET_MS: '0',
});
const db = createDb(process.env.DATABASE_URL!, { max: 4 });
const payments = new SimulatedPaymentGateway({ tps: 10_000, latencyMs: 1, failureRate: 0 });
const app = await buildStoreApi({ db, config, payments });
await app.ready();
const statuses: Record<string, number> = {};
try {
  const accountId = 'probe-fan';
  const login = await app.inject({ method: 'POST', url: '/auth/dev-login', payload: { accountId } });
  const bearer = `Bearer ${login.json<{ token: string }>().token}`;
  const deviceId = 'probe-device';
  const join = await app.inject({
    method: 'POST',
    url: `/events/${eventId}/queue`,
    headers: { authorization: bearer, 'x-device-id': deviceId },
  });
  statuses.join = join.statusCode;
  const key = await createTokenKey(config.queueTokenSecret);
  const deviceHash = await hashDevice(deviceId, accountId);
  const claims = admissionClaimsFor(
    { kind: 'queue', eventId, accountId, deviceHash, joinIndex: 0, cohort: 'FIFO', iat: 0, exp: 0 },
    1,
    Date.now(),
  );
  const headers = { authorization: bearer, 'x-device-id': deviceId, 'x-admission-token': await signToken(key, claims) };
  const hold = await app.inject({ method: 'POST', url: `/events/${eventId}/holds`, headers, payload: { section: 'A', quantity: 1 } });
  statuses.hold = hold.statusCode;
  if (hold.statusCode !== 201) throw new Error(`hold answered ${hold.statusCode}: ${hold.body}`);
  const { holdId, admissionToken } = hold.json<{ holdId: string; admissionToken: string }>();
  const checkout = await app.inject({
    method: 'POST',
    url: `/holds/${holdId}/checkout`,
    headers: { ...headers, 'x-admission-token': admissionToken, 'idempotency-key': 'probe-checkout' },
    payload: { payment: { instrument: { type: 'card', number: '4242424242424242', expMonth: 12, expYear: 2099 } } },
  });
  statuses.checkout = checkout.statusCode;
} finally {
  await app.close();
  await db.destroy();
}
const after = await promiseHooksOn();
new AsyncLocalStorage<number>().enterWith(1);
const control = await promiseHooksOn();
process.stdout.write(`${JSON.stringify({ before, after, control, statuses })}\n`);
