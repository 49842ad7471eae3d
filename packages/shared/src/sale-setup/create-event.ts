// Creating an event: the flow that combines the domains an event starts with (its seats and GA counters, its
// queue, its lottery and presale allocations, its fairness sign-off). It sits above those domains, so none of them
// imports the events read model's module back.
import type { Trx } from '../db/connect.js';
import { notFound } from '../errors.js';
import { createAllocations } from '../allocations/allocations.service.js';
import { assignAllocations, tierCapacities } from '../allocations/assign.js';
import { insertGaShards } from '../inventory/ga.service.js';
import { createLottery } from '../lottery/lottery.service.js';
import { initQueue } from '../queue/queue-init.js';
import { fairnessDescription } from '../queue/fairness.js';
import { eventColumns } from '../events/events.service.js';
import type { EventSpec } from '../events/events.schema.js';
import { expandSeats } from '../events/layout.js';
import { seatCount } from '../events/change-rules.js';
import { eventsRepository as repo } from '../events/events.service.js';
import { insertAudit } from '../audit/index.js';
import { insertFairnessSignOff } from '../events/signoff.service.js';
import { tierQueues } from './tier-queues.js';

/** How an event is created: `signOff` records `actor`'s sign-off of its fairness mode at once (see signoff.service.ts). */
export interface CreateEventOptions {
  signOff?: boolean;
}

/**
 * Creates an event with its listing, price levels, sections, every seat and the GA counters. Runs in the caller's
 * transaction. Without `signOff` the event does not open until someone signs its fairness mode off.
 */
export async function createEvent(
  trx: Trx,
  spec: EventSpec,
  actor = 'system',
  opts: CreateEventOptions = {},
): Promise<{ eventId: string; listingId: string; capacity: number }> {
  let listingId: string;
  if (spec.listing && 'id' in spec.listing) {
    if (!(await repo.listingExists(trx, spec.listing.id)))
      throw notFound('LISTING_NOT_FOUND', `no listing ${spec.listing.id}`, 'listing.id');
    listingId = spec.listing.id;
  } else {
    listingId = await repo.insertListing(trx, spec.listing?.name ?? spec.name);
  }
  const seats = assignAllocations(expandSeats(spec), spec.allocations);
  const generalAdmission = spec.sections.flatMap((s) => (s.kind === 'GA' ? [s] : []));
  const capacity = seatCount(spec.sections);
  const eventId = await repo.insertEvent(trx, { listing_id: listingId, ...eventColumns(spec, capacity) });
  await repo.insertPriceLevels(trx, eventId, spec.priceLevels);
  const perSection = new Map<string, number>();
  for (const s of seats) perSection.set(s.sectionCode, (perSection.get(s.sectionCode) ?? 0) + 1);
  for (const s of generalAdmission) perSection.set(s.code, s.capacity);
  await repo.insertSections(
    trx,
    eventId,
    spec.sections.map((s) => ({
      code: s.code,
      name: s.name ?? `Section ${s.code}`,
      kind: s.kind,
      priceLevel: s.priceLevel,
      qualityRank: s.qualityRank,
      capacity: perSection.get(s.code) ?? 0,
    })),
  );
  await repo.insertSeats(trx, eventId, seats);
  await insertGaShards(trx, eventId, generalAdmission, spec.allocations);
  const { seedCommitment } = await initQueue(trx, eventId);
  if (spec.lottery) await createLottery(trx, eventId, spec.lottery, actor);
  await createAllocations(trx, eventId, spec, tierCapacities(seats, spec), tierQueues);
  await insertAudit(trx, {
    actor,
    action: 'event.created',
    eventId,
    details: { name: spec.name, capacity, fairnessMode: spec.fairnessMode, seedCommitment },
  });
  if (opts.signOff)
    await insertFairnessSignOff(
      trx,
      { id: eventId, fairnessMode: spec.fairnessMode, version: 1 },
      fairnessDescription(spec.fairnessMode),
      actor,
    );
  return { eventId, listingId, capacity };
}
