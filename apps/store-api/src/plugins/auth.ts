import fp from 'fastify-plugin';
import { AccountTokens, ensureAccount, type FanIdentity } from '@onsale/shared/auth';
import { BoundedCache } from '@onsale/shared/queue';
import type { Db } from '@onsale/shared/db';
import { DomainError } from '@onsale/shared';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in fan; set by the auth hook on every route not marked `config.public`. */
    accountId: string;
  }
  interface FastifyContextConfig {
    /** Opt out of fan authentication by name (event pages, health, docs, dev sign-in). */
    public?: boolean;
  }
  interface FastifyInstance {
    /** The development sign-in's issuer (HS256 on the install's AUTH_SECRET); absent with an identity provider. */
    accountTokens: AccountTokens | null;
  }
}

/**
 * Fan identity over the whole store namespace, deny by default: every route needs
 * `Authorization: Bearer <account token>` unless it opts out with `config: { public: true }`. Tokens are verified
 * by `identity` (the identity provider's key set, or the install's own HS256 secret in development); an account is
 * recorded the first time this process sees it (the provider's fans exist nowhere else until they arrive).
 */
export const authPlugin = fp<{ identity: FanIdentity; devTokens: AccountTokens | null; db: Db }>(async (app, opts) => {
  app.decorate('accountTokens', opts.devTokens);
  app.decorateRequest('accountId', '');
  const known = new BoundedCache<string, true>(200_000);
  app.addHook('onRequest', async (req) => {
    if (req.routeOptions.config?.public || !req.routeOptions.url) return;
    const header = req.headers.authorization;
    if (!header) throw new DomainError('unauthenticated', 'MISSING_TOKEN', 'Authorization: Bearer <account token> is required', { field: 'authorization' });
    const m = /^Bearer\s+(\S+)$/i.exec(header);
    if (!m?.[1]) throw new DomainError('unauthenticated', 'INVALID_TOKEN', 'Authorization must be "Bearer <account token>"', { field: 'authorization' });
    const accountId = await opts.identity.verify(m[1]);
    if (!known.get(accountId)) {
      await ensureAccount(opts.db, accountId);
      known.set(accountId, true);
    }
    req.accountId = accountId;
  });
}, { name: 'auth' });
