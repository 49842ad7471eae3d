import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Db } from '@onsale/shared/db';
import { ACCOUNT_ID_PATTERN, DISPLAY_NAME_MAX, displayNameFromClaims, ensureAccount, type AccountTokens } from '@onsale/shared/auth';

/** Development sign-in: issues an account token for any account id. Registered only when dev auth is on. */
export const devAuthRoutes: FastifyPluginAsyncZod<{ db: Db; tokens: AccountTokens }> = async (app, { db, tokens }) => {
  app.post(
    '/auth/dev-login',
    {
      config: { public: true },
      schema: {
        tags: ['auth'],
        summary: 'Development sign-in (disabled when NODE_ENV=production)',
        body: z.object({
          accountId: z.string().regex(ACCOUNT_ID_PATTERN, '1-128 of A-Z a-z 0-9 . _ @ : | + -'),
          /** The fan's display name, as an identity provider's `name` claim would give it (support finds fans by it). */
          name: z.string().max(DISPLAY_NAME_MAX).optional(),
        }),
        response: { 200: z.object({ accountId: z.string(), token: z.string(), expiresAt: z.string() }) },
      },
    },
    async (req) => {
      await ensureAccount(db, req.body.accountId, displayNameFromClaims({ name: req.body.name }));
      const { token, expiresAt } = await tokens.issue(req.body.accountId);
      return { accountId: req.body.accountId, token, expiresAt: expiresAt.toISOString() };
    },
  );
};
