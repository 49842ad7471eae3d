import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import fastifyHelmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import { fastifyTRPCPlugin, type FastifyTRPCPluginOptions } from '@trpc/server/adapters/fastify';
import { DomainError } from '@onsale/shared';
import { databaseFaultOf, ping, poolOf, type Db } from '@onsale/shared/db';
import type { LoadSheddingConfig } from '@onsale/shared/overload';
import { createNodeTokenKey } from '@onsale/shared/queue';
import { StoreMetricsScraper, WarRoomHub } from '@onsale/shared/warroom';
import { createContextFactory, type AuthOptions } from './context.js';
import { appRouter, type AppRouter } from './root.js';
import { bffLoadShedding } from './load-shedding.js';
import type { RehearsalLauncher } from './rehearsals.js';
import type { OutboundPolicy } from '@onsale/shared/notify';
import type { PaymentProvider } from '@onsale/shared/checkout';

export interface BuildBffDeps {
  db: Db;
  /** Absolute path of the console's Vite build (apps/console/dist). Served with an SPA fallback when it exists. */
  consoleDir?: string;
  logger?: boolean;
  /** Session lifetime and the cookie's Secure flag (from BFF_SESSION_HOURS and BFF_SECURE_COOKIES). */
  auth?: AuthOptions;
  /** Store-API base URLs whose /metrics the war room scrapes for hold latency and sold-out propagation (STORE_API_URL). */
  storeApiUrls?: string[];
  /** War-room tick in ms (default 1000). */
  warRoomTickMs?: number;
  /** A war-room hub to use instead of the app's own (tests watch its streams come and go); the caller closes it. */
  warRoom?: WarRoomHub;
  /** Fastify's trustProxy (BFF_TRUST_PROXY): whose X-Forwarded-For gives the client's address, which sign-in throttling counts by. */
  trustProxy?: boolean | string[];
  /**
   * The clock sign-in throttling reads, and the war room judges each event's state by (tests pass one they move, the
   * one their admission controller ticks on); the wall clock and the database's by default.
   */
  clock?: () => Date;
  /** Load shedding (LOAD_SHED_* settings, loadSheddingConfigOf); unset or null: none. */
  loadShedding?: LoadSheddingConfig;
  /** Starts rehearsals from the console (cliRehearsalLauncher); unset: reports can be read, none started. */
  rehearsals?: RehearsalLauncher;
  /** Which internal receivers webhooks and alert receivers may name (WEBHOOK_ALLOW_HOSTS, outboundPolicyOf); unset: public addresses only. */
  outbound?: OutboundPolicy;
  /** The payment provider support's refunds go through; unset: the simulated gateway the store API charges with. */
  payments?: PaymentProvider;
}

/** The operator/promoter backend: tRPC at /trpc, /healthz, and the built console. Not listening yet. */
export async function buildBff(deps: BuildBffDeps): Promise<FastifyInstance> {
  // Long batched tRPC URLs exceed Fastify's default 100-character parameter limit (414 otherwise).
  const app = Fastify({ logger: deps.logger ?? false, routerOptions: { maxParamLength: 5000 }, trustProxy: deps.trustProxy ?? false });

  // First of all: an overloaded process answers 503 + Retry-After at once, the heavy reports first and the war
  // room's figures and controls last.
  if (deps.loadShedding) {
    let pool: { waitingCount: number } | null;
    try {
      pool = poolOf(deps.db);
    } catch {
      pool = null;
    }
    await app.register(bffLoadShedding, { ...deps.loadShedding, poolWaiting: () => (pool ? pool.waitingCount : null) });
  }

  // Unsigned cookies: the session token is 256 random bits checked against PostgreSQL, so a signature adds nothing.
  await app.register(fastifyCookie);

  // Security headers on every answer: a CSP that lets the console (a Vite build: its own scripts and styles only)
  // run and nothing else, no framing (clickjacking on the war room's controls), nosniff, no referrer leaving the site.
  // HSTS and upgrade-insecure-requests only when the console is served over HTTPS (secure cookies).
  const https = deps.auth?.secureCookies === true;
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        'default-src': ["'self'"],
        'script-src': ["'self'"],
        'script-src-attr': ["'none'"],
        // React and Recharts set style attributes; the look editor previews logos from https addresses and uploads.
        'style-src': ["'self'", "'unsafe-inline'"],
        'img-src': ["'self'", 'data:', 'blob:', 'https:'],
        'font-src': ["'self'", 'data:'],
        'connect-src': ["'self'"],
        'object-src': ["'none'"],
        'base-uri': ["'self'"],
        'form-action': ["'self'"],
        'frame-ancestors': ["'none'"],
        ...(https ? { 'upgrade-insecure-requests': [] } : {}),
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'same-origin' },
    hsts: https ? { maxAge: 31_536_000, includeSubDomains: true } : false,
    crossOriginEmbedderPolicy: false,
  });

  // One war-room reader per process, shared by every open stream; it reads only while someone watches.
  const warRoom =
    deps.warRoom ??
    new WarRoomHub({
      db: deps.db,
      ...(deps.storeApiUrls?.length ? { storeMetrics: new StoreMetricsScraper({ urls: deps.storeApiUrls }) } : {}),
      ...(deps.warRoomTickMs ? { tickMs: deps.warRoomTickMs } : {}),
      ...(deps.clock ? { clock: () => deps.clock!().getTime() } : {}),
      onError: (err) => app.log.warn({ err }, 'war room: figures could not be read'),
    });
  if (!deps.warRoom) app.addHook('onClose', () => warRoom.close());
  // Rehearsals started from this console stop with it (each records itself as stopped).
  if (deps.rehearsals) app.addHook('onClose', () => deps.rehearsals!.close());

  // Presale access codes are signed with the store API's token secret, so the store API (and an edge) accepts them.
  const accessCodeKey = deps.auth?.queueTokenSecret ? await createNodeTokenKey(deps.auth.queueTokenSecret) : undefined;

  await app.register(fastifyTRPCPlugin, {
    prefix: '/trpc',
    trpcOptions: {
      router: appRouter,
      createContext: createContextFactory({
        db: deps.db,
        warRoom,
        ...(deps.auth ? { auth: deps.auth } : {}),
        ...(accessCodeKey ? { accessCodeKey } : {}),
        ...(deps.clock ? { clock: deps.clock } : {}),
        ...(deps.rehearsals ? { rehearsals: deps.rehearsals } : {}),
        ...(deps.outbound ? { outbound: deps.outbound } : {}),
        ...(deps.payments ? { payments: deps.payments } : {}),
      }),
      // A refusal that says when to come back (a sign-in lockout, the database briefly away) says it in Retry-After too.
      responseMeta({ errors }) {
        const seconds = errors
          .map((e) => (e.cause instanceof DomainError ? e.cause.details.retryAfterSeconds : undefined))
          .filter((v): v is number => typeof v === 'number');
        return seconds.length > 0 ? { headers: { 'retry-after': String(Math.max(...seconds)) } } : {};
      },
      onError({ error, path, req }) {
        if (error.code === 'INTERNAL_SERVER_ERROR') req.log.error({ err: error.cause ?? error, path }, 'tRPC procedure failed');
      },
    } satisfies FastifyTRPCPluginOptions<AppRouter>['trpcOptions'],
  });

  app.get('/healthz', async (_req, reply) => {
    try {
      await ping(deps.db);
      return { status: 'ok' };
    } catch (err) {
      app.log.warn({ err }, 'health check: database unreachable');
      return reply.code(503).header('retry-after', '5').send({ status: 'unavailable' });
    }
  });

  const consoleDir = deps.consoleDir && existsSync(join(deps.consoleDir, 'index.html')) ? deps.consoleDir : undefined;
  if (deps.consoleDir && !consoleDir) app.log.warn({ consoleDir: deps.consoleDir }, 'console not built; run `pnpm build` to serve it');
  if (consoleDir) {
    await app.register(fastifyStatic, {
      root: consoleDir,
      prefix: '/',
      cacheControl: false,
      // The build writes .br and .gz beside each file (apps/console/vite.config.ts): sent to a browser that accepts them.
      preCompressed: true,
      setHeaders(reply, path) {
        // Vite fingerprints everything under assets/, so those never change; index.html must always be revalidated.
        const immutable = path.startsWith(join(consoleDir, 'assets'));
        reply.header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    });
  }

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '/';
    // Client-side routes (/events/…) are the SPA's: give them index.html. Missing files and API paths stay 404.
    const isPage = (req.method === 'GET' || req.method === 'HEAD') && !path.startsWith('/trpc') && !/\.[a-z0-9]+$/i.test(path);
    if (consoleDir && isPage) return reply.header('cache-control', 'no-cache').sendFile('index.html');
    return reply.code(404).send({ error: 'NOT_FOUND', message: `no route ${req.method} ${path}` });
  });

  // Fastify's own errors (bad JSON, too large) keep their 4xx message; anything else is logged and masked.
  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 ? err.statusCode : 500;
    if (status >= 500 && databaseFaultOf(err))
      return reply
        .code(503)
        .header('retry-after', '5')
        .send({ error: 'SERVICE_UNAVAILABLE', message: 'the database is briefly unavailable; retry in a few seconds' });
    if (status >= 500) {
      req.log.error({ err }, 'request failed');
      return reply.code(status).send({ error: 'INTERNAL', message: 'Internal server error' });
    }
    return reply.code(status).send({ error: err.code ?? 'BAD_REQUEST', message: err.message });
  });

  return app;
}
export { cliRehearsalLauncher, type RehearsalLauncher } from './rehearsals.js';
