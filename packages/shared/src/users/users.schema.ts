// Console users: roles, what each may do, and the input schemas. Zod only, no Node built-ins: the console
// imports this file (`@onsale/shared/users/schema`) to validate its forms with the very schemas the BFF uses.
import { z } from 'zod';
import '../words/zod-messages.js';

/** Console roles, most powerful first. */
export const ROLES = ['admin', 'operator', 'promoter', 'viewer', 'scanner'] as const;
export type Role = (typeof ROLES)[number];

/** One line per role, for the console and the CLI. */
export const ROLE_DESCRIPTIONS: Record<Role, string> = {
  admin: 'manages console users; everything an operator and a promoter can do, for every event',
  operator:
    'war-room controls (pause, resume, rate override), fan support, order cancellations, the post-sale review and webhooks for every event; reads everything',
  promoter: 'configures and reads only the events of their own organisation',
  viewer: 'reads every event; changes nothing',
  scanner: 'door staff: makes scanner tokens and scans tickets at the door of any event; reads nothing else',
};

/**
 * What a role may do. The BFF builds its procedures from this table and the console hides what it denies, so
 * the two cannot disagree. Promoters are further limited to their organisation's events (see `canSeeEvent`).
 */
export const PERMISSIONS = {
  /** List and create console users. */
  'users.manage': ['admin'],
  /** Read events, inventory, the war room and the audit. */
  'events.read': ['admin', 'operator', 'promoter', 'viewer'],
  /** Create and edit events and their on-sale settings. */
  'events.configure': ['admin', 'promoter'],
  /** Pause and resume the queue, override the admission rate, run rehearsals. */
  'warroom.control': ['admin', 'operator'],
  /** Roll a presale tier's unsold seats forward now (a promoter: their organisation's events only). */
  'tiers.roll': ['admin', 'operator', 'promoter'],
  /** Issue a presale tier's access codes (a promoter: their organisation's events only). */
  'tiers.codes': ['admin', 'promoter'],
  /** Run a registration lottery's draw (a promoter: their organisation's events only). */
  'lottery.draw': ['admin', 'operator', 'promoter'],
  /** Look a fan account up (queue positions, holds, orders, waitlist, notifications). */
  'support.read': ['admin', 'operator'],
  /** Release a fan's hold; block or unblock an account from an event. */
  'support.act': ['admin', 'operator'],
  /** Cancel a confirmed order (its seats come back, to the waitlist after a sell-out). */
  'orders.cancel': ['admin', 'operator'],
  /** Add rows of seats to an event on sale (a promoter: their organisation's events only). */
  'inventory.add': ['admin', 'operator', 'promoter'],
  /** Read the post-sale review (orders clustered by shared card, device and account signals). */
  'review.read': ['admin', 'operator'],
  /** Cancel every order of a review cluster. */
  'review.cancel': ['admin', 'operator'],
  /** Add, disable and enable webhook endpoints; read and redeliver their deliveries. */
  'webhooks.manage': ['admin', 'operator'],
  /** Read ticket counts (issued, delivered, transferred, listed, resold, scanned) in the war room and the post-sale review. */
  'tickets.read': ['admin', 'operator', 'promoter', 'viewer'],
  /** Fan support for tickets: find an order's tickets, reissue one to a new device. */
  'tickets.support': ['admin', 'operator'],
  /** Make a scanner token for an event's door (the console's scanner page). */
  'tickets.scan': ['admin', 'operator', 'scanner'],
} as const satisfies Record<string, readonly Role[]>;
export type Permission = keyof typeof PERMISSIONS;

/** Whether `role` may do `permission` at all (for a promoter, only on their organisation's events). */
export function can(role: Role, permission: Permission): boolean {
  return (PERMISSIONS[permission] as readonly Role[]).includes(role);
}

/**
 * Whether a user sees an event. Admins, operators and viewers see every event, including house events with no
 * organisation; a promoter sees only the events whose organisation is theirs.
 */
export function canSeeEvent(user: { role: Role; organisationId: string | null }, event: { organisationId: string | null }): boolean {
  if (user.role !== 'promoter') return true;
  return user.organisationId !== null && event.organisationId === user.organisationId;
}

export const emailSchema = z
  .string({ error: 'enter an e-mail address' })
  .trim()
  .toLowerCase()
  .max(254, 'at most 254 characters')
  .pipe(z.email({ error: 'not an e-mail address' }));

/** A new password: long rather than clever (NIST 800-63B); no composition rules. */
export const PASSWORD_MIN_LENGTH = 12;
export const passwordSchema = z
  .string({ error: 'enter a password' })
  .min(PASSWORD_MIN_LENGTH, `at least ${PASSWORD_MIN_LENGTH} characters`)
  .max(256, 'at most 256 characters');

export const roleSchema = z.enum(ROLES, { error: `one of ${ROLES.join(', ')}` });

export const organisationNameSchema = z
  .string({ error: 'enter an organisation name' })
  .trim()
  .min(1, 'enter an organisation name')
  .max(120, 'at most 120 characters');

// Form fields arrive as '' when left empty; that means "not given".
const emptyAsUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

/**
 * A new console user. `organisation` (a name; created if new) is required for a promoter and refused for the
 * other roles. `password` may be left out: the service then generates one and returns it once.
 */
export const userCreateSchema = z
  .object({
    email: emailSchema,
    role: roleSchema,
    organisation: z.preprocess(emptyAsUndefined, organisationNameSchema.optional()),
    password: z.preprocess(emptyAsUndefined, passwordSchema.optional()),
  })
  .superRefine((u, ctx) => {
    if (u.role === 'promoter' && u.organisation === undefined)
      ctx.addIssue({ code: 'custom', path: ['organisation'], message: 'a promoter needs an organisation' });
    if (u.role !== 'promoter' && u.organisation !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['organisation'],
        message: `only promoters belong to an organisation; a ${u.role} sees every event`,
      });
  });
export type UserCreateInput = z.input<typeof userCreateSchema>;
export type UserCreate = z.output<typeof userCreateSchema>;

const userId = z.string({ error: 'choose a user' }).trim().min(1, 'choose a user').max(100, 'at most 100 characters');

/**
 * A new role for a console user. A promoter needs the organisation whose events they will configure (created if
 * new); the other roles see every event and take none.
 */
export const userRoleChangeSchema = z
  .object({
    userId,
    role: roleSchema,
    organisation: z.preprocess(emptyAsUndefined, organisationNameSchema.optional()),
  })
  .superRefine((u, ctx) => {
    if (u.role === 'promoter' && u.organisation === undefined)
      ctx.addIssue({ code: 'custom', path: ['organisation'], message: 'a promoter needs an organisation' });
    if (u.role !== 'promoter' && u.organisation !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['organisation'],
        message: `only promoters belong to an organisation; a ${u.role} sees every event`,
      });
  });
export type UserRoleChangeInput = z.input<typeof userRoleChangeSchema>;

/** An admin sets a user's password: the one given, or (left empty) a generated one shown once. */
export const passwordResetSchema = z.object({
  userId,
  password: z.preprocess(emptyAsUndefined, passwordSchema.optional()),
});
export type PasswordResetInput = z.input<typeof passwordResetSchema>;

/** Disable, enable, or end every session of a user. */
export const userIdSchema = z.object({ userId });

/** A signed-in user changes their own password: the current one proves it is them. */
export const ownPasswordChangeSchema = z
  .object({
    currentPassword: z
      .string({ error: 'enter your current password' })
      .min(1, 'enter your current password')
      .max(256, 'at most 256 characters'),
    newPassword: passwordSchema,
  })
  .superRefine((p, ctx) => {
    if (p.currentPassword === p.newPassword)
      ctx.addIssue({ code: 'custom', path: ['newPassword'], message: 'choose a password different from the current one' });
  });
export type OwnPasswordChangeInput = z.input<typeof ownPasswordChangeSchema>;

/** Sign-in takes any non-empty password: the policy applies when one is set, not when one is tried. */
export const signInSchema = z.object({
  email: z
    .string({ error: 'enter your e-mail address' })
    .trim()
    .toLowerCase()
    .min(1, 'enter your e-mail address')
    .max(254, 'at most 254 characters'),
  password: z.string({ error: 'enter your password' }).min(1, 'enter your password').max(256, 'at most 256 characters'),
});
export type SignIn = z.output<typeof signInSchema>;

/** Zod issues as `{ field, message }`, the first per field, for showing each at its field. */
export function fieldErrors(error: z.ZodError): Record<string, string> {
  const out: Record<string, string> = {};
  for (const i of error.issues) {
    const field = i.path.map(String).join('.') || '(root)';
    out[field] ??= i.message;
  }
  return out;
}
