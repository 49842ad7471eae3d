import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenKey, EDGE_REPORT_MAX_CLAIMS, openClaimsReport, type TokenKey } from '@onsale/shared/queue';
import { ClaimsReporter } from '../src/claims.js';
import { FakeOrigin } from './fake-origin.js';

// The edge's reports of the admissions it issued (issue 28): an origin that sheds them, or cannot answer, must not
// lose them. Run in Node against the stand-in origin (the reporter is plain fetch and timers, as in workerd).

const QUEUE = randomUUID();
const SECRET = 'claims reporter test queue secret, 32+ characters';
let origin: FakeOrigin;
let key: TokenKey;

beforeAll(async () => {
  origin = await new FakeOrigin().start();
  key = await createTokenKey(SECRET);
});
afterAll(() => origin.stop());

describe('ClaimsReporter', () => {
  it('sends again every report the origin sheds (503) until it is taken, the same report each time, and never more than a report can carry in one', async () => {
    let shed = 4;
    const taken: string[] = [];
    origin.routes.set('POST /edge/claims', () => {
      const body = origin.received.at(-1)!.body;
      if (shed-- > 0) return { status: 503, headers: { 'retry-after': '3' }, body: '{"error":"SERVICE_UNAVAILABLE"}' };
      taken.push(JSON.parse(body).report);
      return { status: 202, body: '{"counted":1}' };
    });
    const reporter = new ClaimsReporter({ originUrl: origin.url, key: Promise.resolve(key), delayMs: 10, timeoutMs: 5000 });
    const flushes: Promise<unknown>[] = [];
    // A wave of admissions larger than a report carries: before, the claims past EDGE_REPORT_MAX_CLAIMS were dropped,
    // and a report shed three times was left until the next admission.
    const fans = EDGE_REPORT_MAX_CLAIMS * 2 + 17;
    for (let i = 0; i < fans; i++) reporter.add(QUEUE, `fan-${i}`, (p) => flushes.push(p));
    await Promise.all(flushes);

    expect(reporter.pendingCount).toBe(0);
    expect(reporter.dropped).toBe(0);
    const opened = await Promise.all(taken.map((r) => openClaimsReport(key, r, Date.now())));
    const reported = opened.flatMap((o) => o.claims.map((c) => c.accountId));
    expect(reported).toHaveLength(fans);
    expect(new Set(reported).size).toBe(fans);
    for (const o of opened) expect(o.claims.length).toBeLessThanOrEqual(EDGE_REPORT_MAX_CLAIMS);
    // The shed attempts were the first report, sent again as it was (one id: the origin counts it once).
    const attempts = origin.received.filter((r) => r.url === '/edge/claims').map((r) => JSON.parse(r.body).report as string);
    expect(attempts.slice(0, 5).every((a) => a === taken[0])).toBe(true);
  });

  it('a report the origin refuses as such (401: another secret) is dropped and counted, not sent forever', async () => {
    origin.received.length = 0;
    origin.routes.set('POST /edge/claims', () => ({ status: 401, body: '{"error":"TOKEN_FORGED"}' }));
    const reporter = new ClaimsReporter({ originUrl: origin.url, key: Promise.resolve(key), delayMs: 10, timeoutMs: 5000 });
    const flushes: Promise<unknown>[] = [];
    reporter.add(QUEUE, 'fan-a', (p) => flushes.push(p));
    reporter.add(QUEUE, 'fan-b', (p) => flushes.push(p));
    await Promise.all(flushes);
    expect(reporter.dropped).toBe(2);
    expect(origin.received.filter((r) => r.url === '/edge/claims')).toHaveLength(1);
  });
});
