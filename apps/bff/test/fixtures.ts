import type { Db } from '@onsale/shared/db';
import type { RehearsalLauncher } from '../src/rehearsals.js';
import { sql } from '@onsale/shared/db';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import type { TokenKey } from '@onsale/shared/queue';
import type { PaymentProvider } from '@onsale/shared/checkout';
import { createUser, DEFAULT_SIGN_IN_THROTTLE, type ConsoleUser, type Role } from '@onsale/shared/users';
import type { Context } from '../src/context.js';
import { appRouter } from '../src/root.js';

/** A small house: two sections, 3x4 + 2x5 = 22 seats. */
export function smallEventFile(name: string) {
  return {
    name,
    venueName: 'Test Hall',
    startsAt: '2030-06-01T19:00:00Z',
    onsaleAt: '2030-03-01T10:00:00Z',
    priceLevels: [
      { code: 'P1', name: 'Front', priceCents: 12_000 },
      { code: 'P2', name: 'Back', priceCents: 6_000 },
    ],
    sections: [
      { code: 'A', name: 'Stalls', priceLevel: 'P1', qualityRank: 1, rowCount: 3, seatsPerRow: 4 },
      { code: 'B', name: 'Balcony', priceLevel: 'P2', qualityRank: 2, rowCount: 2, seatsPerRow: 5 },
    ],
  };
}

export async function seedEvent(db: Db, name: string): Promise<{ eventId: string; capacity: number }> {
  return db.transaction().execute((trx) => createEvent(trx, parseEventFile(smallEventFile(name)), 'test', { signOff: true }));
}

/** Holds `count` seats of a section for five minutes (no holds row needed: seats.hold_id has no FK). */
export async function holdSeats(db: Db, eventId: string, section: string, count: number): Promise<void> {
  await sql`
    UPDATE seats SET status = 'HELD', hold_id = gen_random_uuid(), expires_at = now() + interval '5 min'
    WHERE event_id = ${eventId} AND id IN (
      SELECT id FROM seats WHERE event_id = ${eventId} AND section_code = ${section} AND status = 'AVAILABLE'
      ORDER BY id LIMIT ${count})`.execute(db);
}

/** Marks `count` seats of a section sold. */
export async function sellSeats(db: Db, eventId: string, section: string, count: number): Promise<void> {
  await sql`
    UPDATE seats SET status = 'SOLD', hold_id = gen_random_uuid(), expires_at = NULL
    WHERE event_id = ${eventId} AND id IN (
      SELECT id FROM seats WHERE event_id = ${eventId} AND section_code = ${section} AND status = 'AVAILABLE'
      ORDER BY id LIMIT ${count})`.execute(db);
}

/** Counts straight from the seats table, independent of the code under test. */
export async function countsFromDb(db: Db, eventId: string): Promise<{ available: number; held: number; sold: number }> {
  const { rows } = await sql<{ available: number; held: number; sold: number }>`
    SELECT count(*) FILTER (WHERE status = 'AVAILABLE' OR (status = 'HELD' AND expires_at <= now()))::int AS available,
           count(*) FILTER (WHERE status = 'HELD' AND expires_at > now())::int AS held,
           count(*) FILTER (WHERE status = 'SOLD')::int AS sold
    FROM seats WHERE event_id = ${eventId}`.execute(db);
  return rows[0]!;
}

/** Creates a console user with a known password (roles other than promoter take no organisation). */
export async function seedUser(db: Db, email: string, role: Role, organisation?: string): Promise<ConsoleUser & { password: string }> {
  const password = `password of ${email}`;
  const { user } = await db.transaction().execute((trx) => createUser(trx, { email, role, organisation, password }, 'test'));
  return { ...user, password };
}

/** A recorded cookie write, for assertions on sign-in and sign-out through createCaller. */
export type CookieWrite = { set: string; expiresAt: Date } | { cleared: true };

/**
 * A tRPC context as the BFF builds one per request, for createCaller: `user` is who is signed in (null: nobody),
 * `csrf` whether the request carried the x-csrf header (the console always sends it).
 */
export function contextFor(
  db: Db,
  user: ConsoleUser | null,
  opts: {
    csrf?: boolean;
    sessionToken?: string;
    accessCodeKey?: TokenKey;
    clientIp?: string;
    rehearsals?: RehearsalLauncher;
    payments?: PaymentProvider;
  } = {},
): Context & { cookieWrites: CookieWrite[] } {
  const cookieWrites: CookieWrite[] = [];
  return {
    db,
    user: user ? { ...user, sessionExpiresAt: new Date(Date.now() + 3600_000) } : null,
    sessionToken: opts.sessionToken ?? null,
    csrfHeader: opts.csrf ?? true,
    sessionCookie: {
      set: (token, expiresAt) => void cookieWrites.push({ set: token, expiresAt }),
      clear: () => void cookieWrites.push({ cleared: true }),
    },
    userAgent: 'vitest',
    clientIp: opts.clientIp ?? null,
    sessionTtlSeconds: 3600,
    signInThrottle: DEFAULT_SIGN_IN_THROTTLE,
    now: () => new Date(),
    ...(opts.accessCodeKey ? { accessCodeKey: opts.accessCodeKey } : {}),
    ...(opts.rehearsals ? { rehearsals: opts.rehearsals } : {}),
    ...(opts.payments ? { payments: opts.payments } : {}),
    cookieWrites,
  };
}

/** A caller of the app router as `user`. */
export const callerAs = (
  db: Db,
  user: ConsoleUser | null,
  opts: { csrf?: boolean; accessCodeKey?: TokenKey; rehearsals?: RehearsalLauncher; payments?: PaymentProvider } = {},
) => appRouter.createCaller(contextFor(db, user, opts));
