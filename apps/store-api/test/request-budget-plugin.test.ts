import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { DatabaseHealth } from '@onsale/shared/db';
import { requestBudgetPlugin } from '../src/plugins/request-budget.js';

// The request budget's rule in one process, without a database: a request still unanswered when its budget ends is
// answered 503 request_budget; one answered in the turn it arrived (the plugin then sets no timer for it) or later
// within its budget is answered as the route answers, and nothing is counted for it. (request-budget.test.ts runs
// the whole store API with slow payments.)
async function appWithBudget(budgetMs: number) {
  const counted: string[] = [];
  const app = Fastify({ logger: false });
  // An onResponse hook as the store API's metrics have (Fastify then times every reply: reply.elapsedTime).
  app.addHook('onResponse', (_req, _reply, done) => done());
  await app.register(requestBudgetPlugin, {
    budgetMs,
    faults: { health: new DatabaseHealth(), count503: (reason) => void counted.push(reason) },
  });
  let release: () => void = () => {};
  const released = new Promise<void>((r) => (release = r));
  app.get('/now', (_req, reply) => void reply.send({ ok: true }));
  app.get('/soon', async () => {
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    return { ok: true };
  });
  // Waits until the test releases it: past any budget.
  app.get('/stuck', async () => {
    await released;
    return { ok: true };
  });
  await app.ready();
  return { app, counted, release };
}

describe('request budget', () => {
  it('answers a request past its budget 503 request_budget with Retry-After; requests answered in time are untouched', async () => {
    const { app, counted, release } = await appWithBudget(150);
    try {
      const [now, soon, stuck] = await Promise.all([
        app.inject({ method: 'GET', url: '/now' }),
        app.inject({ method: 'GET', url: '/soon' }),
        app.inject({ method: 'GET', url: '/stuck' }),
      ]);
      expect(now.statusCode).toBe(200);
      expect(soon.statusCode).toBe(200);
      expect(stuck.statusCode).toBe(503);
      expect(stuck.json()).toMatchObject({ error: 'SERVICE_UNAVAILABLE', reason: 'request_budget' });
      expect(Number(stuck.headers['retry-after'])).toBeGreaterThanOrEqual(2);
      expect(counted).toEqual(['request_budget']);
    } finally {
      release();
      await app.close();
    }
  });

  it('counts nothing for many requests answered in the turn they arrived', async () => {
    const { app, counted, release } = await appWithBudget(50);
    try {
      const answers = await Promise.all(Array.from({ length: 200 }, () => app.inject({ method: 'GET', url: '/now' })));
      expect(answers.every((a) => a.statusCode === 200)).toBe(true);
      // A stuck request after them: its 503 comes after every earlier request's budget has passed too.
      const stuck = await app.inject({ method: 'GET', url: '/stuck' });
      expect(stuck.statusCode).toBe(503);
      expect(counted).toEqual(['request_budget']);
    } finally {
      release();
      await app.close();
    }
  });
});
