import type { Task } from 'graphile-worker';
import type pino from 'pino';
import type { Db, Trx } from '../db/connect.js';
import type { Metrics } from '../metrics/index.js';
import { runFanout, type FanoutOptions, type NotifiedChunk } from './fanout.js';
import { maintainWaitlist } from './maintenance.js';
import { expireOffer } from './offers.js';

export interface WaitlistTaskDeps {
  db: Db;
  metrics?: Metrics;
  logger?: pino.Logger;
  /** The delivery channels' hook, called in the transaction that wrote each chunk of notifications. */
  onNotified?: (trx: Trx, chunk: NotifiedChunk) => Promise<void>;
  fanout?: Omit<FanoutOptions, 'db' | 'onNotified' | 'metrics'>;
}

/** The waitlist's jobs on the Postgres-backed queue: fan-out, offer expiry (the cascade) and housekeeping. */
export function waitlistTasks(deps: WaitlistTaskDeps): Record<string, Task> {
  const fanout: FanoutOptions = { db: deps.db, onNotified: deps.onNotified, metrics: deps.metrics, ...deps.fanout };
  return {
    waitlist_fanout: async (payload) => {
      const { availabilityId } = payload as { availabilityId: number };
      await runFanout(fanout, Number(availabilityId));
    },
    waitlist_offer_expire: async (payload) => {
      const { offerId } = payload as { offerId: string };
      await expireOffer(deps.db, offerId);
    },
    waitlist_maintain: async (payload) => {
      const { staleAfterMs } = (payload ?? {}) as { staleAfterMs?: number };
      const r = await maintainWaitlist(deps.db, { staleAfterMs });
      if (r.fanoutsResumed + r.offersExpired > 0) deps.logger?.info({ waitlist: r }, 'waitlist maintenance');
    },
  };
}
