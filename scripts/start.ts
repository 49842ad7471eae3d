// `npm start`: the whole platform in one process. See START_USAGE in start-lib.ts.
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import {
  createDb,
  databaseCores,
  databaseFaultOf,
  healthOf,
  migrateToLatest,
  MIN_STORE_POOL,
  storePoolSize,
  warmPool,
} from '@onsale/shared/db';
import { createMetrics, relayClusterMetrics } from '@onsale/shared/metrics';
import { loadSheddingConfigOf } from '@onsale/shared/overload';
import { outboundPolicyOf } from '@onsale/shared/notify';
import { CardFingerprints, rekeyLegacyCardFingerprints } from '@onsale/shared/checkout';
import { startWorker, type WorkerOptions } from '@onsale/shared/jobs';
import { buildStoreApi } from '@onsale/store-api';
import { loadStoreApiConfig, storeServerOptions } from '@onsale/store-api/env';
import { buildBff, cliRehearsalLauncher } from '@onsale/bff';
import { authOptionsOf, loadBffEnv } from '@onsale/bff/env';
import { trustProxyOf } from '@onsale/shared/install';
import { loadCliConfig } from '@onsale/cli/env';
import { loadEdgeEnv } from '@onsale/edge/env';
import { resolveDatabase } from '@onsale/cli/database';
import { ProcessGroup } from './process-group.js';
import {
  START_USAGE,
  Shutdown,
  consoleDir,
  repoRoot,
  consoleSignInHint,
  demoCurl,
  ensureConsoleBuilt,
  ensureDemoEvent,
  ensureFanPageBuilt,
  fanDir,
  parseStartFlags,
} from './start-lib.js';

const log = (line: string) => process.stdout.write(`${line}\n`);
const warn = (line: string) => process.stderr.write(`${line}\n`);

let flags;
try {
  flags = parseStartFlags(process.argv.slice(2));
} catch (e) {
  warn(`${(e as Error).message}\n\n${START_USAGE}`);
  process.exit(2);
}
if (flags.help) {
  log(START_USAGE);
  process.exit(0);
}

// Read and check every setting before anything starts.
let settings;
try {
  // Behind the local edge, the store API believes the edge's X-Forwarded-For (the fan's address, for limits per IP).
  const env = flags.edge && !process.env.STORE_API_TRUST_PROXY ? { ...process.env, STORE_API_TRUST_PROXY: 'loopback' } : process.env;
  settings = {
    databaseUrl: loadCliConfig().databaseUrl,
    storeConfig: loadStoreApiConfig(env),
    bffEnv: loadBffEnv(),
    edgeEnv: loadEdgeEnv(),
  };
} catch (e) {
  warn(`npm start: invalid configuration: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
const { databaseUrl, storeConfig, bffEnv, edgeEnv } = settings;

// This process owns its signals and shuts down in order: servers, then pools, then the embedded database (which
// runs in a process group of its own, so a terminal's Ctrl-C does not stop it under open pools).
// (Remove listeners one by one: tsx keeps a hidden one, which tells its parent process the signal arrived.)
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) for (const l of process.listeners(sig)) process.removeListener(sig, l);
const shutdown = new Shutdown(warn);
let stopping = false;
async function stop(reason: string, code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    log(`\n${reason}: shutting down...`);
    setTimeout(() => {
      warn('shutdown took longer than 20 s; exiting');
      process.exit(1);
    }, 20_000).unref();
    const ok = await shutdown.run();
    if (ok) log('stopped.');
    process.exit(ok ? code : 1);
  }
  return new Promise<never>(() => {});
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => void stop(sig, 0));

try {
  const target = await resolveDatabase(databaseUrl);
  shutdown.add('embedded PostgreSQL', () => target.release());
  const where = {
    env: 'DATABASE_URL',
    'embedded-running': 'the embedded server already running on ./.data/',
    embedded: 'embedded, data in ./.data/',
  }[target.source];
  log(`database: ${where}`);

  // The server ending every connection (57P01: it is shutting down; Ctrl-C reaches the embedded one too) is said
  // once, not once per pooled connection, and quiets the worker's logs that would follow it.
  let databaseStopping = false;
  const poolError = (name: string) => (err: Error & { code?: string }) => {
    if (stopping || databaseStopping) return;
    if (err.code === '57P01') {
      databaseStopping = true;
      warn('the database is shutting down: its connections were ended');
    } else if (!databaseFaultOf(err)) warn(`${name} database pool: ${err.message}`);
    // A lost connection is part of an outage, which the store API logs once when it starts and once when it ends.
  };
  // One process: the store API's pool (bounded by the database's cores, docs/configuration.md). Many: the store
  // processes open their own, and this one needs two for the migrations and the demo.
  const manyProcesses = flags.storeInstances !== undefined || flags.workers !== undefined;
  const storeDb = createDb(target.url, {
    max: manyProcesses
      ? MIN_STORE_POOL
      : storePoolSize({ poolMax: storeConfig.dbPoolMax, processes: 1, dbCores: databaseCores(target.url, storeConfig.dbCores) }),
    connectionTimeoutMillis: storeConfig.dbPoolWaitMs,
    applicationName: 'store-api',
    onError: poolError('store API'),
  });
  shutdown.add('store API pool', () => storeDb.destroy());
  // A database that shut down (57P01) and came back: the worker's logs speak again.
  healthOf(storeDb).on('up', () => (databaseStopping = false));
  const opsDb = createDb(target.url, { max: 6, applicationName: 'onsale-ops', onError: poolError('BFF/worker') });
  shutdown.add('BFF and worker pool', () => opsDb.destroy());

  const migrated = await migrateToLatest(storeDb);
  // Card fingerprints written before they were keyed are keyed in place (a migration cannot: it has no secret).
  const rekeyed = await rekeyLegacyCardFingerprints(storeDb, new CardFingerprints(storeConfig.cardFingerprintSecret));
  if (rekeyed > 0) log(`card fingerprints: keyed ${rekeyed} written before fingerprints were keyed`);
  const applied = migrated.results ?? [];
  log(applied.length ? `migrations: applied ${applied.map((r) => r.migrationName).join(', ')}` : 'migrations: up to date');

  // CONSOLE_DIR (the BFF's setting) serves another build; npm start builds into it too while it is new or empty.
  const servedConsole = bffEnv.CONSOLE_DIR ? resolve(bffEnv.CONSOLE_DIR) : consoleDir;
  ensureConsoleBuilt(log, servedConsole);
  // The fans' page (/e/:eventId on the store API): FAN_DIR, else apps/fan/dist, built on the first start too.
  const servedFan = storeConfig.fan.dir ? resolve(storeConfig.fan.dir) : fanDir;
  ensureFanPageBuilt(log, servedFan);

  const storeHost = storeConfig.host === '0.0.0.0' || storeConfig.host === '::' ? '127.0.0.1' : storeConfig.host;
  let storePort: number;
  let processLine: string;
  if (flags.storeInstances === undefined && flags.workers === undefined) {
    // One process: store API, BFF and worker share this event loop (the lightest start for a laptop).
    // One metrics registry for the store API and the worker in this process (GET /metrics shows both).
    const metrics = createMetrics({ defaultMetrics: true });
    const store = await buildStoreApi(
      { db: storeDb, config: { ...storeConfig, fan: { ...storeConfig.fan, dir: servedFan } }, metrics },
      { logger: { level: 'warn' }, ...storeServerOptions() },
    );
    shutdown.add('store API', () => store.close());

    // The worker reports invariant drift and job failures through the store API's logger (warnings and errors).
    // Quiet once stopping: Ctrl-C reaches the embedded server too, and its connections then end under the worker.
    const workerLogger = Object.create(store.log, {
      error: { value: (...a: [object]) => void (stopping || databaseStopping || store.log.error(...a)) },
      warn: { value: (...a: [object]) => void (stopping || databaseStopping || store.log.warn(...a)) },
    }) as NonNullable<WorkerOptions['logger']>;
    const worker = await startWorker({
      connectionString: target.url,
      db: opsDb,
      logger: workerLogger,
      metrics,
      claimTokenSecret: storeConfig.queueTokenSecret,
      outbound: outboundPolicyOf(bffEnv),
    });
    shutdown.add('worker', () => worker.stop());

    // The store API's connections open before the first fan arrives (an on-sale's opening burst should not start backends).
    await warmPool(storeDb);
    await store.listen({ port: storeConfig.port, host: storeConfig.host });
    storePort = (store.server.address() as AddressInfo).port;
    processLine =
      'worker      running (admission controller every second, inventory reconciliation and expired-hold sweep every minute, waitlist fan-out, offers and webhook deliveries)';
  } else {
    // Many processes (node:cluster): N store APIs listening on one port (this process owns the socket and hands
    // each connection to the next in turn), M workers; each started again if it dies. See docs/edge.md.
    const n = flags.storeInstances ?? 1;
    const m = flags.workers ?? 1;
    if (n > 1 && !storeConfig.redis)
      warn(
        `note: ${n} store-API processes without REDIS_URL: request limits and proof-of-work replay are counted per process (up to ${n} times each limit); set REDIS_URL to share them`,
      );
    // A scrape of any store process reads the whole cluster's figures: this process relays them (no registry of its own).
    const stopRelay = relayClusterMetrics();
    shutdown.add('metrics relay', async () => stopRelay());
    const group = new ProcessGroup({
      exec: join(repoRoot, 'scripts', 'start-role.ts'),
      env: {
        ...process.env,
        DATABASE_URL: target.url,
        FAN_DIR: servedFan,
        // While Redis does not answer, each store process counts 1/N of every request limit.
        STORE_API_PROCESSES: process.env.STORE_API_PROCESSES ?? String(n),
        ...(flags.edge && !process.env.STORE_API_TRUST_PROXY ? { STORE_API_TRUST_PROXY: 'loopback' } : {}),
      },
      log,
      warn,
    });
    shutdown.add('store API and worker processes', () => group.stop());
    await Promise.all([
      ...Array.from({ length: m }, (_, j) => group.start({ role: 'worker', name: `worker-${j + 1}` })),
      ...Array.from({ length: n }, (_, i) => group.start({ role: 'store', name: `store-${i + 1}` })),
    ]);
    storePort = storeConfig.port;
    processLine = `processes   ${group.processes.map((p) => `${p.name} (pid ${p.pid})`).join(', ')}; restarted if they die${storeConfig.redis ? '; limits shared in Redis' : ''}`;
  }

  // The war room reads hold latency and sold-out propagation from the store API's /metrics (STORE_API_URL when set:
  // e.g. the instances behind a load balancer; else this start's own store API).
  const storeApiUrls = bffEnv.STORE_API_URL.length > 0 ? bffEnv.STORE_API_URL : [`http://${storeHost}:${storePort}`];
  const url = (host: string, port: number) => `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}`;
  // Rehearsals from the console drive this product's fan-facing URL with dev sign-ins (never on in production).
  const rehearsals = storeConfig.devAuth
    ? cliRehearsalLauncher({
        db: opsDb,
        databaseUrl: target.url,
        target: flags.edge ? url(edgeEnv.host, edgeEnv.port) : url(storeConfig.host, storeConfig.port),
        root: repoRoot,
      })
    : undefined;
  const bff = await buildBff({
    db: opsDb,
    consoleDir: servedConsole,
    logger: false,
    auth: authOptionsOf(bffEnv),
    storeApiUrls,
    trustProxy: trustProxyOf(bffEnv.BFF_TRUST_PROXY),
    loadShedding: loadSheddingConfigOf(bffEnv),
    outbound: outboundPolicyOf(bffEnv),
    ...(rehearsals ? { rehearsals } : {}),
  });
  shutdown.add('BFF', () => bff.close());
  await bff.listen({ port: bffEnv.BFF_PORT, host: bffEnv.BFF_HOST });

  const storeUrl = url(storeConfig.host, storeConfig.port);
  const bffUrl = url(bffEnv.BFF_HOST, bffEnv.BFF_PORT);

  // The edge worker on `workerd serve`, in front of the store API; it shares the store API's secrets.
  let edgeUrl: string | undefined;
  if (flags.edge) {
    const { startLocalEdge } = await import('@onsale/edge/local');
    const edge = await startLocalEdge({
      storeApiUrl: storeUrl,
      queueTokenSecret: storeConfig.queueTokenSecret,
      // With an identity provider (AUTH_JWKS_URL) the edge cannot check account tokens yet: it then passes polls on.
      authSecret: storeConfig.identity.kind === 'dev' ? storeConfig.authSecret : '',
      port: edgeEnv.port,
      host: edgeEnv.host,
      watermarkTtlSeconds: edgeEnv.watermarkTtlSeconds,
      staleSeconds: edgeEnv.staleSeconds,
      originTimeoutMs: edgeEnv.originTimeoutMs,
      proxyTimeoutMs: edgeEnv.proxyTimeoutMs,
      fanTimeoutMs: edgeEnv.fanTimeoutMs,
      breakerFailures: edgeEnv.breakerFailures,
      breakerOpenSeconds: edgeEnv.breakerOpenSeconds,
      framingGuard: edgeEnv.framingGuard,
      joinBatch: edgeEnv.joinBatch,
      joinAloneBelow: edgeEnv.joinAloneBelow,
      joinBatchWaitMs: edgeEnv.joinBatchWaitMs,
    });
    shutdown.add('edge', () => edge.close());
    edgeUrl = edge.url;
  }
  const fansUrl = edgeUrl ?? storeUrl;

  log('');
  if (edgeUrl)
    log(
      `edge        ${edgeUrl}        (fans: workerd serve${edgeEnv.framingGuard ? ' behind its framing guard' : ''}, in front of the store API; status polls and watermarks answered here)`,
    );
  log(`store API   ${storeUrl}        (${edgeUrl ? 'the origin' : 'fans'}; dev sign-in ${storeConfig.devAuth ? 'on' : 'off'})`);
  log(`API docs    ${storeUrl}/docs`);
  log(`fans' page  ${fansUrl}/e/<eventId>  (the link a promoter publishes)`);
  log(`console     ${bffUrl}/         (operators and promoters)`);
  log(processLine);
  log(`\nconsole sign-in: ${await consoleSignInHint(opsDb)}`);

  if (flags.demo) {
    const demo = await ensureDemoEvent(storeDb);
    log('');
    log(`demo event  ${demo.eventId}  "${demo.name}"${demo.created ? ' (created)' : ' (already there)'}`);
    log(`fan page    ${fansUrl}/e/${demo.eventId}`);
    if (storeConfig.devAuth) log(`try it (bash):\n\n${demoCurl(fansUrl, demo.eventId)}\n`);
    else log('dev sign-in is off (NODE_ENV=production or DEV_AUTH=false), so the curl tour needs a real account token.');
  }
  log('\nCtrl-C to stop.');
} catch (e) {
  warn(`npm start failed: ${startFailure(e)}`);
  const err = e instanceof Error ? (e as Error & { code?: string }) : undefined;
  const known =
    err &&
    (err.code === 'EADDRINUSE' ||
      err.code === 'ECONNREFUSED' ||
      ['MigrationError', 'InstallDatabaseError', 'InstallSecretsError'].includes(err.name));
  if (err && !known) warn(err.stack ?? '');
  await stop('startup failed', 1);
}

/** One line that says what went wrong at startup (anything may be thrown, not only an Error). */
function startFailure(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const err = e as Error & { code?: string; port?: number };
  if (err.code === 'EADDRINUSE' || /address already in use/i.test(err.message)) {
    const port = err.port ?? Number(/:(\d+)$/.exec(err.message)?.[1]);
    const setting =
      port === storeConfig.port
        ? 'STORE_API_PORT'
        : port === bffEnv.BFF_PORT
          ? 'BFF_PORT'
          : port === edgeEnv.port
            ? 'EDGE_PORT'
            : 'STORE_API_PORT / BFF_PORT / EDGE_PORT';
    return `port ${port} is in use by another program; set ${setting} to a free port`;
  }
  return err.message || err.name;
}
