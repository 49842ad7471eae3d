import { createDb, databaseCores, storePoolSize, warmPool } from '@onsale/shared/db';
import { CardFingerprints, rekeyLegacyCardFingerprints } from '@onsale/shared/checkout';
import { buildStoreApi } from './app.js';
import { loadStoreApiConfig, storeServerOptions } from './env.js';

// Standalone store API process: logger, timeouts (and the request budget) and graceful shutdown only.
const config = loadStoreApiConfig();
if (!config.databaseUrl) throw new Error('DATABASE_URL is required (or use `npm start`, which provides one)');
const db = createDb(config.databaseUrl, {
  // Bounded by the database's cores across the store processes (STORE_API_PROCESSES; docs/configuration.md).
  max: storePoolSize({
    poolMax: config.dbPoolMax,
    processes: config.rateLimit.processes,
    dbCores: databaseCores(config.databaseUrl, config.dbCores),
  }),
  connectionTimeoutMillis: config.dbPoolWaitMs,
  priority: config.dbPoolPriority,
  applicationName: 'store-api',
});
// Card fingerprints written before they were keyed are keyed in place (a migration cannot: it has no secret).
await rekeyLegacyCardFingerprints(db, new CardFingerprints(config.cardFingerprintSecret));
const app = await buildStoreApi({ db, config }, { logger: { level: 'info' }, ...storeServerOptions() });
// The pool's connections open before the first fan arrives (an on-sale's opening burst should not start backends).
await warmPool(db);
await app.listen({ port: config.port, host: config.host });
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    void app
      .close()
      .then(() => db.destroy())
      .then(() => process.exit(0));
  });
}
