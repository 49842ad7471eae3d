import fp from 'fastify-plugin';
import { AccountRecorder, AccountTokens, type FanIdentity } from '@onsale/shared/auth';
import { BoundedCache } from '@onsale/shared/queue';
import type { Db } from '@onsale/shared/db';
import { DomainError } from '@onsale/shared';
import { routeOf } from './route-of.js';
import { JOIN_ROUTE_KEY } from '../routes/queue/join-checks.js';

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
    /**
     * The fan an Authorization header signs in, as the auth hook finds it (recorded the first time this process sees
     * it): for requests run without a request of their own (the edge's joins). Throws (or rejects with) the hook's
     * errors: MISSING_TOKEN, INVALID_TOKEN, the identity's token errors.
     */
    fanAccount: (authorization: string | undefined) => string | Promise<string>;
  }
}

/**
 * Fan identity over the whole store namespace, deny by default: every route needs
 * `Authorization: Bearer <account token>` unless it opts out with `config: { public: true }`. Tokens are verified
 * by `identity` (the identity provider's key set, or the install's own HS256 secret in development); an account is
 * recorded the first time this process sees it (the provider's fans exist nowhere else until they arrive), with the
 * display name its token carries, the new accounts of requests arriving together in one statement.
 */
export const authPlugin = fp<{ identity: FanIdentity; devTokens: AccountTokens | null; db: Db }>(
  async (app, opts) => {
    app.decorate('accountTokens', opts.devTokens);
    app.decorateRequest('accountId', '');
    const known = new BoundedCache<string, true>(200_000);
    const accounts = new AccountRecorder(opts.db);
    // The install's own tokens are verified synchronously (each verified once, its expiry checked every time); a
    // fan this process already knows then passes without a promise, which is most of the cost of a status poll's hook.
    const devIdentity = opts.identity instanceof AccountTokens ? opts.identity : null;
    const accountOf = (header: string | undefined): string | Promise<string> => {
      if (!header)
        throw new DomainError('unauthenticated', 'MISSING_TOKEN', 'Authorization: Bearer <account token> is required', {
          field: 'authorization',
        });
      const m = /^Bearer\s+(\S+)$/i.exec(header);
      if (!m?.[1])
        throw new DomainError('unauthenticated', 'INVALID_TOKEN', 'Authorization must be "Bearer <account token>"', {
          field: 'authorization',
        });
      return devIdentity ? devIdentity.verifySync(m[1]) : opts.identity.verify(m[1]);
    };
    const remember = async (authorization: string | undefined, pending: string | Promise<string>) => {
      const accountId = await pending;
      if (!known.get(accountId)) {
        // The display name the token carries (an identity provider's `name` claim) goes with the account, for support.
        const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
        await accounts.record(accountId, (token && opts.identity.displayName?.(token)) || null);
        known.set(accountId, true);
      }
      return accountId;
    };
    app.decorate('fanAccount', (authorization: string | undefined) => {
      const account = accountOf(authorization);
      return typeof account === 'string' && known.get(account) ? account : remember(authorization, account);
    });
    app.addHook('onRequest', (req, _reply, done) => {
      const route = routeOf(req);
      // The join route checks its account itself, in its checks' order (routes/queue/join-checks.ts: fanAccount).
      if (route.public || !route.url || route.key === JOIN_ROUTE_KEY) return done();
      let account: string | Promise<string>;
      try {
        account = accountOf(req.headers.authorization);
      } catch (e) {
        return done(e as Error);
      }
      if (typeof account === 'string' && known.get(account)) {
        req.accountId = account;
        return done();
      }
      remember(req.headers.authorization, account).then((accountId) => {
        req.accountId = accountId;
        done();
      }, done);
    });
  },
  { name: 'auth' },
);
