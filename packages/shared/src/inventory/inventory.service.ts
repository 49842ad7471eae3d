import type { Db, Trx } from '../db/connect.js';
import { countBySection, foldSeatCounts, recountBySection, type SectionCounts } from './inventory.repository.js';

export interface InventoryCounts {
  capacity: number;
  available: number;
  held: number;
  sold: number;
  /** available + held + sold - capacity; must be 0 at every instant. */
  drift: number;
  sections: { code: string; available: number; held: number; sold: number }[];
}

/**
 * Live counts of an event's inventory with read-time expiry, and the invariant's drift against capacity. Reserved
 * seats' counts are the ones the database keeps (see countBySection); `{ recount: true }` counts every seat row
 * instead (the rehearsal's final check, and the tests that hold the kept counts to the seats).
 */
export async function getInventoryCounts(
  db: Db | Trx,
  eventId: string,
  capacity: number,
  tier?: { code: string; general: boolean },
  options: { recount?: boolean } = {},
): Promise<InventoryCounts> {
  const rows = await (options.recount ? recountBySection : countBySection)(db, eventId, tier);
  return totalled(rows, capacity);
}

function totalled(rows: SectionCounts[], capacity: number): InventoryCounts {
  let available = 0,
    held = 0,
    sold = 0;
  for (const r of rows) {
    available += r.available;
    held += r.held;
    sold += r.sold;
  }
  return {
    capacity,
    available,
    held,
    sold,
    drift: available + held + sold - capacity,
    sections: rows
      .map((r) => ({ code: r.section_code, available: r.available, held: r.held, sold: r.sold }))
      .sort((a, b) => a.code.localeCompare(b.code)),
  };
}

/**
 * Folds the seat-count changes written since the last fold into the event's kept counts (the admission
 * controller's tick does, once a second), so that a read of the counts adds few of them.
 */
export async function foldInventoryCounts(db: Db | Trx, eventId: string): Promise<void> {
  await foldSeatCounts(db, eventId);
}

// What other domains may use of this domain's repository (eslint-rules/onsale.js, onsale/domain-borders).
export { gaHeldUnits } from './inventory.repository.js';
