import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { expandSeats, parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { EventCache } from '@onsale/shared/allocations';
import { DomainError } from '@onsale/shared';
import { bestBlocks, HoldService, PartyMix, SeatmapCache, type SeatCell, type SingleSeatRule } from '@onsale/shared/inventory';
import { benchDatabase } from './database.js';

const root = join(import.meta.dirname, '..', '..', '..');

const USAGE = `usage: pnpm bench seats [--sections 20] [--rounds 5] [--seed 1] [--store-holds 3000] [--concurrency 20]

The CPU best-available spends per hold, with the event's no-single-seats rule on and off: --sections sections of
examples/stadium.json (400 seats each) are each sold to the end, hold after hold, as the hold path does it (the
candidates for the party from the section's view, in seat order, the first candidate taken), to parties of 1-4 in
equal shares and to parties of two only. The same parties in the same order for both; the order of the two
alternates between --rounds rounds. Prints CPU microseconds per hold (process.cpuUsage around the selection only)
with the rule on, off (the limit it is measured against: the selection as it was) and their ratio, and the seats
each sale left unsold.
Then the whole hold path in this process against PostgreSQL (BENCH_DATABASE_URL, else a scratch database): two
events of those sections, one with noSingleSeats on and one off, each taking --store-holds hold requests of 1-4
seats in a random section from --concurrency callers at once through HoldService.create (no HTTP); prints this
process's CPU microseconds per hold made for each, and their ratio (a first round warms the process and is not
counted; the order alternates between the four counted rounds).`;

interface Run {
  holds: number;
  cpuMicros: number;
  unsold: number;
}

/** A deterministic random source (Park-Miller), so both modes see the same parties and the same shuffles. */
function seeded(seed: number): () => number {
  let x = seed % 2147483647 || 1;
  return () => (x = (x * 48271) % 2147483647) / 2147483647;
}

/** Sells one section to the end: parties from `party()` until four in a row find no seats; CPU of the selection only. */
function sell(seats: readonly SeatCell[], party: () => number, rule: boolean, random: () => number): Run {
  const mix = new PartyMix();
  let view = [...seats];
  let holds = 0;
  let cpuMicros = 0;
  for (let refused = 0; refused < 4 && view.length > 0;) {
    const quantity = party();
    const before = process.cpuUsage();
    const single: SingleSeatRule | undefined = rule ? { fills: mix.record('bench', quantity) } : undefined;
    const candidates = bestBlocks(view, quantity, 8, 3, random, single);
    const spent = process.cpuUsage(before);
    cpuMicros += spent.user + spent.system;
    const block = candidates[0];
    if (!block) {
      refused++;
      continue;
    }
    refused = 0;
    holds++;
    const taken = new Set(block.seats.map((s) => s.id));
    view = view.filter((s) => !taken.has(s.id));
  }
  return { holds, cpuMicros, unsold: view.length };
}

export async function main(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      sections: { type: 'string', default: '20' },
      rounds: { type: 'string', default: '5' },
      seed: { type: 'string', default: '1' },
      'store-holds': { type: 'string', default: '3000' },
      concurrency: { type: 'string', default: '20' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const stadium = parseEventFile({
    ...JSON.parse(readFileSync(join(root, 'examples', 'stadium.json'), 'utf8')),
    onsaleAt: new Date(Date.now() + 86_400_000).toISOString(),
    startsAt: new Date(Date.now() + 2 * 86_400_000).toISOString(),
  });
  const count = Number(values.sections);
  const rounds = Number(values.rounds);
  const seed = Number(values.seed);
  const sections = stadium.sections.slice(0, count).map((s) => {
    let id = 0;
    return expandSeats({ sections: [s] }).map((x) => ({ id: ++id, rowIndex: x.rowIndex, seatNumber: x.seatNumber, quality: x.quality }));
  });
  const mixes = { 'parties of 1-4': (r: () => number) => 1 + Math.floor(r() * 4), 'parties of 2': () => 2 } as const;
  const out: Record<string, unknown> = {};
  for (const [name, party] of Object.entries(mixes)) {
    const total = { on: { holds: 0, cpuMicros: 0, unsold: 0 }, off: { holds: 0, cpuMicros: 0, unsold: 0 } };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
      for (const mode of order)
        sections.forEach((seats, i) => {
          // The same seed per section and round for both modes: the same parties in the same order.
          const parties = seeded(seed * 7919 + round * 104729 + i);
          const r = sell(seats, () => party(parties), mode === 'on', seeded(seed * 31 + round * 17 + i));
          total[mode].holds += r.holds;
          total[mode].cpuMicros += r.cpuMicros;
          total[mode].unsold += round === 0 ? r.unsold : 0;
        });
    }
    const per = (m: 'on' | 'off') => total[m].cpuMicros / total[m].holds;
    out[name] = {
      holds: { on: total.on.holds, off: total.off.holds },
      cpuMicrosPerHold: { on: Math.round(per('on') * 10) / 10, off: Math.round(per('off') * 10) / 10 },
      ratioOnToOff: Math.round((per('on') / per('off')) * 100) / 100,
      unsoldSeatsOfFirstRound: { on: total.on.unsold, off: total.off.unsold, of: sections.reduce((a, s) => a + s.length, 0) },
    };
  }
  out.store = await storePath(stadium, count, Number(values['store-holds']), Number(values.concurrency), seed);
  console.log(JSON.stringify(out, null, 2));
  for (const [name, r] of Object.entries(out) as [string, { cpuMicrosPerHold: { on: number; off: number }; ratioOnToOff: number }][])
    if (name !== 'store')
      console.log(
        `seats: ${name}: best-available ${r.cpuMicrosPerHold.on} us CPU per hold with no single seats, ${r.cpuMicrosPerHold.off} us without (ratio ${r.ratioOnToOff})`,
      );
  const store = out.store as { cpuMicrosPerHold: { on: number; off: number }; ratioOnToOff: number };
  console.log(
    `seats: the hold path (HoldService.create against PostgreSQL, this process): ${store.cpuMicrosPerHold.on} us CPU per hold with no single seats, ${store.cpuMicrosPerHold.off} us without (ratio ${store.ratioOnToOff})`,
  );
}

/** The whole hold path in this process, rule on and off: CPU per hold made, over `holds` requests each. */
async function storePath(stadium: ReturnType<typeof parseEventFile>, count: number, holds: number, concurrency: number, seed: number) {
  const bench = await benchDatabase();
  try {
    const sections = stadium.sections.slice(0, count);
    const total = { on: { holds: 0, cpuMicros: 0 }, off: { holds: 0, cpuMicros: 0 } };
    // Round 0 warms the process (V8 compiles the hold path on its first thousands of calls) and is not counted.
    for (let round = 0; round < 5; round++) {
      const order = round % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
      for (const mode of order) {
        const spec = parseEventFile({
          ...stadium,
          name: `Seats bench ${mode} ${round}`,
          onsaleAt: new Date(Date.now() - 60_000).toISOString(),
          startsAt: new Date(Date.now() + 86_400_000).toISOString(),
          sections,
          allocations: undefined,
          noSingleSeats: mode === 'on',
        });
        const { eventId } = await bench.db.transaction().execute((trx) => createEvent(trx, spec, 'bench', { signOff: true }));
        const random = seeded(seed * 131 + round);
        const service = new HoldService({ db: bench.db, events: new EventCache(bench.db), seatmap: new SeatmapCache(bench.db), random });
        // Warm: the event's views are read once before the measured requests.
        await service.create('warm', eventId, { section: sections[0]!.code, quantity: 1 });
        let next = 0;
        let made = 0;
        const before = process.cpuUsage();
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            while (next < holds) {
              const i = next++;
              const section = sections[Math.floor(random() * sections.length)]!.code;
              try {
                await service.create(`fan-${i}`, eventId, { section, quantity: 1 + Math.floor(random() * 4) });
                made++;
              } catch (e) {
                if (!(e instanceof DomainError)) throw e;
              }
            }
          }),
        );
        const spent = process.cpuUsage(before);
        if (round === 0) continue;
        total[mode].holds += made;
        total[mode].cpuMicros += spent.user + spent.system;
      }
    }
    const per = (m: 'on' | 'off') => total[m].cpuMicros / total[m].holds;
    return {
      holds: { on: total.on.holds, off: total.off.holds },
      cpuMicrosPerHold: { on: Math.round(per('on')), off: Math.round(per('off')) },
      ratioOnToOff: Math.round((per('on') / per('off')) * 100) / 100,
    };
  } finally {
    await bench.close();
  }
}
