/** The development secret of queue, admission, access and invitation tokens: never in production. */
export const DEV_QUEUE_TOKEN_SECRET = 'onsale-development-queue-secret-not-for-production!!';

/**
 * The secret every process that signs or checks queue-family tokens shares (store API, CLI, BFF, edges):
 * QUEUE_TOKEN_SECRET, else the development secret outside production. Throws in production without one.
 */
export function queueTokenSecretFrom(env: NodeJS.ProcessEnv = process.env): string {
  const secret = env.QUEUE_TOKEN_SECRET || undefined;
  if (secret !== undefined && secret.length < 32) throw new Error('QUEUE_TOKEN_SECRET must be at least 32 characters');
  if (secret === undefined && env.NODE_ENV === 'production') throw new Error('QUEUE_TOKEN_SECRET (32+ characters) is required when NODE_ENV=production');
  return secret ?? DEV_QUEUE_TOKEN_SECRET;
}
