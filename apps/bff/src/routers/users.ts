import {
  changeOwnPassword,
  changeUserRole,
  createUser,
  listUsers,
  liveSessionCounts,
  ownPasswordChangeSchema,
  passwordResetSchema,
  PERMISSIONS,
  resetUserPassword,
  setUserEnabled,
  signOutEverywhere,
  userCreateSchema,
  userIdSchema,
  userRoleChangeSchema,
  type ConsoleUser,
} from '@onsale/shared/users';
import { authedProcedure, roleProcedure, router } from '../trpc.js';

const manageUsers = roleProcedure(...PERMISSIONS['users.manage']);

function userView(u: ConsoleUser, sessions = 0) {
  return {
    id: u.id,
    email: u.email,
    role: u.role,
    organisationName: u.organisationName,
    createdAt: u.createdAt.toISOString(),
    createdBy: u.createdBy,
    disabledAt: u.disabledAt?.toISOString() ?? null,
    disabledBy: u.disabledBy,
    liveSessions: sessions,
  };
}

const by = (u: { id: string; email: string }) => ({ id: u.id, email: u.email });

// Admins manage users (the domain refuses locking the console out: the last admin, yourself); anyone changes their
// own password. Every change is audited with the admin's e-mail.
export const usersRouter = router({
  /** Every console user (admins only), with whether they may sign in and how many sessions they have open. */
  list: manageUsers.query(async ({ ctx }) => {
    const [users, sessions] = await Promise.all([listUsers(ctx.db), liveSessionCounts(ctx.db)]);
    return users.map((u) => userView(u, sessions.get(u.id) ?? 0));
  }),

  /**
   * Creates a console user (admins only), validated by the schema the console's form uses. Without a password,
   * one is generated and returned in this answer only.
   */
  create: manageUsers.input(userCreateSchema).mutation(async ({ ctx, input }) => {
    const { user, generatedPassword } = await ctx.db.transaction().execute((trx) => createUser(trx, input, `console:${ctx.user.email}`));
    return { user: userView(user), generatedPassword };
  }),

  /** Disables a user: no sign-in, every session ended. SELF_DISABLE, LAST_ADMIN. */
  disable: manageUsers.input(userIdSchema).mutation(async ({ ctx, input }) => {
    const r = await ctx.db.transaction().execute((trx) => setUserEnabled(trx, input, false, by(ctx.user)));
    return { user: userView(r.user), sessionsEnded: r.sessionsEnded };
  }),

  /** Lets a disabled user sign in again. */
  enable: manageUsers.input(userIdSchema).mutation(async ({ ctx, input }) => {
    const r = await ctx.db.transaction().execute((trx) => setUserEnabled(trx, input, true, by(ctx.user)));
    return { user: userView(r.user) };
  }),

  /** Another role (a promoter with an organisation); it applies to the user's next request. SELF_ROLE_CHANGE, LAST_ADMIN. */
  changeRole: manageUsers
    .input(userRoleChangeSchema)
    .mutation(async ({ ctx, input }) => userView(await ctx.db.transaction().execute((trx) => changeUserRole(trx, input, by(ctx.user))))),

  /** Sets a user's password (generated and returned once when none is given); their sessions end. */
  resetPassword: manageUsers.input(passwordResetSchema).mutation(async ({ ctx, input }) => {
    const r = await ctx.db.transaction().execute((trx) => resetUserPassword(trx, input, by(ctx.user)));
    return { user: userView(r.user), generatedPassword: r.generatedPassword, sessionsEnded: r.sessionsEnded };
  }),

  /** Ends every session of a user, wherever it is open. */
  signOutEverywhere: manageUsers
    .input(userIdSchema)
    .mutation(({ ctx, input }) => ctx.db.transaction().execute((trx) => signOutEverywhere(trx, input, by(ctx.user)))),

  /** Any signed-in user: their own password, proved by the current one; their other sessions end. */
  changeOwnPassword: authedProcedure
    .input(ownPasswordChangeSchema)
    .mutation(({ ctx, input }) => ctx.db.transaction().execute((trx) => changeOwnPassword(trx, ctx.user.id, input, ctx.sessionToken))),
});
