import { DomainError } from '../errors.js';
import type { Db } from '../db/connect.js';
import { recordHoldLoss } from './holds.repository.js';

/** What proves a missing hold was made: the admission token signed for that hold when it was answered. */
export interface HoldProof {
  /** The hold the request is about. */
  holdId: string;
  /** The hold the request's verified admission token was signed for (absent: a token for the whole event). */
  tokenHoldId: string | undefined;
  eventId: string;
  accountId: string;
}

/** True when `err` is a missing hold that the request's own token proves was made: a hold lost, not a wrong id. */
export function isLostHold(err: unknown, proof: HoldProof): boolean {
  return (
    err instanceof DomainError && err.code === 'HOLD_NOT_FOUND' && proof.tokenHoldId !== undefined && proof.tokenHoldId === proof.holdId
  );
}

/**
 * The answer for a hold lost to a PostgreSQL crash under HOLD_COMMIT=async: the fan was answered 201 with a token
 * signed for the hold, but its commit never reached the disk, so the database has no such hold and its seats are
 * back on sale. Not a bare HOLD_NOT_FOUND: `410 HOLD_LOST` tells the client to hold again, with `details` (the store
 * API adds a fresh admission token, so the fan can). Recorded once per hold (hold_losses): the war room counts them.
 * `onRecorded` runs when this call recorded it (a metric).
 */
export async function holdLost(
  db: Db,
  proof: HoldProof,
  details: Record<string, unknown> = {},
  onRecorded?: () => void,
): Promise<DomainError> {
  if (await recordHoldLoss(db, proof)) onRecorded?.();
  return new DomainError(
    'gone',
    'HOLD_LOST',
    'your hold was lost in a brief database failure and its seats went back on sale; nothing was charged: hold again',
    {
      field: 'id',
      holdId: proof.holdId,
      ...details,
    },
  );
}
