import { PERMISSIONS, signIn, signInSchema, revokeSession, type Permission, type SessionUser } from '@onsale/shared/users';
import { publicProcedure, router } from '../trpc.js';

/** The signed-in user as the console sees them, with what their role allows (the console hides the rest). */
export function meView(u: SessionUser) {
  return {
    id: u.id,
    email: u.email,
    role: u.role,
    organisationName: u.organisationName,
    sessionExpiresAt: u.sessionExpiresAt.toISOString(),
    permissions: (Object.keys(PERMISSIONS) as Permission[]).filter((p) => (PERMISSIONS[p] as readonly string[]).includes(u.role)),
  };
}

export const authRouter = router({
  /**
   * Checks e-mail and password and sets the httpOnly session cookie. A wrong password or an unknown e-mail is
   * UNAUTHORIZED with domain code INVALID_CREDENTIALS and no cookie. Too many failures for the e-mail or from the
   * client's address: TOO_MANY_REQUESTS (HTTP 429, Retry-After) with domain code SIGN_IN_THROTTLED, no password checked.
   */
  signIn: publicProcedure.input(signInSchema).mutation(async ({ ctx, input }) => {
    const session = await signIn(ctx.db, input, {
      ttlSeconds: ctx.sessionTtlSeconds,
      userAgent: ctx.userAgent,
      ip: ctx.clientIp,
      now: ctx.now(),
      throttle: ctx.signInThrottle,
    });
    // A session cookie already in the browser (another user, or the same one) is replaced; end its session too.
    if (ctx.sessionToken) await revokeSession(ctx.db, ctx.sessionToken);
    ctx.sessionCookie.set(session.token, session.expiresAt);
    return meView(session.user);
  }),

  /** Revokes the session in the database (every BFF instance stops accepting it) and clears the cookie. */
  signOut: publicProcedure.mutation(async ({ ctx }) => {
    const revoked = await revokeSession(ctx.db, ctx.sessionToken);
    ctx.sessionCookie.clear();
    return { signedOut: revoked };
  }),

  /** Who is signed in, or null: the console's route guard asks this. */
  me: publicProcedure.query(({ ctx }) => (ctx.user ? meView(ctx.user) : null)),
});
