import { z } from 'zod';
import type { Db } from '../db/connect.js';
import { invalid, notFound } from '../errors.js';
import { insertAudit } from '../audit/index.js';
import { insertSeats } from '../events/events.service.js';
import { isUuid } from '../ids.js';
import { rowLabel, seatQuality, type SeatSpec } from '../events/layout.js';
import { emitAvailability } from '../waitlist/availability.js';
import { addCapacity, findSectionKind, lockEventRow, nextRowIndex, seatsFromRow } from './add-seats.repository.js';

export const addSeatsSchema = z
  .object({
    section: z.string().min(1).max(40),
    rows: z.number().int().min(1).max(200),
    seatsPerRow: z.number().int().min(1).max(500),
  })
  .strict();
export type AddSeatsInput = z.input<typeof addSeatsSchema>;

/**
 * New inventory for an event on sale (a production hold released, a stage layout changed): rows appended at the
 * back of a section, the event's capacity raised, audited, and the availability event emitted in the same
 * transaction (so after a sell-out the new seats go to the waitlist first).
 */
export async function addSeats(db: Db, eventId: string, input: AddSeatsInput, actor: string) {
  if (!isUuid(eventId)) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
  const parsed = addSeatsSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalid('INVALID_SEATS', issue.message, issue.path.join('.') || 'body');
  }
  const { section, rows, seatsPerRow } = parsed.data;
  return db.transaction().execute(async (trx) => {
    const event = await lockEventRow(trx, eventId);
    if (!event) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
    const found = await findSectionKind(trx, eventId, section);
    if (!found) throw notFound('SECTION_NOT_FOUND', `event has no section ${section}`, 'section');
    if (found.kind === 'GA')
      throw invalid('SECTION_IS_GA', `section ${section} is general admission: it has a capacity, not seat rows`, 'section');
    const first = await nextRowIndex(trx, eventId, section);
    const specs: SeatSpec[] = [];
    for (let r = first; r < first + rows; r++)
      for (let n = 1; n <= seatsPerRow; n++)
        specs.push({ sectionCode: section, rowLabel: rowLabel(r), rowIndex: r, seatNumber: n, quality: seatQuality(r, n, seatsPerRow) });
    await insertSeats(trx, eventId, specs);
    const added = specs.length;
    await addCapacity(trx, eventId, section, added);
    const seats = await seatsFromRow(trx, eventId, section, first);
    await insertAudit(trx, { actor, action: 'inventory.add', eventId, details: { section, rows, seatsPerRow, added } });
    const emitted = await emitAvailability(
      trx,
      eventId,
      'INVENTORY_ADDED',
      seats.map((s) => ({ ...s, id: Number(s.id) })),
    );
    return {
      eventId,
      section,
      added,
      firstRow: rowLabel(first),
      availabilityId: emitted?.availabilityId ?? null,
      toWaitlist: emitted?.pooled ?? false,
    };
  });
}
