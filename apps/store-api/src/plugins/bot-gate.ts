import fp from 'fastify-plugin';
import type { Db } from '@onsale/shared/db';
import { DomainError } from '@onsale/shared';
import type { EventCache } from '@onsale/shared/allocations';
import {
  DEFERRAL_HEADER,
  DeviceSightings,
  hasQueuePosition,
  POW_HEADER,
  type AbuseMetrics,
  type BotSignals,
  type JoinGate,
} from '@onsale/shared/abuse';

const header = (v: string | string[] | undefined) => (typeof v === 'string' ? v : undefined);

/** A join as the bot gate reads it. */
export interface GatedJoin {
  eventId: string;
  accountId: string;
  /** The request's headers (lower-case names), as Fastify's req.headers. */
  headers: Record<string, string | string[] | undefined>;
  /** Its counts on the join limits (req.requestCounts). */
  requestCounts: { account: number; ip: number } | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The bot gate's check of one join, as its hook runs it (rejects with CHALLENGE_REQUIRED, JOIN_DEFERRED or a
     * proof-of-work or deferral error): for joins run without a request of their own (the edge's). Absent with the
     * gate off (BOT_GATE_ENABLED=false).
     */
    joinGate?: (join: GatedJoin) => Promise<void>;
  }
}

/**
 * The bot-score check of queue joins (see JoinGate), `app.joinGate`: gathers the join's signals, lets the scorer
 * decide, and lets the join through or rejects with CHALLENGE_REQUIRED / JOIN_DEFERRED / a proof-of-work or deferral
 * error. The join's checks run it after validation (the device id is well formed) and before the join is written.
 */
export const botGatePlugin = fp<{
  gate: JoinGate;
  db: Db;
  events: EventCache;
  metrics: AbuseMetrics;
  sightings?: DeviceSightings;
  now?: () => number;
}>(
  async (app, { gate, db, events, metrics, sightings = new DeviceSightings(), now: clock = Date.now }) => {
    // Run by the join route's own hooks and the edge's batches, in the join's checks' order (routes/queue/join-checks.ts).
    const score = async (req: GatedJoin) => {
      const eventId = req.eventId;
      const { event } = await events.get(eventId);
      const now = clock();
      const signals: BotSignals = {
        userAgent: header(req.headers['user-agent']) ?? null,
        headerNames: Object.keys(req.headers),
        device: sightings.observe(header(req.headers['x-device-id']) ?? '', req.accountId, now),
        requestRate: { accountPerWindow: req.requestCounts?.account ?? 0, ipPerWindow: req.requestCounts?.ip ?? 0 },
        attestation: header(req.headers['x-client-attestation']) ?? null,
      };
      try {
        const { decision } = await gate.check({
          accountId: req.accountId,
          eventId,
          onsaleAt: event.onsaleAt,
          signals,
          proof: header(req.headers[POW_HEADER]),
          deferral: header(req.headers[DEFERRAL_HEADER]),
          hasPosition: () => hasQueuePosition(db, eventId, req.accountId),
        });
        metrics.joinGate.inc({ decision });
      } catch (e) {
        metrics.joinGate.inc({
          decision:
            e instanceof DomainError && e.code === 'CHALLENGE_REQUIRED'
              ? 'CHALLENGED'
              : e instanceof DomainError && e.code === 'JOIN_DEFERRED'
                ? 'DEFERRED'
                : 'REFUSED',
        });
        throw e;
      }
    };
    app.decorate('joinGate', score);
  },
  { name: 'bot-gate', dependencies: ['auth'] },
);
