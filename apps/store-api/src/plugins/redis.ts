import { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import { MemoryUsedChallenges, type UsedChallenges } from '@onsale/shared/abuse';

/**
 * The Redis client the store API shares state through (REDIS_URL). Commands fail at once while Redis is away
 * (no offline queue, one retry, a short timeout) so a request never waits on it: callers fall back to this
 * process's memory and say so once per outage.
 */
export function createRedis(url: string): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 250,
    connectTimeout: 2000,
    lazyConnect: true,
  });
}

/** Logs a shared store's outage once when it starts and once when it ends. */
export class OutageLog {
  private down = false;
  constructor(
    private readonly log: FastifyBaseLogger,
    private readonly what: string,
  ) {}
  failed(err: unknown): void {
    if (this.down) return;
    this.down = true;
    this.log.warn({ err }, `Redis does not answer: ${this.what} fall back to this process's memory until it is back`);
  }
  ok(): void {
    if (!this.down) return;
    this.down = false;
    this.log.warn(`Redis is back: ${this.what} are shared again`);
  }
}

/**
 * Used proof-of-work challenges in Redis (`SET key PXAT exp NX`: the first process to use one wins, every other
 * sees it used), so a solved challenge is accepted once across every store-API process. While Redis is away, this
 * process's memory stands in.
 */
export class RedisUsedChallenges implements UsedChallenges {
  private readonly memory = new MemoryUsedChallenges();
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly outage: OutageLog,
  ) {}

  async use(key: string, expiresAtMs: number, nowMs: number): Promise<boolean> {
    try {
      const r = await this.redis.set(`${this.prefix}pow:${key}`, '1', 'PXAT', Math.max(expiresAtMs, nowMs + 1000), 'NX');
      this.outage.ok();
      return r === 'OK';
    } catch (err) {
      this.outage.failed(err);
      return this.memory.use(key, expiresAtMs, nowMs);
    }
  }
}
