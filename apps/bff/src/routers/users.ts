import { createUser, listUsers, PERMISSIONS, userCreateSchema, type ConsoleUser } from '@onsale/shared/users';
import { roleProcedure, router } from '../trpc.js';

const manageUsers = roleProcedure(...PERMISSIONS['users.manage']);

function userView(u: ConsoleUser) {
  return { id: u.id, email: u.email, role: u.role, organisationName: u.organisationName, createdAt: u.createdAt.toISOString(), createdBy: u.createdBy };
}

export const usersRouter = router({
  /** Every console user (admins only). */
  list: manageUsers.query(async ({ ctx }) => (await listUsers(ctx.db)).map(userView)),

  /**
   * Creates a console user (admins only), validated by the schema the console's form uses. Without a password,
   * one is generated and returned in this answer only.
   */
  create: manageUsers.input(userCreateSchema).mutation(async ({ ctx, input }) => {
    const { user, generatedPassword } = await ctx.db.transaction().execute((trx) => createUser(trx, input, `console:${ctx.user.email}`));
    return { user: userView(user), generatedPassword };
  }),
});
