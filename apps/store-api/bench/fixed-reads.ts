/**
 * The store's per-sale reads, old and new, alternately on one connection: a section view's refresh (the full read
 * of a section's available seats, against SeatDirectory's read of their ids) and a lapse of the event cache (its four
 * statements, against the one-statement check that keeps an unchanged entry). Prints this process's CPU and the
 * backend's (from /proc) per call. A stadium-sized event (examples/stadium.json: 150 sections of 400 seats) is
 * created in the database of DATABASE_URL (migrated).
 *
 *   DATABASE_URL=postgres://... npx tsx apps/store-api/bench/fixed-reads.ts [calls] [rounds]
 */
import { readFileSync } from 'node:fs';
import { createDb, type Db } from '@onsale/shared/db';
import { sql } from 'kysely';
import { createEvent } from '../../../packages/shared/src/sale-setup/create-event.js';
import { parseEventFile, getEvent, getSections } from '../../../packages/shared/src/events/events.service.js';
import { getTiers } from '../../../packages/shared/src/allocations/allocations.service.js';
import { findBlockedAccounts } from '../../../packages/shared/src/events/blocks.js';
import { eventCacheFingerprint } from '../../../packages/shared/src/allocations/allocations.repository.js';
import { findAvailableSeats } from '../../../packages/shared/src/inventory/holds.repository.js';
import { SeatDirectory } from '../../../packages/shared/src/inventory/seat-directory.js';

const calls = Number(process.argv[2] ?? 300);
const rounds = Number(process.argv[3] ?? 3);
const db: Db = createDb(process.env.DATABASE_URL!, { max: 1 });

const ticks = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(f[11]) + Number(f[12]); // utime + stime, in 1/100 s
};

async function main() {
  const file = JSON.parse(readFileSync('examples/stadium.json', 'utf8')) as Record<string, unknown>;
  const spec = parseEventFile({
    ...file,
    startsAt: new Date(Date.now() + 86_400_000).toISOString(),
    onsaleAt: new Date(Date.now() - 3_600_000).toISOString(),
  });
  const { eventId } = await db.transaction().execute((trx) => createEvent(trx, spec, 'system', { signOff: true }));
  const codes = (await getSections(db, eventId)).map((s) => s.code);
  const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db);
  const backend = rows[0]!.pid;
  const directory = new SeatDirectory();

  const cases: Record<string, (i: number) => Promise<unknown>> = {
    'section view, full read': (i) => findAvailableSeats(db, eventId, codes[i % codes.length]!),
    'section view, ids (SeatDirectory)': (i) => directory.available(db, eventId, codes[i % codes.length]!, null),
    'event cache lapse, four statements': async () => {
      await getEvent(db, eventId);
      await Promise.all([getSections(db, eventId), getTiers(db, eventId), findBlockedAccounts(db, eventId)]);
    },
    'event cache lapse, the check': () => eventCacheFingerprint(db, eventId),
  };
  // Unmeasured: plans cached, the directory filled.
  for (const run of Object.values(cases)) for (let i = 0; i < 200; i++) await run(i);
  for (let r = 0; r < rounds; r++) {
    for (const [name, run] of Object.entries(cases)) {
      const cpu = process.cpuUsage();
      const b = ticks(backend);
      const t = performance.now();
      for (let i = 0; i < calls; i++) await run(i);
      const wall = performance.now() - t;
      const own = process.cpuUsage(cpu);
      const us = (own.user + own.system) / calls;
      const pg = ((ticks(backend) - b) * 10_000) / calls;
      console.log(
        `round ${r + 1}  ${name.padEnd(36)} store ${us.toFixed(0).padStart(5)} us  backend ${pg.toFixed(0).padStart(5)} us  wall ${((wall * 1000) / calls).toFixed(0).padStart(5)} us a call`,
      );
    }
  }
  console.log(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  await db.deleteFrom('events').where('id', '=', eventId).execute();
  await db.destroy();
}

void main();
