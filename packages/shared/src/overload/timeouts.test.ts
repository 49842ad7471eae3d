import { describe, expect, it } from 'vitest';
import { EpisodeLog } from './episode-log.js';
import { BUDGET_MARGIN_MS, checkTimeoutOrder, STORE_SERVER_TIMEOUTS } from './timeouts.js';

describe('the timeouts fire in order', () => {
  it('pool wait < request budget < the socket timeout (with a margin for a lagging event loop)', () => {
    expect(() => checkTimeoutOrder({ poolWaitMs: 3000, requestBudgetMs: 4000, production: true })).not.toThrow();
    expect(() => checkTimeoutOrder({ poolWaitMs: 3000, requestBudgetMs: 3000, production: false })).toThrow(/above DB_POOL_WAIT_MS/);
    const latest = STORE_SERVER_TIMEOUTS.connectionTimeoutMs - BUDGET_MARGIN_MS;
    expect(() => checkTimeoutOrder({ poolWaitMs: 3000, requestBudgetMs: latest, production: true })).not.toThrow();
    expect(() => checkTimeoutOrder({ poolWaitMs: 3000, requestBudgetMs: latest + 1, production: true })).toThrow(/at most/);
    expect(STORE_SERVER_TIMEOUTS.connectionTimeoutMs).toBeLessThan(STORE_SERVER_TIMEOUTS.requestTimeoutMs);
  });

  it('no budget (0) is for development and tests only: production refuses it', () => {
    expect(() => checkTimeoutOrder({ poolWaitMs: 3000, requestBudgetMs: 0, production: false })).not.toThrow();
    expect(() => checkTimeoutOrder({ poolWaitMs: 3000, requestBudgetMs: 0, production: true })).toThrow(/refused when NODE_ENV=production/);
  });
});

describe('EpisodeLog', () => {
  it('logs an episode once when it starts and once when it has been quiet, with its count', () => {
    let now = 10_000;
    const lines: string[] = [];
    const log = new EpisodeLog({
      log: { warn: (_o, msg) => lines.push(msg) },
      started: 'started',
      ended: (count, seconds) => `ended: ${count} over ${seconds} s`,
      quietMs: 5000,
      now: () => now,
    });
    try {
      for (let i = 0; i < 30; i++) {
        log.note();
        now += 100;
      }
      log.tick(); // not quiet yet
      expect(lines).toEqual(['started']);
      now += 5001;
      log.tick();
      expect(lines).toEqual(['started', 'ended: 30 over 2.9 s']);
      log.note();
      expect(lines).toEqual(['started', 'ended: 30 over 2.9 s', 'started']);
    } finally {
      log.stop();
    }
  });
});
