import { fileURLToPath } from 'node:url';
import { createDb } from '@onsale/shared/db';
import { trustProxyOf } from '@onsale/shared/install';
import { loadSheddingConfigOf } from '@onsale/shared/overload';
import { outboundPolicyOf } from '@onsale/shared/notify';
import { buildBff } from './app.js';
import { authOptionsOf, loadBffEnv } from './env.js';

// Standalone start of the BFF against an existing, migrated database (`npm start` runs the whole platform).
const env = loadBffEnv();
if (!env.DATABASE_URL) {
  console.error('DATABASE_URL is required to run the BFF on its own (npm start runs an embedded PostgreSQL instead)');
  process.exit(1);
}

const db = createDb(env.DATABASE_URL, { applicationName: 'onsale-bff', onError: (err) => console.error('database pool error', err) });
const consoleDir = env.CONSOLE_DIR ?? fileURLToPath(new URL('../../console/dist', import.meta.url));
const app = await buildBff({
  db,
  consoleDir,
  logger: true,
  auth: authOptionsOf(env),
  storeApiUrls: env.STORE_API_URL,
  trustProxy: trustProxyOf(env.BFF_TRUST_PROXY),
  loadShedding: loadSheddingConfigOf(env),
  outbound: outboundPolicyOf(env),
});

let closing = false;
async function shutdown(signal: string): Promise<void> {
  if (closing) return;
  closing = true;
  app.log.info({ signal }, 'shutting down');
  // A stuck connection must not keep the process alive forever.
  const force = setTimeout(() => process.exit(1), 10_000);
  force.unref();
  try {
    await app.close();
    await db.destroy();
    process.exit(0);
  } catch (err) {
    app.log.error({ err }, 'shutdown failed');
    process.exit(1);
  }
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

try {
  await app.listen({ port: env.BFF_PORT, host: env.BFF_HOST });
} catch (err) {
  app.log.error({ err }, 'could not start the BFF');
  await db.destroy();
  process.exit(1);
}
