import type { Db, Trx } from '../db/connect.js';
import { countBySection } from './inventory.repository.js';

export interface InventoryCounts {
  capacity: number;
  available: number;
  held: number;
  sold: number;
  /** available + held + sold - capacity; must be 0 at every instant. */
  drift: number;
  sections: { code: string; available: number; held: number; sold: number }[];
}

/** Live counts of an event's inventory with read-time expiry, and the invariant's drift against capacity. */
export async function getInventoryCounts(
  db: Db | Trx,
  eventId: string,
  capacity: number,
  tier?: { code: string; general: boolean },
): Promise<InventoryCounts> {
  const rows = await countBySection(db, eventId, tier);
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

// What other domains may use of this domain's repository (eslint-rules/onsale.js, onsale/domain-borders).
export { gaHeldUnits } from './inventory.repository.js';
