// What the page keeps on this device, so a reload or a closed tab keeps the fan's place: the device id (tokens are
// bound to it), the account token, and per event and account the queue and admission tokens, the hold and the order.
import type { OrderConfirmation } from '@onsale/shared/checkout/schema';
import type { HoldView } from '@onsale/shared/inventory/schema';
import { isDeviceId } from '@onsale/shared/queue/edge';

const DEVICE_KEY = 'onsale.device';
const ACCOUNT_KEY = 'onsale.account';

function read<T>(key: string): T | null {
  try {
    const raw = localStorage.getItem(key);
    return raw ? (JSON.parse(raw) as T) : null;
  } catch {
    return null;
  }
}
function write(key: string, value: unknown): void {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Private mode or a full store: the page still works, it just forgets on reload.
  }
}

/** This browser's device id: random, made once, never derived from anything about the fan. */
export function deviceId(): string {
  let id = read<string>(DEVICE_KEY);
  if (!isDeviceId(id)) {
    id = `web-${crypto.randomUUID()}`;
    write(DEVICE_KEY, id);
  }
  return id;
}

export interface Account {
  accountId: string;
  /** Shown to the fan ("Signed in as …"). */
  displayName: string;
  token: string;
  /** ms since the epoch; null when unknown. */
  expiresAt: number | null;
  via: 'dev' | 'oidc';
  refreshToken?: string;
}

export const loadAccount = () => read<Account>(ACCOUNT_KEY);
export const saveAccount = (a: Account | null) => write(ACCOUNT_KEY, a);

// The hold and the order the page keeps are typed from the store API's own answer schemas (in the domain, beside
// the route schemas that use them): a change of contract breaks this page's typecheck, not its fans.
export type { HeldSeatView as HeldSeat, HoldView } from '@onsale/shared/inventory/schema';

/** A paid order as the page shows it: the checkout's answer, less its status, with the seats or units it paid for. */
export type OrderView = Omit<OrderConfirmation, 'status'> & Pick<HoldView, 'seats' | 'units'>;

/** One fan's progress through one event's sale on this device. */
export interface EventProgress {
  queueToken?: string;
  /** The first "people ahead" this device saw, for the progress bar. */
  firstAhead?: number;
  admissionToken?: string;
  /** When the admission token stops admitting (ms since the epoch). */
  admissionExpiresAt?: number;
  hold?: HoldView;
  /** The Idempotency-Key of the current payment attempt: a retry (or a reload mid-payment) reuses it. */
  payKey?: string;
  order?: OrderView;
  /** Something to tell the fan on the next step (a hold that ran out, seats let go). */
  notice?: string;
  /** The place moved to another device where the fan signed in: this one waits for the fan to bring it back. */
  movedAway?: boolean;
  /**
   * The account held tickets for this event when this device last read them (GET /me/tickets): the page reads them
   * again when it opens. Without it (and without an order here) the page reads them only when the fan asks.
   */
  holdsTickets?: boolean;
}

const progressKey = (accountId: string, eventId: string) => `onsale.progress.${accountId}.${eventId}`;
export const loadProgress = (accountId: string, eventId: string): EventProgress =>
  read<EventProgress>(progressKey(accountId, eventId)) ?? {};
export const saveProgress = (accountId: string, eventId: string, p: EventProgress) => write(progressKey(accountId, eventId), p);

/** The expiry (ms) a signed token carries in its payload (`exp`, seconds), or null. Not a verification. */
export function tokenExpiry(token: string): number | null {
  try {
    const part = token.includes('.') ? token.split('.')[token.split('.').length === 3 ? 1 : 0]! : token;
    const json = JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: unknown };
    return typeof json.exp === 'number' ? json.exp * 1000 : null;
  } catch {
    return null;
  }
}
