// One process of `npm start -- --store-instances N --workers M` (a node:cluster worker of scripts/start.ts): a store
// API listening on the shared port, or a background worker. The start command has migrated the database and
// passes DATABASE_URL; it stops this process with SIGTERM (Ctrl-C reaches the start command, which stops us in order).
import { createDb, databaseCores, databaseFaultOf, storePoolSize, warmPool } from '@onsale/shared/db';
import { answerClusterMetrics, clusterMetricsGatherer, createMetrics } from '@onsale/shared/metrics';
import { startWorker } from '@onsale/shared/jobs';
import { outboundPolicyFromEnv } from '@onsale/shared/notify';
import { buildStoreApi } from '@onsale/store-api';
import { loadStoreApiConfig, storeServerOptions } from '@onsale/store-api/env';
import pino from 'pino';

const role = process.env.ONSALE_ROLE;
const name = process.env.ONSALE_PROCESS ?? role ?? 'process';
const url = process.env.DATABASE_URL;
if (!url || (role !== 'store' && role !== 'worker')) {
  process.stderr.write('start-role: ONSALE_ROLE (store or worker) and DATABASE_URL are set by npm start\n');
  process.exit(2);
}
process.on('SIGINT', () => {}); // the terminal's Ctrl-C is the start command's to handle

const config = loadStoreApiConfig();
let stopping = false;
// A connection the database ended or refused is part of an outage, which the store API and the worker each log once
// when it starts and once when it ends; anything else a pool meets is said here.
const onError = (err: Error & { code?: string }) => {
  if (!stopping && !databaseFaultOf(err)) process.stderr.write(`${name}: database pool: ${err.message}\n`);
};

if (role === 'store') {
  // A request waits at most DB_POOL_WAIT_MS for a connection (a 503 then), well inside its budget.
  // The store processes together hold at most 5 connections per core of the database (docs/configuration.md).
  const max = storePoolSize({
    poolMax: config.dbPoolMax,
    processes: config.rateLimit.processes,
    dbCores: databaseCores(url, config.dbCores),
  });
  const db = createDb(url, {
    max,
    connectionTimeoutMillis: config.dbPoolWaitMs,
    applicationName: `store-api ${name}`,
    onError,
  });
  // GET /metrics answers for the whole cluster: this process's figures with every other process's (through the primary).
  const metrics = createMetrics({ defaultMetrics: true });
  answerClusterMetrics(metrics.registry);
  const app = await buildStoreApi(
    { db, config, metrics, clusterMetrics: clusterMetricsGatherer() },
    { logger: { level: 'warn' }, ...storeServerOptions() },
  );
  await warmPool(db);
  await app.listen({ port: config.port, host: config.host });
  process.once('SIGTERM', () => {
    stopping = true;
    void app
      .close()
      .then(() => db.destroy())
      .finally(() => process.exit(0));
  });
} else {
  const db = createDb(url, { max: 6, applicationName: `onsale ${name}`, onError });
  const logger = pino({ level: 'warn', base: { process: name } });
  const metrics = createMetrics({ defaultMetrics: false });
  answerClusterMetrics(metrics.registry);
  const worker = await startWorker({
    connectionString: url,
    db,
    logger,
    claimTokenSecret: config.queueTokenSecret,
    metrics,
    outbound: outboundPolicyFromEnv(process.env),
  });
  process.once('SIGTERM', () => {
    stopping = true;
    void worker
      .stop()
      .then(() => db.destroy())
      .finally(() => process.exit(0));
  });
}
process.send?.({ ready: true });
