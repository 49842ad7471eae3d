import type { Db } from '../db/connect.js';
import { createEvent } from '../sale-setup/create-event.js';
import { parseEventFile } from '../events/events.service.js';
import type { EventFile } from '../events/events.schema.js';

/**
 * A small event already on sale (opened an hour ago, starts tomorrow): one price level `P` and one section `S` of
 * 2 rows x 10 seats unless overridden. Its fairness mode is signed off (an unsigned event does not open) unless
 * `opts.signOff` is false. For tests of the domain against a real database.
 */
export async function createOpenEvent(
  db: Db,
  over: Partial<EventFile> = {},
  opts: { signOff?: boolean } = {},
): Promise<{ eventId: string; capacity: number }> {
  const spec = parseEventFile({
    name: 'Test event',
    venueName: 'Hall',
    startsAt: new Date(Date.now() + 86_400_000).toISOString(),
    onsaleAt: new Date(Date.now() - 3_600_000).toISOString(),
    priceLevels: [{ code: 'P', name: 'All', priceCents: 1000 }],
    sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 2, seatsPerRow: 10 }],
    ...over,
  });
  return db.transaction().execute((trx) => createEvent(trx, spec, 'system', { signOff: opts.signOff ?? true }));
}
