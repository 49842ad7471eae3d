// Pieces of `npm start` (scripts/start.ts) kept apart so the script reads as the order of things.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Db } from '@onsale/shared/db';
import { listEvents, parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { countUsers } from '@onsale/shared/users';
import { repoRoot } from '@onsale/cli/database';

export { repoRoot };
export const consoleDir = join(repoRoot, 'apps', 'console', 'dist');
export const fanDir = join(repoRoot, 'apps', 'fan', 'dist');

export const START_USAGE = `usage: npm start [-- --demo] [--edge] [--store-instances N] [--workers M]

Starts the whole platform: PostgreSQL (embedded under ./.data/ unless DATABASE_URL is set), migrations, the store
API (STORE_API_PORT, default 3000), the BFF serving the console (BFF_PORT, default 3001) and the background
worker, in one process unless told otherwise. Stop it with Ctrl-C (SIGINT) or SIGTERM.

  --demo   also create the club example event (once; it is found by name afterwards) with its on-sale
           already open, and print a curl sequence that signs in, reads it and holds seats.
  --edge   also run the edge worker (apps/edge) in workerd, Cloudflare's open-source runtime, in front of the
           store API on EDGE_PORT (default 8787): fans use its URL; it answers status polls and watermark reads
           itself and passes everything else to the store API.
  --store-instances N   run N store-API processes on the one port (node:cluster; 1-16), each started again if
           it dies. With N > 1 set REDIS_URL so request limits and proof-of-work replay hold across them.
  --workers M           run M background-worker processes (0-16; default 1 when --store-instances is given).`;

export interface StartFlags {
  demo: boolean;
  edge: boolean;
  help: boolean;
  /** Separate store-API processes (undefined: the one-process start). */
  storeInstances: number | undefined;
  workers: number | undefined;
}

export function parseStartFlags(argv: string[]): StartFlags {
  const { values } = parseArgs({
    args: argv,
    options: {
      demo: { type: 'boolean', default: false },
      edge: { type: 'boolean', default: false },
      'store-instances': { type: 'string' },
      workers: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const count = (v: string | undefined, flag: string, min: number): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > 16)
      throw new Error(`${flag} must be a whole number from ${min} to 16 (got ${JSON.stringify(v)})`);
    return n;
  };
  return {
    demo: values.demo === true,
    edge: values.edge === true,
    help: values.help === true,
    storeInstances: count(values['store-instances'], '--store-instances', 1),
    workers: count(values.workers, '--workers', 0),
  };
}

/** pnpm as the bootstrap finds it: the pinned version on PATH, else through npx. */
function pnpm(): [string, string[]] {
  const probe = spawnSync('pnpm', ['--version'], { encoding: 'utf8' });
  if (probe.status === 0 && probe.stdout.trim() === '12.4.2') return ['pnpm', []];
  return ['npx', ['--yes', 'pnpm@12.4.2']];
}

/**
 * Builds a Vite app of the workspace once (a fresh clone has no dist/); later starts reuse the build. `dir` is
 * where it is served from; a directory other than the app's own dist/ is built into only while it is new or
 * empty, since the build empties its output directory first.
 */
function ensureBuilt(
  log: (line: string) => void,
  app: { name: string; pkg: string; defaultDir: string; setting: string },
  dir: string,
): void {
  if (existsSync(join(dir, 'index.html'))) return;
  const custom = resolve(dir) !== resolve(app.defaultDir);
  if (custom && existsSync(dir) && readdirSync(dir).length > 0)
    throw new Error(
      `${app.setting} ${dir} holds no ${app.name} build (no index.html) and is not empty: point it at a build, or at a new or empty directory to build into`,
    );
  log(`building the ${app.name} (first start only)...`);
  const [cmd, pre] = pnpm();
  const outDir = custom ? ['--outDir', resolve(dir)] : [];
  const r = spawnSync(cmd, [...pre, '--filter', app.pkg, 'build', ...outDir], { cwd: repoRoot, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0 || !existsSync(join(dir, 'index.html')))
    throw new Error(`building the ${app.name} failed (exit ${r.status ?? r.signal}); try \`npm run build\``);
}

/** Builds the console once (CONSOLE_DIR, else apps/console/dist). */
export function ensureConsoleBuilt(log: (line: string) => void, dir: string = consoleDir): void {
  ensureBuilt(log, { name: 'console', pkg: '@onsale/console', defaultDir: consoleDir, setting: 'CONSOLE_DIR' }, dir);
}

/** Builds the fans' page once (FAN_DIR, else apps/fan/dist). */
export function ensureFanPageBuilt(log: (line: string) => void, dir: string = fanDir): void {
  ensureBuilt(log, { name: 'fans\u2019 page', pkg: '@onsale/fan', defaultDir: fanDir, setting: 'FAN_DIR' }, dir);
}

/**
 * The demo event: examples/club.json with its on-sale opened a minute ago, so the waiting room admits at once.
 * Created once; found again by name on later starts.
 */
export async function ensureDemoEvent(db: Db, now = new Date()): Promise<{ eventId: string; created: boolean; name: string }> {
  const file = JSON.parse(readFileSync(join(repoRoot, 'examples', 'club.json'), 'utf8')) as Record<string, unknown>;
  const name = `${String(file.name)} (demo)`;
  const existing = (await listEvents(db)).find((e) => e.name === name);
  if (existing) return { eventId: existing.id, created: false, name };
  const onsaleAt = new Date(now.getTime() - 60_000);
  const startsAt = new Date(Math.max(Date.parse(String(file.startsAt)), now.getTime() + 30 * 24 * 3600_000));
  const spec = parseEventFile({ ...file, name, onsaleAt: onsaleAt.toISOString(), startsAt: startsAt.toISOString() });
  const r = await db.transaction().execute((trx) => createEvent(trx, spec, 'demo', { signOff: true }));
  return { eventId: r.eventId, created: true, name };
}

/**
 * What to print about console sign-in. With no console user yet, how to create the first admin: by the CLI, on
 * purpose, rather than a built-in development admin with a known password that could outlive development.
 */
export async function consoleSignInHint(db: Db): Promise<string> {
  if ((await countUsers(db)) > 0)
    return 'sign in to the console with your e-mail and password; admins add users on its Users page or with `npm run onsale -- user:create`.';
  return [
    'no console users yet. Create the first admin in another terminal (with the same DATABASE_URL, if you set one), then sign in with it:',
    '',
    '  npm run onsale -- user:create --email you@example.com --role admin',
    '',
    'It prints a generated password once (or takes ONSALE_PASSWORD / --password).',
  ].join('\n');
}

/** A ready-to-paste fan session against the demo event: sign in, join the waiting room, get admitted, hold, pay. */
export function demoCurl(storeApi: string, eventId: string): string {
  const json = (field: string) => `node -pe 'JSON.parse(require("fs").readFileSync(0)).${field} ?? ""'`;
  return [
    `S=${storeApi}`,
    `EVENT=${eventId}`,
    `DEVICE=demo-device-0001`,
    `TOKEN=$(curl -s -X POST $S/auth/dev-login -H 'content-type: application/json' -d '{"accountId":"fan-1"}' | ${json('token')})`,
    `curl -s $S/events/$EVENT/fairness | ${json('description')}`,
    `J=$(curl -s -w '\\n' -X POST $S/events/$EVENT/queue -H "authorization: Bearer $TOKEN" -H "x-device-id: $DEVICE" | tee /dev/stderr)`,
    `# curl has none of a browser's signals, so the bot gate answers CHALLENGE_REQUIRED: solve the proof-of-work (a fan's page does it in JavaScript) and join again`,
    `POW=$(echo "$J" | npm run -s onsale -- pow:solve)`,
    `[ -z "$POW" ] || J=$(curl -s -w '\\n' -X POST $S/events/$EVENT/queue -H "authorization: Bearer $TOKEN" -H "x-device-id: $DEVICE" -H "x-proof-of-work: $POW" | tee /dev/stderr)`,
    `Q=$(echo "$J" | ${json('queueToken')})`,
    `# poll (the controller admits at the event's planned rate; the first fans within seconds); no queue token, no poll`,
    `until ADM=$(curl -s -w '\\n' $S/events/$EVENT/queue/status -H "authorization: Bearer $TOKEN" -H "x-device-id: $DEVICE" -H "x-queue-token: $Q" | tee /dev/stderr | ${json('admissionToken')}) && [ -n "$ADM" ] || [ -z "$Q" ]; do sleep 3; done`,
    `HOLD=$(curl -s -w '\\n' -X POST $S/events/$EVENT/holds -H "authorization: Bearer $TOKEN" -H "x-device-id: $DEVICE" -H "x-admission-token: $ADM" -H 'content-type: application/json' -d '{"section":"MAIN","quantity":2}' | tee /dev/stderr | ${json('holdId')})`,
    `curl -s -w '\\n' -X POST $S/holds/$HOLD/checkout -H "authorization: Bearer $TOKEN" -H "x-device-id: $DEVICE" -H "x-admission-token: $ADM" -H 'content-type: application/json' -H "idempotency-key: $(node -pe 'crypto.randomUUID()')" -d '{"payment":{"instrument":{"type":"card","number":"4242424242424242"}}}'`,
  ].join('\n');
}

/**
 * Teardown of what has been started, run once and in reverse order of registration: register each step as its
 * resource comes up (database, pools, worker, servers) and it goes down servers first, the embedded server last,
 * after the pools (a pool whose server vanishes under it raises errors). A failing step is reported; the rest run.
 */
export class Shutdown {
  private readonly steps: { name: string; run: () => Promise<unknown> }[] = [];
  private running: Promise<boolean> | undefined;

  constructor(private readonly log: (line: string) => void) {}

  add(name: string, run: () => Promise<unknown>): void {
    this.steps.push({ name, run });
  }

  /** Runs every step; resolves true when all of them succeeded. */
  run(): Promise<boolean> {
    this.running ??= (async () => {
      let ok = true;
      for (const s of [...this.steps].reverse()) {
        try {
          await s.run();
        } catch (e) {
          ok = false;
          this.log(`shutdown: ${s.name} failed: ${(e as Error).message}`);
        }
      }
      return ok;
    })();
    return this.running;
  }
}
