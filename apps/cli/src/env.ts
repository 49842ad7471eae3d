import { AsyncLocalStorage } from 'node:async_hooks';
import { z } from 'zod';
import { installDataDir, installSecrets, type InstallSecrets } from '@onsale/shared/install';

const scoped = new AsyncLocalStorage<NodeJS.ProcessEnv>();

/** Runs `fn` with `env` as the CLI's environment (a command line run in-process, as the tests do); else process.env. */
export function withCliEnv<T>(env: NodeJS.ProcessEnv, fn: () => Promise<T>): Promise<T> {
  return scoped.run(env, fn);
}

/** The environment the running command line reads. */
export const cliEnv = (): NodeJS.ProcessEnv => scoped.getStore() ?? process.env;

const schema = z.object({
  /** Any PostgreSQL 15+. Unset: the embedded server under ./.data/ (the one `npm start` uses). */
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// or postgresql:// URL' }).optional(),
});

export interface CliConfig {
  databaseUrl: string | undefined;
}

/** The CLI's (and the start command's) database configuration, read from the environment in this one place. */
export function loadCliConfig(env: NodeJS.ProcessEnv = cliEnv()): CliConfig {
  const e = schema.parse({ DATABASE_URL: env.DATABASE_URL || undefined });
  return { databaseUrl: e.DATABASE_URL };
}

const passwordSchema = z.object({
  /** A new console user's password for `user:create` (instead of --password, which shell history and ps see). */
  ONSALE_PASSWORD: z.string().min(1).optional(),
});

/** ONSALE_PASSWORD, if set and not empty. */
export function consolePasswordFromEnv(env: NodeJS.ProcessEnv = cliEnv()): string | undefined {
  return passwordSchema.parse({ ONSALE_PASSWORD: env.ONSALE_PASSWORD || undefined }).ONSALE_PASSWORD;
}

/**
 * The install's secrets as the store API has them (QUEUE_TOKEN_SECRET and the others from the environment, else
 * this install's own under ./.data/), so codes the CLI signs are accepted by the store API of the same install.
 */
export function cliSecrets(env: NodeJS.ProcessEnv = cliEnv()): InstallSecrets {
  return installSecrets(installDataDir(), env, { optional: ['authSecret', 'cardFingerprintSecret'] });
}
