import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildBff } from '@onsale/bff';
import { AdmissionController } from '@onsale/shared/admission';
import { createOpenEvent } from '@onsale/shared/testing';
import { createUser } from '@onsale/shared/users';
import { buildStoreApi } from '@onsale/store-api';
import { loadStoreApiConfig } from '@onsale/store-api/env';
import { benchDatabase } from '../../store-api/bench/database.js';

const USAGE = `usage: npm run bench -- war-room [--seconds 10] [--rounds 3] [--console-dir <built console>]... [--profile <dir>]

The browser's CPU for an open war room: the console's production build (built into a temporary directory unless
--console-dir names one) served by the BFF, with the store API and the admission controller in this process on a
scratch database (BENCH_DATABASE_URL, else the local PostgreSQL), an open event and an operator. Debian's Chromium
(/usr/bin/chromium) signs in, opens the event's war room and, once it shows live figures, the board of every
on-sale. For each page, --rounds times: Chrome DevTools' Performance.getMetrics before and after --seconds of the
page standing open with its stream live; prints the CPU time of the browser's renderer process (RendererCPU) and of all its
processes (BrowserCPU, from SystemInfo.getProcessInfo), then the page's main-thread task time (TaskDuration:
everything its main thread did), script time (ScriptDuration), style and layout time, all in ms per second of wall
time, and their medians. The last four are wall time inside the page: a busy machine inflates them; the CPU times
are the figures to compare there.
Several --console-dir (builds of two commits, say) are compared side by side: a BFF and a browser each on the same
product, their rounds taken in turn, so that a busy machine weighs on each alike. --profile writes each page's
JavaScript CPU profile over one more round into <dir> (for Chrome DevTools; build the console with
\`--minify false\` to read it).`;

const METRICS = ['RendererCPU', 'BrowserCPU', 'TaskDuration', 'ScriptDuration', 'RecalcStyleDuration', 'LayoutDuration'] as const;

/** The CPU seconds of the browser's renderer processes, and of all its processes, so far. */
async function browserCpu(browser: Browser): Promise<{ renderer: number; all: number }> {
  const cdp = await browser.newBrowserCDPSession();
  const { processInfo } = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: { type: string; cpuTime: number }[] };
  await cdp.detach();
  const sum = (xs: { cpuTime: number }[]) => xs.reduce((a, p) => a + p.cpuTime, 0);
  return { renderer: sum(processInfo.filter((p) => p.type === 'renderer')), all: sum(processInfo) };
}

/**
 * Per second of wall time over `seconds` of the page standing open: the page's main-thread time by kind (wall
 * time, so a busy machine inflates it) and the CPU time of the browser's processes (its renderer, and all).
 */
async function standing(browser: Browser, page: Page, seconds: number): Promise<Record<string, number>> {
  // One session for the round: a session's counters start at its Performance.enable.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const read = async () =>
    Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value])) as Record<string, number>;
  const before = await read();
  const cpuBefore = await browserCpu(browser);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const after = await read();
  const cpuAfter = await browserCpu(browser);
  const wall = (performance.now() - t0) / 1000;
  await cdp.detach();
  return {
    ...Object.fromEntries(METRICS.filter((m) => !m.endsWith('CPU')).map((m) => [m, ((after[m]! - before[m]!) * 1000) / wall])),
    RendererCPU: ((cpuAfter.renderer - cpuBefore.renderer) * 1000) / wall,
    BrowserCPU: ((cpuAfter.all - cpuBefore.all) * 1000) / wall,
  };
}

async function profileOf(page: Page, seconds: number, file: string): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.start');
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const { profile } = await cdp.send('Profiler.stop');
  await cdp.detach();
  writeFileSync(file, JSON.stringify(profile));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const line = (r: Record<string, number>) => METRICS.map((m) => `${m} ${r[m]!.toFixed(1)}`).join(', ');

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '3' },
      'console-dir': { type: 'string', multiple: true },
      profile: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const profileDir = values.profile;
  const consoleDirs = values['console-dir'] ?? [];
  let builtHere: string | undefined;
  if (consoleDirs.length === 0) {
    builtHere = mkdtempSync(join(tmpdir(), 'onsale-bench-console-'));
    const consoleRoot = join(import.meta.dirname, '..');
    const vite = join(dirname(createRequire(join(consoleRoot, 'package.json')).resolve('vite/package.json')), 'bin', 'vite.js');
    execFileSync(process.execPath, [vite, 'build', '--logLevel', 'warn', '--outDir', builtHere, '--emptyOutDir'], {
      cwd: consoleRoot,
      stdio: 'inherit',
    });
    consoleDirs.push(builtHere);
  }
  if (!existsSync('/usr/bin/chromium')) throw new Error('Debian Chromium not found at /usr/bin/chromium: apt-get install -y chromium');

  const database = await benchDatabase();
  const operator = { email: 'ops@bench.test', password: 'operator password for the bench' };
  const { eventId } = await createOpenEvent(database.db, { name: 'Bench war room' });
  await database.db.transaction().execute((trx) => createUser(trx, { ...operator, role: 'operator' }, 'bench'));
  const store = await buildStoreApi({
    db: database.db,
    config: loadStoreApiConfig({
      NODE_ENV: 'test',
      DEV_AUTH: 'true',
      RATE_LIMIT_ENABLED: 'false',
      BOT_GATE_ENABLED: 'false',
      LOAD_SHED_ENABLED: 'false',
    }),
  });
  await store.listen({ port: 0, host: '127.0.0.1' });
  const storeUrl = `http://127.0.0.1:${(store.server.address() as AddressInfo).port}`;
  const controller = new AdmissionController({ db: database.db, connectionString: database.url, tickMs: 500, instanceId: 'bench' });
  await controller.start();
  const bffs: Awaited<ReturnType<typeof buildBff>>[] = [];
  const browsers: Browser[] = [];
  try {
    const pages: { name: string; baseUrl: string; browser: Browser; page: Page }[] = [];
    for (const [i, consoleDir] of consoleDirs.entries()) {
      const bff = await buildBff({ db: database.db, consoleDir, storeApiUrls: [storeUrl] });
      bffs.push(bff);
      await bff.listen({ port: 0, host: '127.0.0.1' });
      const baseUrl = `http://127.0.0.1:${(bff.server.address() as AddressInfo).port}`;
      // A browser each, so that each page's renderer process is its own and its CPU time can be told apart.
      const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
      browsers.push(browser);
      const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
      await page.goto(`${baseUrl}/sign-in`);
      const form = page.getByTestId('sign-in-form');
      await form.getByLabel('E-mail address').fill(operator.email);
      await form.getByLabel('Password').fill(operator.password);
      await form.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${baseUrl}/`);
      pages.push({ name: consoleDirs.length > 1 ? `[${i + 1}] ` : '', baseUrl, browser, page });
    }
    console.log(`database: ${database.where}; ${seconds} s a round, ${rounds} rounds; ms of the page's main thread a second`);
    for (const [i, dir] of consoleDirs.entries()) if (consoleDirs.length > 1) console.log(`[${i + 1}] ${dir}`);
    for (const [what, path] of [
      ['war room', `/events/${eventId}/war-room`],
      ['board', '/war-room'],
    ] as const) {
      // Every page open at once (each build's stream and figures the same), measured one after the other.
      for (const { page, baseUrl } of pages) {
        await page.goto(`${baseUrl}${path}`);
        await page.locator('[data-testid="wr-connection"][data-state="live"]').waitFor({ timeout: 90_000 });
      }
      await new Promise((r) => setTimeout(r, 2_000)); // the first messages and their charts settle
      const runs = pages.map(() => [] as Record<string, number>[]);
      for (let round = 0; round < rounds; round++)
        for (const [i, { name, browser, page }] of pages.entries()) {
          const r = await standing(browser, page, seconds);
          runs[i]!.push(r);
          console.log(`${name}${what.padEnd(9)} round ${round + 1}: ${line(r)}`);
        }
      for (const [i, { name, page }] of pages.entries()) {
        const m = Object.fromEntries(METRICS.map((k) => [k, median(runs[i]!.map((r) => r[k]!))]));
        console.log(`${name}${what.padEnd(9)} median : ${line(m)}`);
        if (profileDir) {
          mkdirSync(profileDir, { recursive: true });
          await profileOf(
            page,
            seconds,
            join(profileDir, `${what.replace(' ', '-')}${consoleDirs.length > 1 ? `-${i + 1}` : ''}.cpuprofile`),
          );
        }
      }
    }
  } finally {
    for (const browser of browsers) await browser.close();
    for (const bff of bffs) await bff.close();
    await controller.stop();
    await store.close();
    await database.close();
    if (builtHere) rmSync(builtHere, { recursive: true, force: true });
  }
}
