import { createDb, warmPool } from '@onsale/shared/db';
import { buildStoreApi } from '../src/app.js';
import { loadStoreApiConfig } from '../src/env.js';

// The store API as the benchmark runs it: its own process, an ephemeral port, no request logging, its pool opened
// before traffic as server.ts does.
// One loopback client stands for thousands of fans: request limits, the bot gate and load shedding (capacity is what is measured) are off unless the env turns them on.
const config = loadStoreApiConfig({
  RATE_LIMIT_ENABLED: 'false',
  BOT_GATE_ENABLED: 'false',
  LOAD_SHED_ENABLED: 'false',
  ...process.env,
  STORE_API_PORT: '0',
});
const db = createDb(config.databaseUrl!, { max: config.dbPoolMax, applicationName: 'store-api-bench' });
const app = await buildStoreApi({ db, config });
await warmPool(db);
await app.listen({ port: 0, host: '127.0.0.1' });
const addr = app.server.address();
process.stdout.write(`READY ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
process.on(
  'SIGTERM',
  () =>
    void app
      .close()
      .then(() => db.destroy())
      .then(() => process.exit(0)),
);

// BENCH_LAG=1: report event-loop stalls of the server (a timer late by more than 30 ms), as `LAG <epoch ms> <ms>`.
if (process.env.BENCH_LAG) {
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    if (now - last - 10 > 30) process.stdout.write(`LAG ${Date.now()} ${Math.round(now - last - 10)}\n`);
    last = now;
  }, 10).unref();
}
