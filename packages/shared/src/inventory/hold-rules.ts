import { DomainError } from '../errors.js';
import type { HoldStatus } from './inventory.table.js';

/**
 * The per-account and per-device seat limits, as every way of taking seats applies them (a seat hold, a GA hold, a
 * waitlist offer claimed): `used` seats the account already holds or bought for the event, plus `quantity` more,
 * may not pass `limit`; likewise `deviceUsed` against `deviceLimit` when the request came from a known device.
 * `field` names what the fan asked with (the quantity, or the offer's claim token).
 */
export function assertSeatLimits(p: {
  quantity: number;
  used: number;
  limit: number;
  field: string;
  device?: { hash: string | null; used: number; limit: number };
}): void {
  if (p.used + p.quantity > p.limit)
    throw new DomainError('limit', 'ACCOUNT_LIMIT_EXCEEDED', `this account already has ${p.used} of ${p.limit} seats for this event`, {
      field: p.field,
      limit: p.limit,
      current: p.used,
    });
  const d = p.device;
  if (d && d.hash !== null && d.used + p.quantity > d.limit)
    throw new DomainError('limit', 'DEVICE_LIMIT_EXCEEDED', `this device already has ${d.used} of ${d.limit} seats for this event`, {
      field: 'x-device-id',
      limit: d.limit,
      current: d.used,
    });
}

/** Whether a hold has run out: marked EXPIRED, or past its expiry at `nowMs` (before the sweeper has marked it). */
export function holdLapsed(hold: { status: HoldStatus; expires_at: Date }, nowMs: number): boolean {
  return hold.status === 'EXPIRED' || hold.expires_at.getTime() <= nowMs;
}

/** The answer to acting on a hold that has run out. */
export const holdExpired = (): DomainError => new DomainError('gone', 'HOLD_EXPIRED', 'this hold has expired; its seats are back on sale');

/**
 * A hold attempt found the fan's hold made under the request's Idempotency-Key (another request with the key, on
 * another process, or one whose answer was lost when its process died): nothing was taken, and the answer is that
 * hold. Thrown by an attempt, caught by the hold service.
 */
export class HeldUnderKey extends Error {
  constructor(readonly holdId: string) {
    super('a hold was made under this Idempotency-Key already');
  }
}

/** The Idempotency-Key a hold attempt writes with its hold, and the hash of the request it is bound to. */
export interface HoldKey {
  key: string;
  requestHash: string;
  /**
   * Set by a hold attempt whose statement read the key under the account's lock and found no hold: a refusal after
   * that read is the request's own (the key had no hold later than a read before the hold would have looked), so the
   * hold service answers it without reading the key again.
   */
  readUnderLock?: boolean;
}
