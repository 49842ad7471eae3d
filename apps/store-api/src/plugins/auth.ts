import fp from 'fastify-plugin';
import { AccountTokens } from '@onsale/shared/auth';
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
    accountTokens: AccountTokens;
  }
}

/**
 * Fan identity over the whole store namespace, deny by default: every route needs
 * `Authorization: Bearer <account token>` unless it opts out with `config: { public: true }`.
 */
export const authPlugin = fp<{ secret: string }>(async (app, opts) => {
  app.decorate('accountTokens', new AccountTokens(opts.secret));
  app.decorateRequest('accountId', '');
  app.addHook('onRequest', async (req) => {
    if (req.routeOptions.config?.public || !req.routeOptions.url) return;
    const header = req.headers.authorization;
    if (!header) throw new DomainError('unauthenticated', 'MISSING_TOKEN', 'Authorization: Bearer <account token> is required', { field: 'authorization' });
    const m = /^Bearer\s+(\S+)$/i.exec(header);
    if (!m?.[1]) throw new DomainError('unauthenticated', 'INVALID_TOKEN', 'Authorization must be "Bearer <account token>"', { field: 'authorization' });
    req.accountId = await app.accountTokens.verify(m[1]);
  });
}, { name: 'auth' });
