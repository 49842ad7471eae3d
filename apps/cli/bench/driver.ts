// `npm run bench -- driver [--fans 5000] [--pre-open-seconds 20] [--port 0]`: the rehearsal's crowd driver alone,
// against a stand-in product that answers at once (stub-product.ts, its own process), so what is measured is the
// driver's own CPU a request (user + system of this process, its GC and libuv threads included), the figure the
// rehearsal's report gives as `resources.perRequest.driver` (issue 27: at most 0.3 ms).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Crowd } from '../src/rehearse/driver.js';

const here = dirname(fileURLToPath(import.meta.url));

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      fans: { type: 'string', default: '5000' },
      'pre-open-seconds': { type: 'string', default: '20' },
      port: { type: 'string', default: '0' },
      'polls-before-turn': { type: 'string', default: '4' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log('npm run bench -- driver [--fans 5000] [--pre-open-seconds 20] [--polls-before-turn 4] [--port 0]');
    return;
  }
  const fans = Number(values.fans);
  const eventFile = join(here, '..', '..', '..', 'examples', 'stadium.json');
  const spec = JSON.parse(readFileSync(eventFile, 'utf8')) as { sections: { code: string; qualityRank: number }[] };
  const stub = spawn(
    process.execPath,
    ['--import', 'tsx', join(here, 'stub-product.ts'), eventFile, values['polls-before-turn'], values.port],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    stub.stdout.once('data', (b: Buffer) => resolve(Number(b.toString().trim())));
    stub.once('exit', (code) => reject(new Error(`the stand-in product exited (${code})`)));
  });
  try {
    const now = Date.now();
    const preOpenMs = Number(values['pre-open-seconds']) * 1000;
    const onsaleAtMs = now + 1000 + Math.round(preOpenMs * 1.25);
    const crowd = new Crowd({
      fansUrl: `http://127.0.0.1:${port}`,
      eventId: '00000000-0000-4000-8000-000000000000',
      listingId: '00000000-0000-4000-8000-000000000001',
      onsaleAtMs,
      startAtMs: now + 1000,
      fans,
      timeScale: 30,
      botsShare: 0.3,
      abandon: 0.1,
      slowPayers: 0.1,
      failingPayers: 0.05,
      authSecret: 'a-bench-secret-that-is-long-enough-0123456789',
      sections: spec.sections.map((s) => ({ code: s.code, qualityRank: s.qualityRank, capacity: 0 })),
      perAccountSeats: 4,
      ticketsPerOrder: 2.5,
      holdTtlSeconds: 12,
      checkoutMinutes: 0.2,
      preOpenMs,
      preOpenShare: 0.7,
      tailMeanMs: 15_000,
      pollBudgetPerSecond: 500,
      connections: 64,
      seed: 2029,
      // Seat picking open from the start: the 30% of fans who pick read a section's seat list.
      seatPickingOpensAtMs: now,
      pickers: 0.3,
      accountPrefix: 'bench-',
      deadlineMs: 600_000,
    });
    const cpu0 = process.cpuUsage();
    const wall0 = performance.now();
    const r = await crowd.run();
    const cpu = process.cpuUsage(cpu0);
    const wall = (performance.now() - wall0) / 1000;
    const answered = Object.values(r.answeredByKind).reduce((a, b) => a + b, 0);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    console.log(
      JSON.stringify(
        {
          fans,
          bought: r.bought,
          unfinished: r.unfinished,
          answered,
          unanswered: r.unansweredRequests,
          byKind: r.answeredByKind,
          wallSeconds: Math.round(wall * 10) / 10,
          cpuSeconds: { user: Math.round(cpu.user / 1e4) / 100, system: Math.round(cpu.system / 1e4) / 100 },
          driverCpuMsPerRequest: Math.round((cpuMs / Math.max(1, answered)) * 1000) / 1000,
          eventLoopDelayP99Ms: r.eventLoopDelayP99Ms,
          loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
        },
        null,
        2,
      ),
    );
  } finally {
    stub.kill('SIGTERM');
  }
}
