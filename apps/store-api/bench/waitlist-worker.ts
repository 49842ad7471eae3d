import { createDb, poolOf } from '@onsale/shared/db';
import { startWorker, type WorkerOptions } from '@onsale/shared/jobs';
import { installDataDir, installSecrets } from '@onsale/shared/install';
import { outboundPolicyFromEnv } from '@onsale/shared/notify';

// The background worker as `npm run bench -- waitlist` runs it: its own process (so its peak RSS is its own), the jobs
// only (admission: false), tuned only through startWorker's public options. It times every statement it sends
// on its pool (the fan-out's and the deliveries'; graphile-worker's own queue queries use graphile's pool) and
// when each fan-out page ends (the betweenPages hook). SIGUSR2 clears those figures; SIGTERM stops the worker and
// prints them as one `STATS {json}` line.
const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL is required');
const concurrency = Number(process.env.WORKER_CONCURRENCY ?? 8);
const pageSize = process.env.FANOUT_PAGE_SIZE ? Number(process.env.FANOUT_PAGE_SIZE) : undefined;
const chunkSize = process.env.FANOUT_CHUNK_SIZE ? Number(process.env.FANOUT_CHUNK_SIZE) : undefined;

const db = createDb(url, { max: concurrency + 4, applicationName: 'waitlist-bench-worker' });

interface Stat {
  n: number;
  ms: number;
  maxMs: number;
}
let statements = new Map<string, Stat>();
let pageEnds: number[] = [];
let errors: string[] = [];

const label = (q: unknown) => {
  const text = typeof q === 'string' ? q : ((q as { text?: string } | null)?.text ?? '?');
  return text.replace(/\s+/g, ' ').trim().slice(0, 140);
};
const record = (key: string, ms: number) => {
  const s = statements.get(key) ?? { n: 0, ms: 0, maxMs: 0 };
  s.n++;
  s.ms += ms;
  s.maxMs = Math.max(s.maxMs, ms);
  statements.set(key, s);
};
// Registered after createDb's own 'connect' listener (prepared statements), so this wraps that wrapper.
poolOf(db).on('connect', (client) => {
  const inner = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const started = performance.now();
    const r = inner(...args);
    if (r && typeof (r as Promise<unknown>).then === 'function')
      (r as Promise<unknown>).then(
        () => record(label(args[0]), performance.now() - started),
        () => {},
      );
    return r;
  };
});

const say = (level: string) => (obj: unknown, msg?: string) => {
  const line = `[worker ${level}] ${msg ?? ''} ${typeof obj === 'string' ? obj : JSON.stringify(obj)}`;
  if (errors.length < 50) errors.push(line.slice(0, 500));
  process.stderr.write(`${line.slice(0, 2000)}\n`);
};
const logger = { error: say('error'), warn: say('warn'), info: () => {}, debug: () => {} } as unknown as NonNullable<
  WorkerOptions['logger']
>;

const worker = await startWorker({
  connectionString: url,
  db,
  claimTokenSecret: installSecrets(installDataDir()).queueTokenSecret,
  concurrency,
  admission: false,
  logger,
  // WEBHOOK_ALLOW_HOSTS=127.0.0.1 from the bench: its sink is on this machine.
  outbound: outboundPolicyFromEnv(process.env),
  fanout: {
    ...(pageSize ? { pageSize } : {}),
    ...(chunkSize ? { chunkSize } : {}),
    betweenPages: async () => {
      pageEnds.push(Date.now());
    },
  },
});

process.on('SIGUSR2', () => {
  statements = new Map();
  pageEnds = [];
  errors = [];
});
process.on('SIGTERM', () => {
  const memory = process.memoryUsage();
  void worker
    .stop()
    // Ignored on purpose: the benchmark's figures are written whether or not the worker stopped cleanly.
    .catch(() => {})
    .then(() => {
      const top = [...statements].map(([sql, s]) => ({ sql, ...s })).sort((a, b) => b.ms - a.ms);
      process.stdout.write(`STATS ${JSON.stringify({ statements: top, pageEnds, errors, memory })}\n`);
      return db.destroy();
    })
    .finally(() => process.exit(0));
});
process.stdout.write('READY 0\n');
