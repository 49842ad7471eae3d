import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { TEST_CARDS } from '@onsale/shared/checkout';
import type { StoreApiConfig } from '../../env.js';

export interface FanPageDeps {
  config: StoreApiConfig;
}

/** The page's CSP: its own scripts and API only; images from anywhere on https (the promoter's logo); the identity provider's endpoints. */
function contentSecurityPolicy(config: StoreApiConfig): string {
  const oidc = config.fan.oidc ? ` ${new URL(config.fan.oidc.issuer).origin} https:` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "worker-src 'self'",
    "style-src 'self'",
    "img-src 'self' https: data:",
    `connect-src 'self'${oidc}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

/**
 * The fans' page: `GET /fan/config` (how fans sign in here), and when the build is there (FAN_DIR), the page at
 * `/e/:eventId` (the link a promoter publishes; revalidated by browsers on every load, kept by an edge in front for
 * FAN_PAGE_EDGE_CACHE_SECONDS) with its
 * fingerprinted assets under `/e/assets/` (cached for a year: their names change with their content).
 */
export const fanRoutes: FastifyPluginAsyncZod<FanPageDeps> = async (app, { config }) => {
  app.get(
    '/fan/config',
    {
      config: { public: true },
      schema: {
        tags: ['fan page'],
        summary:
          "How fans sign in on this install (development sign-in, the promoter's OpenID Connect provider) and, in development, the test cards",
        security: [],
        response: {
          200: z.object({
            devSignIn: z.boolean(),
            oidc: z
              .object({
                issuer: z.string(),
                clientId: z.string(),
                scope: z.string(),
                audience: z.string().nullable(),
                useToken: z.enum(['id_token', 'access_token']),
                redirectPath: z.string(),
              })
              .nullable(),
            testCards: z.array(z.object({ number: z.string(), outcome: z.enum(['success', 'declined']) })).nullable(),
          }),
        },
      },
    },
    async (_req, reply) => {
      reply.header('cache-control', 'public, max-age=60');
      return {
        devSignIn: config.devAuth,
        oidc: config.fan.oidc,
        // The simulated gateway's published test cards, listed on the page except in production.
        testCards:
          config.nodeEnv === 'production'
            ? null
            : [
                { number: TEST_CARDS.success, outcome: 'success' as const },
                { number: TEST_CARDS.declined, outcome: 'declined' as const },
              ],
      };
    },
  );

  const dir = config.fan.dir;
  if (!dir || !existsSync(join(dir, 'index.html'))) {
    if (dir) app.log.warn({ fanDir: dir }, 'the fans\u2019 page is not built; run `npm run build`');
    return;
  }
  const index = readFileSync(join(dir, 'index.html'));
  const csp = contentSecurityPolicy(config);
  const page = { config: { public: true }, schema: { hide: true, params: z.object({ eventId: z.string().max(200) }) } };
  // Browsers revalidate the page on every load (a new build reaches them at once); a shared cache in front (the
  // edge, a CDN) may keep it for FAN_PAGE_EDGE_CACHE_SECONDS (RFC 9213's CDN-Cache-Control, which browsers ignore),
  // so an on-sale's opening crowd loads it from the edge, and a new build reaches them within that time.
  const edgeCache = config.fan.edgeCacheSeconds > 0 ? `public, max-age=${config.fan.edgeCacheSeconds}` : 'no-store';
  app.get('/e/:eventId', page, async (_req, reply) =>
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('cdn-cache-control', edgeCache)
      .header('content-security-policy', csp)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .send(index),
  );
  await app.register(fastifyStatic, {
    root: join(dir, 'assets'),
    prefix: '/e/assets/',
    decorateReply: false,
    // The build writes .br and .gz beside each asset: sent as they are to browsers that accept them.
    preCompressed: true,
    cacheControl: false,
    schemaHide: true,
    setHeaders(res) {
      res.header('cache-control', 'public, max-age=31536000, immutable');
      res.header('x-content-type-options', 'nosniff');
    },
  });
};
