// The shapes of a hold as the store API answers with it, and of who asks: shared by the hold service and its parts
// (replay, exact seats, best available, release).
import type { HeldUnits } from './ga.repository.js';
import type { HoldStatus } from './inventory.table.js';

export interface HeldSeat {
  id: number;
  section: string;
  row: string;
  number: number;
  priceCents: number;
}

export type FanHoldStatus = Exclude<HoldStatus, 'WAITLIST'>;

/** A hold as a fan sees it. `status` applies read-time expiry: a lapsed hold reads EXPIRED. */
export interface Hold {
  holdId: string;
  eventId: string;
  /** A fan's hold is never WAITLIST (those belong to the system's waitlist account). */
  status: FanHoldStatus;
  seats: HeldSeat[];
  /** General admission: the hold's units per section (a GA hold has no seats). */
  units?: HeldUnits[];
  quantity: number;
  amountCents: number;
  expiresAt: Date;
  extended: boolean;
}

/** A hold request's answer, and whether it is an earlier request's hold given again (`Idempotent-Replayed`). */
export interface HoldAnswer {
  hold: Hold;
  replayed: boolean;
}

/** One fan's request to release one of their holds. */
export interface ReleaseRequest {
  accountId: string;
  holdId: string;
  /** The event the fan's admission token is for, when the request carries one. */
  admittedEventId?: string;
}

/** Who is asking, beyond the account: the device the request came from (its deviceFingerprint). */
export interface HoldRequester {
  deviceHash?: string | null;
  /** The presale tier the fan's admission is for (AdmissionTokenClaims.tier); absent: the general sale. */
  tier?: string;
}
