import type { Trx } from '../db/connect.js';
import type { FanLanguage } from './limits.js';
import * as repo from './signoff.repository.js';
import { insertAudit } from '../audit/index.js';
import type { FairnessMode } from './events.table.js';

// The fairness sign-off rule: an event whose fairness mode is not signed off does not open.
// Its queues stay closed (nobody is admitted, the pre-open cohort is not sealed, the seed is not revealed) and
// fans read a plain message, until a promoter or an admin signs the mode off. An event that already opened (its
// cohort sealed) stays open: the mode cannot change once a fan has joined, so its sign-off cannot lapse then.

/** Whether a queue waits for the fairness sign-off: not signed off, and not opened already (its cohort unsealed). */
export function awaitsSignOff(q: { signedOff: boolean; sealedAt: Date | string | null }): boolean {
  return !q.signedOff && q.sealedAt === null;
}

/** What a fan reads while the sale waits for its sign-off (the status poll's message; the state is WAITING), per fan language. */
export const AWAITING_SIGNOFF_MESSAGES: Record<FanLanguage, string> = {
  en: 'This sale has not opened yet: the organiser is completing its final checks. You keep your place in line, and fans are let in as soon as it opens.',
  es: 'La venta aún no ha abierto: el organizador está terminando sus últimas comprobaciones. Conservas tu lugar en la fila y se dejará entrar a los fans en cuanto abra.',
};
/** The English message (AWAITING_SIGNOFF_MESSAGES.en). */
export const AWAITING_SIGNOFF_MESSAGE = AWAITING_SIGNOFF_MESSAGES.en;

/**
 * Records `actor`'s sign-off of the event's current mode with the plain-words description fans are shown (the
 * caller's `fairnessDescription(mode)`, queue/fairness.ts: the queue owns the fairness rule), audited
 * `event.fairness_signed_off`. The caller holds the event row's lock and knows there is no live sign-off of this
 * mode; a live one of another mode is superseded with `supersedeReason`.
 */
export async function insertFairnessSignOff(
  trx: Trx,
  event: { id: string; fairnessMode: FairnessMode; version: number },
  description: string,
  actor: string,
  supersedeReason?: string,
) {
  if (supersedeReason !== undefined) await repo.supersedeSignoff(trx, event.id, actor, supersedeReason);
  const inserted = await repo.insertSignoff(trx, {
    event_id: event.id,
    fairness_mode: event.fairnessMode,
    description,
    signed_off_by: actor,
    event_version: event.version,
  });
  await insertAudit(trx, {
    actor,
    action: 'event.fairness_signed_off',
    eventId: event.id,
    details: { signOffId: inserted.id, fairnessMode: event.fairnessMode, description, eventVersion: event.version },
  });
  return inserted;
}

// What other domains may use of this domain's repository (eslint-rules/onsale.js, onsale/domain-borders).
export { signedOffSql } from './signoff.repository.js';
export { findLiveSignoff, findSignoffs, supersedeSignoff } from './signoff.repository.js';
