import { z } from 'zod';

const bool = z
  .enum(['true', 'false', '1', '0'])
  .transform((v) => v === 'true' || v === '1');

const schema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  STORE_API_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  STORE_API_HOST: z.string().default('127.0.0.1'),
  DATABASE_URL: z.string().url().optional(),
  /** Secret for account tokens; required in production, a fixed development value otherwise. */
  AUTH_SECRET: z.string().min(32).optional(),
  /** Secret for queue and admission tokens (shared with edges that verify them); required in production. */
  QUEUE_TOKEN_SECRET: z.string().min(32).optional(),
  /** Development sign-in (POST /auth/dev-login); off in production unless set explicitly. */
  DEV_AUTH: bool.optional(),
  // Small on purpose: on a 2-core machine 8-12 connections out-run 30+ (less contention in PostgreSQL).
  DB_POOL_MAX: z.coerce.number().int().min(1).max(500).default(10),
  /** Simulated payment gateway. */
  PAYMENT_TPS: z.coerce.number().int().min(1).default(1000),
  PAYMENT_LATENCY_MS: z.coerce.number().int().min(0).default(150),
  PAYMENT_FAILURE_RATE: z.coerce.number().min(0).max(1).default(0),
});

export interface StoreApiConfig {
  nodeEnv: 'development' | 'production' | 'test';
  port: number;
  host: string;
  databaseUrl: string | undefined;
  authSecret: string;
  queueTokenSecret: string;
  devAuth: boolean;
  dbPoolMax: number;
  payment: { tps: number; latencyMs: number; failureRate: number };
}

export const DEV_AUTH_SECRET = 'onsale-development-secret-not-for-production!!';
export const DEV_QUEUE_TOKEN_SECRET = 'onsale-development-queue-secret-not-for-production!!';

/** The store API's configuration, read from the environment in this one place and checked. */
export function loadStoreApiConfig(env: NodeJS.ProcessEnv = process.env): StoreApiConfig {
  const e = schema.parse(env);
  const production = e.NODE_ENV === 'production';
  if (production && !e.AUTH_SECRET) throw new Error('AUTH_SECRET (32+ characters) is required when NODE_ENV=production');
  if (production && !e.QUEUE_TOKEN_SECRET) throw new Error('QUEUE_TOKEN_SECRET (32+ characters) is required when NODE_ENV=production');
  return {
    nodeEnv: e.NODE_ENV,
    port: e.STORE_API_PORT,
    host: e.STORE_API_HOST,
    databaseUrl: e.DATABASE_URL,
    authSecret: e.AUTH_SECRET ?? DEV_AUTH_SECRET,
    queueTokenSecret: e.QUEUE_TOKEN_SECRET ?? DEV_QUEUE_TOKEN_SECRET,
    devAuth: e.DEV_AUTH ?? !production,
    dbPoolMax: e.DB_POOL_MAX,
    payment: { tps: e.PAYMENT_TPS, latencyMs: e.PAYMENT_LATENCY_MS, failureRate: e.PAYMENT_FAILURE_RATE },
  };
}
