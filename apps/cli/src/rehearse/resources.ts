import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { committedTransactions, type Db } from '@onsale/shared/db';
import { boundOf, perRequestOf, type ProcessGroupUse, type RequestKind, type ResourceUse } from '@onsale/shared/rehearsal';

// What the rehearsal's processes used of the machine, read from /proc every few seconds: the driver (this process)
// and everything it started (the spawned product: its store API and worker processes, workerd, the embedded
// PostgreSQL and its backends), the machine's own busy time (so other work on it shows), and the product database's
// commits. Linux only; elsewhere the report says the machine was not measured.

/** Clock ticks a second for /proc's CPU times (USER_HZ: 100 on Linux's every common build). */
const TICKS = 100;

interface ProcStat {
  pid: number;
  comm: string;
  ppid: number;
  ticks: number;
  start: number;
}

function readStat(pid: string): ProcStat | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm is in parentheses and may hold spaces or parentheses itself: the fields after it follow the last ')'.
    const close = s.lastIndexOf(')');
    const rest = s.slice(close + 2).split(' ');
    return {
      pid: Number(pid),
      comm: s.slice(s.indexOf('(') + 1, close),
      ppid: Number(rest[1]),
      ticks: Number(rest[11]) + Number(rest[12]),
      start: Number(rest[19]),
    };
  } catch {
    return undefined; // gone between the listing and the read
  }
}

function machineTicks(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - v[3]! - v[4]!, total };
  } catch {
    return undefined;
  }
}

/**
 * The kind of one of the driver's descendants, by its name in ONSALE_PROCESS (`store-1`, `worker-1`; `edge-1` the
 * edge's framing guard, which passes every byte between the fans and workerd; `rehearsal-1` the rehearsal's own
 * watchdog, the crowd's side, not the product's), else by its command (the driver's own tsx esbuild service is the
 * driver's). Everything else the rehearsal started is the product as `npm start` runs it (the supervisor with the
 * BFF, their tsx esbuild services): counted as such.
 */
export function kindOf(pid: number, comm: string, self: number, ppid?: number): string {
  if (pid === self) return 'driver';
  // tsx's esbuild service for the driver's own modules (a child of the driver itself, not of the product's).
  if (ppid === self && comm === 'esbuild') return 'driver';
  if (comm === 'postgres') return 'postgres';
  if (comm.startsWith('workerd')) return 'edge (workerd)';
  try {
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8');
    const name = /(?:^|\0)ONSALE_PROCESS=([a-z]+)-\d+/.exec(env)?.[1];
    if (name === 'store') return 'store';
    if (name === 'worker') return 'worker';
    if (name === 'edge') return 'edge (framing guard)';
    if (name === 'rehearsal') return 'driver';
  } catch {
    // unreadable: counted with the rest of the product
  }
  return 'product (BFF, supervisor, tools)';
}

/** Kinds whose one process may use more than one core. */
const MULTI_CORE = new Set(['postgres', 'edge (workerd)']);

export class ResourceSampler {
  private readonly self = process.pid;
  private readonly linux = process.platform === 'linux';
  /** Per process (pid:start): its kind, ticks when first seen, ticks last seen, when first and last seen. */
  private readonly seen = new Map<string, { kind: string; first: number; last: number; firstAt: number; lastAt: number }>();
  private readonly peak = new Map<string, number>();
  private lastSampleAt = 0;
  private lastByKind = new Map<string, number>();
  private readonly startedAt = Date.now();
  private machineStart: { busy: number; total: number } | undefined;
  private machineLast: { busy: number; total: number } | undefined;
  private loadPeak = 0;
  private commitsStart: number | undefined;
  private commitsLast: { n: number; at: number } | undefined;
  private peakCommits = 0;
  private readonly timer: NodeJS.Timeout;
  private sampling = false;

  constructor(
    private readonly db: Db | undefined,
    everyMs = 5000,
  ) {
    this.machineStart = this.linux ? machineTicks() : undefined;
    this.sampleProcesses(true);
    void this.sampleCommits();
    this.timer = setInterval(() => void this.sample(), everyMs);
    this.timer.unref();
  }

  private sampleProcesses(baseline = false) {
    if (!this.linux) return;
    const now = Date.now();
    const all = new Map<number, ProcStat>();
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      const s = readStat(d);
      if (s) all.set(s.pid, s);
    }
    // The driver and its descendants.
    const children = new Map<number, number[]>();
    for (const s of all.values()) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s.pid]);
    const mine: ProcStat[] = [];
    const stack = [this.self];
    while (stack.length) {
      const pid = stack.pop()!;
      const s = all.get(pid);
      if (s) mine.push(s);
      stack.push(...(children.get(pid) ?? []));
    }
    for (const s of mine) {
      const key = `${s.pid}:${s.start}`;
      const p = this.seen.get(key);
      if (p) {
        p.last = s.ticks;
        p.lastAt = now;
      } else {
        // A process there when sampling began counts from then; one started since, from its birth.
        const first = baseline ? s.ticks : 0;
        this.seen.set(key, { kind: kindOf(s.pid, s.comm, this.self, s.ppid), first, last: s.ticks, firstAt: now, lastAt: now });
      }
    }
    const byKind = this.cpuByKind();
    if (this.lastSampleAt > 0) {
      const dt = (now - this.lastSampleAt) / 1000;
      for (const [kind, cpu] of byKind) {
        const cores = (cpu - (this.lastByKind.get(kind) ?? 0)) / dt;
        this.peak.set(kind, Math.max(this.peak.get(kind) ?? 0, cores));
      }
    }
    this.lastByKind = byKind;
    this.lastSampleAt = now;
    this.machineLast = machineTicks();
    this.loadPeak = Math.max(this.loadPeak, loadavg()[0]!);
  }

  private cpuByKind(): Map<string, number> {
    const out = new Map<string, number>();
    for (const p of this.seen.values()) out.set(p.kind, (out.get(p.kind) ?? 0) + (p.last - p.first) / TICKS);
    return out;
  }

  private async sampleCommits() {
    if (!this.db) return;
    try {
      const n = await committedTransactions(this.db);
      const at = Date.now();
      if (this.commitsStart === undefined) this.commitsStart = n;
      else if (this.commitsLast && at > this.commitsLast.at && n >= this.commitsLast.n)
        this.peakCommits = Math.max(this.peakCommits, ((n - this.commitsLast.n) * 1000) / (at - this.commitsLast.at));
      this.commitsLast = { n, at };
    } catch {
      // the database is down (a restart-db fault): the next sample counts across it
    }
  }

  private async sample() {
    if (this.sampling) return;
    this.sampling = true;
    try {
      this.sampleProcesses();
      await this.sampleCommits();
    } finally {
      this.sampling = false;
    }
  }

  /** Stops sampling (after one last sample) and says what the run used and what bound it. */
  async finish(
    driverLoopDelayP99Ms: number | null,
    joins?: ResourceUse['joins'],
    answered?: { byKind: Record<RequestKind, number>; unanswered: number; productMeasured: boolean },
  ): Promise<ResourceUse> {
    clearInterval(this.timer);
    await this.sample();
    const wallSeconds = Math.max(0.001, (Date.now() - this.startedAt) / 1000);
    const groups: ProcessGroupUse[] = [];
    const byKind = this.cpuByKind();
    for (const [name, cpuSeconds] of byKind) {
      const members = [...this.seen.values()].filter((p) => p.kind === name);
      const busiest = Math.max(
        0,
        ...members.map((p) => (p.last - p.first) / TICKS / Math.max(1, (p.lastAt - Math.max(p.firstAt, this.startedAt)) / 1000)),
      );
      groups.push({
        name,
        processes: members.length,
        cpuSeconds: Math.round(cpuSeconds * 10) / 10,
        avgCores: Math.round((cpuSeconds / wallSeconds) * 100) / 100,
        peakCores: Math.round((this.peak.get(name) ?? 0) * 100) / 100,
        busiestProcessCores: Math.round(busiest * 100) / 100,
        multiCore: MULTI_CORE.has(name),
      });
    }
    groups.sort((a, b) => b.avgCores - a.avgCores);
    const cores = availableParallelism();
    let machine: ResourceUse['machine'] = null;
    if (this.machineStart && this.machineLast && this.machineLast.total > this.machineStart.total) {
      const busyShare = (this.machineLast.busy - this.machineStart.busy) / (this.machineLast.total - this.machineStart.total);
      const ours = groups.reduce((a, g) => a + g.avgCores, 0);
      machine = {
        cores,
        busyShare: Math.round(busyShare * 1000) / 1000,
        otherCores: Math.round(Math.max(0, busyShare * cores - ours) * 100) / 100,
        loadAveragePeak: Math.round(this.loadPeak * 10) / 10,
      };
    }
    const database =
      this.commitsStart !== undefined && this.commitsLast
        ? {
            commitsPerSecond: Math.round(
              ((this.commitsLast.n - this.commitsStart) * 1000) / Math.max(1, this.commitsLast.at - this.startedAt),
            ),
            peakCommitsPerSecond: Math.round(this.peakCommits),
          }
        : null;
    const use = {
      wallSeconds: Math.round(wallSeconds),
      machine,
      groups,
      database,
      driverLoopDelayP99Ms,
      ...(joins ? { joins } : {}),
      ...(answered ? { perRequest: perRequestOf(groups, answered.byKind, answered.unanswered, answered.productMeasured) } : {}),
    };
    return { ...use, bound: boundOf(use) };
  }
}
