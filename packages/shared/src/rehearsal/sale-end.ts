import type { Db } from '../db/connect.js';
import { getInventoryCounts, type InventoryCounts } from '../inventory/inventory.service.js';
import { readBackSales, type SalesReadBack } from './rehearsal.repository.js';

/** The sale's end as the rehearsal's report reads it: the seats, the counts the database keeps, the orders. */
export interface SaleEnd {
  /** Every seat row counted (available, held, sold, drift). */
  counts: InventoryCounts;
  /** The counts the database keeps (seat_counts and the changes not yet folded). */
  kept: InventoryCounts;
  sales: SalesReadBack;
  /** recount's drift, or when that is 0 how far the kept counts are from the recount. */
  drift: number;
  /** Seats in confirmed orders beyond the seats sold: 0 unless a seat was sold twice (the report's third check). */
  ordersBeyondSold: number;
}

/**
 * Reads the sale's end in one repeatable-read snapshot (and one now(), so a hold lapsing between two reads is not
 * taken for drift). A run stopped early leaves checkouts finishing: an order and its seats' SOLD commit together, so
 * within one snapshot the orders' seats never exceed the seats sold, while orders read after the seats were counted
 * did (56 seats in a 200,000-fan run, 2026-12-07).
 */
export function readSaleEnd(
  db: Db,
  s: { eventId: string; capacity: number; listingId: string; botPrefix: string; notifiedSince: Date | null },
): Promise<SaleEnd> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const counts = await getInventoryCounts(trx, s.eventId, s.capacity, undefined, { recount: true });
      const kept = await getInventoryCounts(trx, s.eventId, s.capacity);
      const sales = await readBackSales(trx, s.eventId, s.listingId, s.botPrefix, s.notifiedSince);
      const keptOff = Math.abs(kept.available - counts.available) + Math.abs(kept.held - counts.held) + Math.abs(kept.sold - counts.sold);
      return {
        counts,
        kept,
        sales,
        drift: counts.drift === 0 ? keptOff : counts.drift,
        ordersBeyondSold: Math.max(0, sales.orderSeats - counts.sold),
      };
    });
}
