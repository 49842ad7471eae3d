import { z } from 'zod';

const envSchema = z.object({
  BFF_PORT: z.coerce.number().int().min(0).max(65_535).default(3001),
  // Loopback by default: the console has no operator sign-in yet, so it must not face a network by accident.
  BFF_HOST: z.string().min(1).default('127.0.0.1'),
  // Optional here because `npm start` may run an embedded PostgreSQL and pass the db in; server.ts requires it.
  DATABASE_URL: z.string().min(1).optional(),
  // Where the built console lives; server.ts defaults it to apps/console/dist.
  CONSOLE_DIR: z.string().min(1).optional(),
});

export type BffEnv = z.infer<typeof envSchema>;

/** The BFF's configuration, checked. The only place in the BFF that reads the environment; called, never run at import. */
export function loadBffEnv(source: Record<string, string | undefined> = process.env): BffEnv {
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new Error(`invalid BFF environment:\n${lines}`);
  }
  return parsed.data;
}
