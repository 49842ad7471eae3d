import { describe, expect, it } from 'vitest';
import { answeredByKind, boundOf, perRequestOf, type ProcessGroupUse, type ResourceUse } from './resources.js';

const group = (name: string, avgCores: number, o: Partial<ProcessGroupUse> = {}): ProcessGroupUse => ({
  name,
  processes: 1,
  cpuSeconds: avgCores * 100,
  avgCores,
  peakCores: avgCores,
  busiestProcessCores: avgCores,
  multiCore: name === 'postgres' || name === 'edge (workerd)',
  ...o,
});
const use = (o: Partial<Omit<ResourceUse, 'bound'>>): Omit<ResourceUse, 'bound'> => ({
  wallSeconds: 100,
  machine: { cores: 2, busyShare: 0.5, otherCores: 0, loadAveragePeak: 1 },
  groups: [],
  database: { commitsPerSecond: 120, peakCommitsPerSecond: 300 },
  driverLoopDelayP99Ms: 20,
  ...o,
});

describe('boundOf', () => {
  it('names a single-threaded process at its one core, with how many of its kind ran', () => {
    const b = boundOf(use({ groups: [group('store', 1.7, { processes: 2, busiestProcessCores: 0.92 }), group('driver', 0.2)] }));
    expect(b).toEqual(['CPU of one store process: 0.92 of its one core on average (2 store processes, 1.70 cores together)']);
  });

  it('does not call a multi-core kind bound by one core, and names a busy machine with its biggest consumers', () => {
    const b = boundOf(
      use({
        machine: { cores: 2, busyShare: 0.97, otherCores: 0.4, loadAveragePeak: 9 },
        groups: [
          group('postgres', 0.3, { processes: 40, busiestProcessCores: 0.9 }),
          group('edge (workerd)', 0.6),
          group('driver', 0.5),
          group('store', 0.2),
        ],
      }),
    );
    expect(b).toHaveLength(1);
    expect(b[0]).toMatch(/^the machine's CPU: its 2 cores were 97% busy/);
    expect(b[0]).toContain('edge (workerd) 0.60, driver 0.50, postgres 0.30, store 0.20, other work on the machine 0.40');
  });

  it('blames the driver when its own event loop lagged', () => {
    expect(boundOf(use({ driverLoopDelayP99Ms: 2500, groups: [group('driver', 0.6)] }))).toEqual([
      "the driver itself: its event loop lagged 2500 ms at p99, so fans' steps ran late",
    ]);
  });

  it('says the run was not CPU-bound when nothing was near a limit, with the database commits', () => {
    const [b] = boundOf(use({ groups: [group('store', 0.3), group('driver', 0.1)] }));
    expect(b).toMatch(
      /^not CPU: the machine's cores were 50% busy, the busiest process kind store at 0.30 cores; the database committed 120/,
    );
  });
});

describe('boundOf and the crowd', () => {
  it("names the product's join pace first when fans waited long to send their joins", () => {
    const b = boundOf(
      use({
        groups: [group('store', 0.4)],
        joins: { arrivingPerSecond: 2333.3, joinedPerSecond: 41.6, arrivalLagMaxMs: 600_000 },
      }),
    );
    expect(b[0]).toBe(
      "the product's pace at taking joins: 42 a second against 2333 arriving a second, so fans waited up to 600 s to send theirs (the causes follow)",
    );
    expect(boundOf(use({ joins: { arrivingPerSecond: 100, joinedPerSecond: 99, arrivalLagMaxMs: 2000 } }))[0]).toMatch(/^not CPU/);
  });
});

describe('perRequestOf', () => {
  it("divides each kind of process's CPU by the requests answered, the product apart from the driver", () => {
    const answered = { ...answeredByKind(), join: 1000, 'status (edge)': 6000, 'status (origin)': 500, hold: 1500, checkout: 1000 };
    const p = perRequestOf(
      [
        group('driver', 0.3, { cpuSeconds: 3 }),
        group('edge (workerd)', 0.2, { cpuSeconds: 4 }),
        group('store', 0.2, { cpuSeconds: 5, processes: 2 }),
        group('postgres', 0.1, { cpuSeconds: 2.5, processes: 12 }),
        group('worker', 0.01, { cpuSeconds: 0.4 }),
        group('product (BFF, supervisor, tools)', 0.01, { cpuSeconds: 0.1 }),
      ],
      answered,
      7,
    );
    expect(p.requests).toBe(10_000);
    expect(p.unanswered).toBe(7);
    expect(p.answered).toEqual(answered);
    expect(p.processes).toEqual([
      { name: 'store', cpuSeconds: 5, cpuMsPerRequest: 0.5 },
      { name: 'edge', cpuSeconds: 4, cpuMsPerRequest: 0.4 },
      { name: 'driver', cpuSeconds: 3, cpuMsPerRequest: 0.3 },
      { name: 'database', cpuSeconds: 2.5, cpuMsPerRequest: 0.25 },
      { name: 'worker', cpuSeconds: 0.4, cpuMsPerRequest: 0.04 },
      { name: 'other of the product', cpuSeconds: 0.1, cpuMsPerRequest: 0.01 },
    ]);
    expect(p.driver).toEqual({ cpuSeconds: 3, cpuMsPerRequest: 0.3 });
    expect(p.product).toEqual({ cpuSeconds: 12, cpuMsPerRequest: 1.2 });
    expect(p.productMeasured).toBe(true);
  });

  it('has no figure per request when nothing was answered', () => {
    const p = perRequestOf([group('driver', 0.1, { cpuSeconds: 1 })], answeredByKind());
    expect(p.requests).toBe(0);
    expect(p.driver.cpuMsPerRequest).toBeNull();
    expect(p.product).toEqual({ cpuSeconds: 0, cpuMsPerRequest: null });
  });
});

describe('boundOf and CPU per request', () => {
  it("names a driver over its CPU budget per request, with the product's figure beside it", () => {
    const answered = { ...answeredByKind(), 'status (origin)': 1000 };
    const groups = [group('driver', 0.4, { cpuSeconds: 0.9 }), group('store', 0.3, { cpuSeconds: 0.6 })];
    const b = boundOf(use({ groups, perRequest: perRequestOf(groups, answered) }));
    expect(b).toContain(
      "the crowd's driver: 0.900 ms of CPU per request (its budget 0.3 ms) against the product's 0.600 ms, on the same cores",
    );
    const cheap = [group('driver', 0.1, { cpuSeconds: 0.2 }), group('store', 0.3, { cpuSeconds: 0.6 })];
    expect(boundOf(use({ groups: cheap, perRequest: perRequestOf(cheap, answered) })).join(' ')).not.toMatch(/crowd's driver/);
    // Against --target the product was not measured: no figure of it beside the driver's.
    expect(boundOf(use({ groups, perRequest: perRequestOf(groups, answered, 0, false) }))).toContain(
      "the crowd's driver: 0.900 ms of CPU per request (its budget 0.3 ms)",
    );
  });
});
