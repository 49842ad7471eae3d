import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Role } from './users.schema.js';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

/** A promoter's company: the scope of a promoter's console access (`events.organisation_id`). */
export interface OrganisationsTable {
  id: Generated<string>;
  name: string;
  created_at: CreatedAt;
}

/** Someone who signs in to the console. Not a fan: fans are `accounts`. */
export interface ConsoleUsersTable {
  id: Generated<string>;
  /** Lowercased; unique. */
  email: string;
  /** `scrypt$N=…,r=…,p=…$<salt>$<hash>` (see password.ts). Never leaves the users domain. */
  password_hash: string;
  role: Role;
  /** Set for promoters only (a check constraint says so). */
  organisation_id: string | null;
  /** Who created the user: `cli:<os user>`, `console:<email>`. */
  created_by: string;
  created_at: CreatedAt;
  /** Set while an admin has disabled the user: they cannot sign in and have no session. */
  disabled_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** Who disabled them (an e-mail or `cli:<os user>`). */
  disabled_by: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A signed-in console session. The token itself is only in the browser's cookie; here is its SHA-256. */
export interface ConsoleSessionsTable {
  token_hash: Buffer;
  user_id: string;
  created_at: CreatedAt;
  expires_at: ColumnType<Date, Date | string, Date | string>;
  user_agent: string | null;
}

export type ConsoleUserRow = Selectable<ConsoleUsersTable>;
export type OrganisationRow = Selectable<OrganisationsTable>;

/**
 * A console sign-in attempt that has not succeeded: written before the password is checked (so attempts sent at
 * once are all counted), deleted when the e-mail's password is right. Rows older than the window count for nothing.
 */
export interface SignInFailuresTable {
  id: Generated<string>;
  /** As typed, lowercased: unknown addresses are counted too, so a lockout tells nobody which ones have an account. */
  email: string;
  /** The client's address (an IPv6 address as its /64), or null when unknown. */
  ip: string | null;
  failed_at: ColumnType<Date, Date | string, Date | string>;
}

/** The current (or last) lockout of one e-mail address or client address, and how many came in a row. */
export interface SignInLockoutsTable {
  scope: 'email' | 'ip';
  key: string;
  locked_at: ColumnType<Date, Date | string, Date | string>;
  locked_until: ColumnType<Date, Date | string, Date | string>;
  lockouts: number;
}
