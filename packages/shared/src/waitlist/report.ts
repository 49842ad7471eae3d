import type { Db, Trx } from '../db/connect.js';
import { deliveryStatuses } from '../notify/notify.schema.js';
import type { DeliveryStatus } from '../notify/notify.schema.js';
import { loadListing } from './listings.js';
import * as repo from './report.repository.js';
import type { OfferStatus, WaitlistMode } from './waitlist.table.js';

// The console's waitlist view of one listing (`@onsale/shared/waitlist/report`): entries and their criteria,
// matches, offers out, webhook deliveries and notification latency. Reads only.

const OFFER_STATUSES: OfferStatus[] = ['OPEN', 'CLAIMED', 'DECLINED', 'EXPIRED', 'GONE'];
/** How many of the latest availability events and deliveries the latency figures are taken over. */
export const LATENCY_SAMPLE = 500;

/** Seconds, over the latest LATENCY_SAMPLE: median, 95th percentile and worst; null while there is none. */
export interface LatencySummary {
  count: number;
  p50Seconds: number | null;
  p95Seconds: number | null;
  maxSeconds: number | null;
}

export interface WaitlistReport {
  listing: {
    id: string;
    name: string;
    mode: WaitlistMode;
    ttlSeconds: number;
    offerTtlSeconds: number;
    performances: { eventId: string; name: string; date: string; soldOut: boolean }[];
  };
  generatedAt: Date;
  entries: {
    live: number;
    expired: number;
    oldestLiveAt: Date | null;
    newestAt: Date | null;
    /** How many live entries use each kind of criterion (the rest match any value of it). */
    criteria: { dateRange: number; maxPrice: number; sections: number; priceLevels: number };
    byQuantity: { quantity: number; entries: number }[];
    bySection: { section: string; entries: number }[];
    byPriceLevel: { priceLevel: string; entries: number }[];
    /** Live entries whose dates take in each performance. */
    byPerformance: { date: string; entries: number }[];
  };
  matches: {
    availabilityEvents: number;
    byStatus: { PENDING: number; FANNING_OUT: number; DONE: number };
    seatsReturned: number;
    matched: number;
    notified: number;
    recent: {
      id: number;
      eventId: string;
      eventName: string;
      cause: string;
      mode: string;
      seats: number;
      status: string;
      matched: number;
      notified: number;
      createdAt: Date;
      completedAt: Date | null;
    }[];
  };
  offers: {
    byStatus: Record<OfferStatus, number>;
    /** Offers out now, soonest to expire first (at most 50). */
    open: { id: string; eventId: string; accountId: string; quantity: number; createdAt: Date; expiresAt: Date }[];
  };
  deliveries: {
    byStatus: Record<DeliveryStatus, { deliveries: number; notifications: number }>;
    /** Deliveries being retried or given up on, newest first (at most 20). */
    failing: {
      id: number;
      endpointId: string;
      url: string;
      status: string;
      attempts: number;
      lastStatusCode: number | null;
      lastError: string | null;
      updatedAt: Date;
    }[];
  };
  latency: {
    /** Availability event created -> fan-out complete (every match notified in the inbox). */
    fanout: LatencySummary;
    /** Availability event created -> webhook delivered. */
    webhookDelivery: LatencySummary;
  };
}

const latency = (r: repo.LatencyRow): LatencySummary => {
  const round = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);
  return { count: r.count, p50Seconds: round(r.p50), p95Seconds: round(r.p95), maxSeconds: round(r.max) };
};

/** The waitlist view of a listing. LISTING_NOT_FOUND (field `id`) for an unknown or malformed id. */
export async function waitlistReport(db: Db | Trx, listingId: string): Promise<WaitlistReport> {
  const listing = await loadListing(db, listingId);
  const dates = [...new Set(listing.performances.map((p) => p.date))];
  const [
    totals,
    byQuantity,
    bySection,
    byPriceLevel,
    byDate,
    avail,
    recent,
    offerTotals,
    openOffers,
    deliveryTotals,
    failing,
    fanout,
    delivery,
  ] = await Promise.all([
    repo.findEntryTotals(db, listing.id),
    repo.findEntriesByQuantity(db, listing.id),
    repo.findEntriesByArray(db, listing.id, 'sections'),
    repo.findEntriesByArray(db, listing.id, 'price_levels'),
    repo.findEntriesByDate(db, listing.id, dates),
    repo.findAvailabilityTotals(db, listing.id),
    repo.findRecentAvailability(db, listing.id, 20),
    repo.findOfferTotals(db, listing.id),
    repo.findOpenOffers(db, listing.id, 50),
    repo.findDeliveryTotals(db, listing.id),
    repo.findFailingDeliveries(db, listing.id, 20),
    repo.findFanoutLatency(db, listing.id, LATENCY_SAMPLE),
    repo.findDeliveryLatency(db, listing.id, LATENCY_SAMPLE),
  ]);
  const offersByStatus = Object.fromEntries(OFFER_STATUSES.map((s) => [s, 0])) as Record<OfferStatus, number>;
  for (const o of offerTotals) offersByStatus[o.status as OfferStatus] = (offersByStatus[o.status as OfferStatus] ?? 0) + o.offers;
  const deliveriesByStatus = Object.fromEntries(
    deliveryStatuses.map((s) => [s, { deliveries: 0, notifications: 0 }]),
  ) as WaitlistReport['deliveries']['byStatus'];
  for (const d of deliveryTotals)
    deliveriesByStatus[d.status as DeliveryStatus] = { deliveries: d.deliveries, notifications: d.notifications };

  return {
    listing: {
      id: listing.id,
      name: listing.name,
      mode: listing.mode,
      ttlSeconds: listing.ttlSeconds,
      offerTtlSeconds: listing.offerTtlSeconds,
      performances: listing.performances.map((p) => ({ eventId: p.eventId, name: p.name, date: p.date, soldOut: p.soldOut })),
    },
    generatedAt: new Date(),
    entries: {
      live: totals.live,
      expired: totals.expired,
      oldestLiveAt: totals.oldest_live_at,
      newestAt: totals.newest_at,
      criteria: {
        dateRange: totals.with_dates,
        maxPrice: totals.with_max_price,
        sections: totals.with_sections,
        priceLevels: totals.with_price_levels,
      },
      byQuantity,
      bySection: bySection.map((r) => ({ section: r.value, entries: r.entries })),
      byPriceLevel: byPriceLevel.map((r) => ({ priceLevel: r.value, entries: r.entries })),
      byPerformance: byDate,
    },
    matches: {
      availabilityEvents: avail.events,
      byStatus: { PENDING: avail.pending, FANNING_OUT: avail.fanning_out, DONE: avail.done },
      seatsReturned: avail.seats,
      matched: avail.matched,
      notified: avail.notified,
      recent: recent.map((a) => ({
        id: a.id,
        eventId: a.event_id,
        eventName: a.event_name,
        cause: a.cause,
        mode: a.mode,
        seats: a.seat_count,
        status: a.status,
        matched: a.matched,
        notified: a.notified,
        createdAt: a.created_at,
        completedAt: a.completed_at,
      })),
    },
    offers: {
      byStatus: offersByStatus,
      open: openOffers.map((o) => ({
        id: o.id,
        eventId: o.event_id,
        accountId: o.account_id,
        quantity: o.quantity,
        createdAt: o.created_at,
        expiresAt: o.expires_at,
      })),
    },
    deliveries: {
      byStatus: deliveriesByStatus,
      failing: failing.map((d) => ({
        id: d.id,
        endpointId: d.endpoint_id,
        url: d.url,
        status: d.status,
        attempts: d.attempts,
        lastStatusCode: d.last_status_code,
        lastError: d.last_error,
        updatedAt: d.updated_at,
      })),
    },
    latency: { fanout: latency(fanout), webhookDelivery: latency(delivery) },
  };
}
