// A worker process for the crash test: small fan-out pages with a pause between them, so a test can kill it
// (SIGKILL) in the middle of a batch fan-out. Run with tsx; DATABASE_URL names the database.
import { createDb } from '../db/connect.js';
import { startWorker } from '../jobs/worker.js';

const url = process.env.DATABASE_URL!;
const db = createDb(url, { max: 4, applicationName: 'fanout-worker' });
const pause = Number(process.env.PAGE_PAUSE_MS ?? 200);
await startWorker({
  connectionString: url,
  db,
  concurrency: 2,
  admission: false,
  claimTokenSecret: 'crash-test-secret',
  fanout: { pageSize: Number(process.env.PAGE_SIZE ?? 50), betweenPages: () => new Promise((r) => setTimeout(r, pause)) },
  liveness: { heartbeatMs: 200, deadAfterMs: 1500 },
  // The test's webhook receiver listens on this machine: named, as an install names its internal receivers.
  outbound: { allowHosts: ['127.0.0.1'] },
});
process.stdout.write('ready\n');
