import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '@onsale/shared/db';
import type { TokenKey } from '@onsale/shared/queue';
import type { WarRoomHub } from '@onsale/shared/warroom';
import type { OutboundPolicy } from '@onsale/shared/notify';
import type { PaymentProvider } from '@onsale/shared/checkout';
import {
  DEFAULT_SESSION_TTL_SECONDS,
  DEFAULT_SIGN_IN_THROTTLE,
  verifySession,
  type SessionUser,
  type SignInThrottleConfig,
} from '@onsale/shared/users';
import { TRPCError } from '@trpc/server';
import { databaseFaultOf } from '@onsale/shared/db';
import { DomainError } from '@onsale/shared';
import type { RehearsalLauncher } from './rehearsals.js';

/** The console's session cookie: httpOnly, SameSite=Strict, path /. Holds the random token; the database keeps its hash. */
export const SESSION_COOKIE = 'onsale_console_session';

/** The header every tRPC mutation must carry (see `csrfGuard` in trpc.ts). The console sends `x-csrf: 1`. */
export const CSRF_HEADER = 'x-csrf';

/** Writes and clears the session cookie: the only thing procedures may do to the HTTP response. */
export interface SessionCookie {
  set(token: string, expiresAt: Date): void;
  clear(): void;
}

/** What every procedure may use. Built from injected deps so tests pass their own database; routers import no singletons. */
export interface Context {
  db: Db;
  /** The signed-in console user, or null (no cookie, or an unknown, expired or revoked session). */
  user: SessionUser | null;
  /** The session token from the cookie as sent, for sign-out. */
  sessionToken: string | null;
  /** Whether the request carried the anti-CSRF header; mutations are refused without it. */
  csrfHeader: boolean;
  sessionCookie: SessionCookie;
  userAgent: string | null;
  /** The client's address (Fastify's `req.ip`: the socket's, or X-Forwarded-For's under `trustProxy`); sign-in failures count per address. */
  clientIp: string | null;
  sessionTtlSeconds: number;
  /** How console sign-in is throttled (failures per e-mail and per address, lockout lengths). */
  signInThrottle: SignInThrottleConfig;
  /** The clock sign-in throttling reads (tests move it instead of waiting out a window). */
  now: () => Date;
  /** The process's one reader of war-room figures (absent in createCaller tests: the router then makes a private one). */
  warRoom?: WarRoomHub;
  /** The key presale access codes are signed with (the store API's queue token secret); absent: codes cannot be issued. */
  accessCodeKey?: TokenKey;
  /** Starts rehearsals against the product (`npm start` gives one); absent: the console can read reports but not start one. */
  rehearsals?: RehearsalLauncher;
  /** Which receiver addresses webhooks and alert receivers may have (WEBHOOK_ALLOW_HOSTS); absent: public ones only. */
  outbound?: OutboundPolicy;
  /** The payment provider refunds go through; absent: the simulated gateway the store API charges with (its table). */
  payments?: PaymentProvider;
}

export interface AuthOptions {
  /** How long a console session lives (default 12 hours). */
  sessionTtlSeconds?: number;
  /** Mark the cookie Secure (HTTPS only). On in production; off for http://127.0.0.1 in development and tests. */
  secureCookies?: boolean;
  /** The store API's QUEUE_TOKEN_SECRET: presale access codes issued here are signed with it. */
  queueTokenSecret?: string;
  /** Sign-in throttling; unset fields take DEFAULT_SIGN_IN_THROTTLE's (5 per e-mail, 50 per address, 15 minutes). */
  signInThrottle?: Partial<SignInThrottleConfig>;
}

export interface BffDeps {
  db: Db;
  auth?: AuthOptions;
  warRoom?: WarRoomHub;
  accessCodeKey?: TokenKey;
  rehearsals?: RehearsalLauncher;
  /** The clock sign-in throttling reads; the wall clock unless a test passes its own. */
  clock?: () => Date;
  outbound?: OutboundPolicy;
  payments?: PaymentProvider;
}

/** One context per request (one per batch): reads the session cookie and resolves the user from PostgreSQL. */
export function createContextFactory(deps: BffDeps): (opts: { req: FastifyRequest; res: FastifyReply }) => Promise<Context> {
  const ttl = deps.auth?.sessionTtlSeconds ?? DEFAULT_SESSION_TTL_SECONDS;
  const signInThrottle = { ...DEFAULT_SIGN_IN_THROTTLE, ...deps.auth?.signInThrottle };
  const now = deps.clock ?? (() => new Date());
  const cookieOptions = { path: '/', httpOnly: true, sameSite: 'strict', secure: deps.auth?.secureCookies ?? false } as const;
  return async ({ req, res }) => {
    // Shed under overload (load-shedding.ts): answered before the session is read, so it costs the database nothing.
    if (req.shed)
      throw new TRPCError({
        code: 'SERVICE_UNAVAILABLE',
        message: req.shed.message,
        cause: new DomainError('unavailable', 'SERVICE_UNAVAILABLE', req.shed.message, {
          retryAfterSeconds: req.shed.retryAfterSeconds,
          reason: req.shed.reason,
        }),
      });
    const sessionToken = req.cookies[SESSION_COOKIE] ?? null;
    const csrf = req.headers[CSRF_HEADER];
    return {
      db: deps.db,
      user: await verifySession(deps.db, sessionToken).catch((err: unknown) => {
        // The database is down: the console is told to retry (503), not that something broke (500).
        if (databaseFaultOf(err))
          throw new TRPCError({
            code: 'SERVICE_UNAVAILABLE',
            message: 'the database is briefly unavailable; retry in a few seconds',
            cause: err,
          });
        throw err;
      }),
      sessionToken,
      csrfHeader: typeof csrf === 'string' && csrf.length > 0,
      sessionCookie: {
        set: (token, expiresAt) => void res.setCookie(SESSION_COOKIE, token, { ...cookieOptions, expires: expiresAt }),
        clear: () => void res.clearCookie(SESSION_COOKIE, cookieOptions),
      },
      userAgent: req.headers['user-agent'] ?? null,
      clientIp: req.ip || null,
      sessionTtlSeconds: ttl,
      signInThrottle,
      now,
      ...(deps.warRoom ? { warRoom: deps.warRoom } : {}),
      ...(deps.accessCodeKey ? { accessCodeKey: deps.accessCodeKey } : {}),
      ...(deps.rehearsals ? { rehearsals: deps.rehearsals } : {}),
      ...(deps.outbound ? { outbound: deps.outbound } : {}),
      ...(deps.payments ? { payments: deps.payments } : {}),
    };
  };
}
