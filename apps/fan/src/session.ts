// What the page keeps on this device, so a reload or a closed tab keeps the fan's place: the device id (tokens are
// bound to it), the account token, and per event and account the queue and admission tokens, the hold and the order.
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

export interface HeldSeat {
  id: number;
  section: string;
  row: string;
  number: number;
  priceCents: number;
}
export interface HoldView {
  holdId: string;
  eventId: string;
  status: 'HELD' | 'PAYING' | 'PURCHASED' | 'RELEASED' | 'EXPIRED';
  seats: HeldSeat[];
  units?: { section: string; quantity: number; priceCents: number }[];
  quantity: number;
  amountCents: number;
  expiresAt: string;
  extended: boolean;
}
export interface OrderView {
  orderId: string;
  holdId: string;
  amountCents: number;
  seatCount: number;
  seats: HeldSeat[];
  units?: { section: string; quantity: number; priceCents: number }[];
}

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
