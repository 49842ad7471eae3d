import { z } from 'zod';

const schema = z.object({
  /** Any PostgreSQL 15+. Unset: the embedded server under ./.data/ (the one `npm start` uses). */
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// or postgresql:// URL' }).optional(),
});

export interface CliConfig {
  databaseUrl: string | undefined;
}

/** The CLI's (and the start command's) database configuration, read from the environment in this one place. */
export function loadCliConfig(env: NodeJS.ProcessEnv = process.env): CliConfig {
  const e = schema.parse({ DATABASE_URL: env.DATABASE_URL || undefined });
  return { databaseUrl: e.DATABASE_URL };
}

const passwordSchema = z.object({
  /** A new console user's password for `user:create` (instead of --password, which shell history and ps see). */
  ONSALE_PASSWORD: z.string().min(1).optional(),
});

/** ONSALE_PASSWORD, if set and not empty. */
export function consolePasswordFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return passwordSchema.parse({ ONSALE_PASSWORD: env.ONSALE_PASSWORD || undefined }).ONSALE_PASSWORD;
}
