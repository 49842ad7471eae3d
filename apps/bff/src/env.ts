import { z } from 'zod';
import { installDataDir, installSecrets } from '@onsale/shared/install';
import type { SignInThrottleConfig } from '@onsale/shared/users';
import { loadSheddingEnvShape } from '@onsale/shared/overload';
import { outboundEnvShape } from '@onsale/shared/notify';

const envSchema = z.object({
  BFF_PORT: z.coerce.number().int().min(0).max(65_535).default(3001),
  // Loopback by default: put it behind a TLS-terminating proxy (and set BFF_SECURE_COOKIES) before facing a network.
  BFF_HOST: z.string().min(1).default('127.0.0.1'),
  // How long a console sign-in lasts (a war-room shift by default).
  BFF_SESSION_HOURS: z.coerce
    .number()
    .min(0.1)
    .max(24 * 14)
    .default(12),
  // The session cookie's Secure flag: browsers then send it over HTTPS only. Defaults to on in production.
  BFF_SECURE_COOKIES: z.enum(['true', 'false']).optional(),
  // Whose X-Forwarded-For the BFF believes for the client's address (sign-in failures count per address): unset
  // (the socket's address), `true`, or addresses / CIDR ranges / `loopback`, comma-separated. Set it behind a proxy,
  // or every sign-in seems to come from the proxy and 50 failures lock everyone out.
  BFF_TRUST_PROXY: z.string().optional(),
  // Console sign-in throttling: failures per e-mail and per client address within the window lock it for a while,
  // and each lockout in a row lasts twice as long (up to the maximum).
  BFF_SIGN_IN_MAX_FAILURES_PER_EMAIL: z.coerce.number().int().min(1).max(1000).default(5),
  BFF_SIGN_IN_MAX_FAILURES_PER_IP: z.coerce.number().int().min(1).max(100_000).default(50),
  BFF_SIGN_IN_WINDOW_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 86_400)
    .default(900),
  BFF_SIGN_IN_LOCKOUT_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 86_400)
    .default(900),
  BFF_SIGN_IN_MAX_LOCKOUT_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .default(86_400),
  NODE_ENV: z.string().default('development'),
  // Optional here because `npm start` may run an embedded PostgreSQL and pass the db in; server.ts requires it.
  DATABASE_URL: z.string().min(1).optional(),
  // Where the built console lives; server.ts defaults it to apps/console/dist.
  CONSOLE_DIR: z.string().min(1).optional(),
  // The store API's base URL(s), comma-separated, one per instance: the war room reads hold latency and sold-out
  // propagation from their /metrics. Unset: those two figures show as not measured.
  STORE_API_URL: z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((u) => u.trim())
        .filter((u) => u !== ''),
    )
    .pipe(z.array(z.url({ protocol: /^https?$/, error: 'each STORE_API_URL must be an http(s) URL' }))),
  // Load shedding: the same settings as the store API's (see loadSheddingEnvShape).
  ...loadSheddingEnvShape,
  // Internal hosts webhooks and alert receivers may name (host names, addresses, CIDR ranges; comma-separated).
  ...outboundEnvShape,
});

/**
 * The checked environment, and the store API's secret for queue-family tokens: the BFF signs presale access codes
 * with it, so the store API (and any edge) accepts them. QUEUE_TOKEN_SECRET, else the install's own (./.data/);
 * required in production.
 */
export type BffEnv = z.infer<typeof envSchema> & { queueTokenSecret: string };

/** The session settings, sign-in throttling and token secret buildBff takes, from the checked environment. */
export function authOptionsOf(env: BffEnv): {
  sessionTtlSeconds: number;
  secureCookies: boolean;
  queueTokenSecret: string;
  signInThrottle: SignInThrottleConfig;
} {
  return {
    sessionTtlSeconds: Math.round(env.BFF_SESSION_HOURS * 3600),
    secureCookies: env.BFF_SECURE_COOKIES ? env.BFF_SECURE_COOKIES === 'true' : env.NODE_ENV === 'production',
    queueTokenSecret: env.queueTokenSecret,
    signInThrottle: {
      maxFailuresPerEmail: env.BFF_SIGN_IN_MAX_FAILURES_PER_EMAIL,
      maxFailuresPerIp: env.BFF_SIGN_IN_MAX_FAILURES_PER_IP,
      windowSeconds: env.BFF_SIGN_IN_WINDOW_SECONDS,
      lockoutSeconds: env.BFF_SIGN_IN_LOCKOUT_SECONDS,
      maxLockoutSeconds: Math.max(env.BFF_SIGN_IN_MAX_LOCKOUT_SECONDS, env.BFF_SIGN_IN_LOCKOUT_SECONDS),
    },
  };
}

/** The BFF's configuration, checked. The only place in the BFF that reads the environment; called, never run at import. */
export function loadBffEnv(source: Record<string, string | undefined> = process.env, opts: { dataDir?: string } = {}): BffEnv {
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new Error(`invalid BFF environment:\n${lines}`);
  }
  const { queueTokenSecret } = installSecrets(opts.dataDir ?? installDataDir(), source, {
    optional: ['authSecret', 'cardFingerprintSecret'],
  });
  return { ...parsed.data, queueTokenSecret };
}
