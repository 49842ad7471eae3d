import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';

/**
 * The load generator's HTTP client: an undici pool of `connections` keep-alive connections. It shares this
 * machine's two cores with the server it measures, so it should cost as little as it can (undici writes a
 * request in one system call; node:http's client cost about twice the CPU per request here).
 */
export function createClient(baseUrl: string, connections: number) {
  const pool = new Pool(baseUrl, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  return {
    async request(
      method: string,
      path: string,
      headers: Record<string, string>,
      body?: unknown,
    ): Promise<{ status: number; body: any; ms: number }> {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const started = performance.now();
      const res = await pool.request({
        method: method,
        path,
        headers: payload ? { ...headers, 'content-type': 'application/json' } : headers,
        body: payload,
      });
      const text = await res.body.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        /* not JSON */
      }
      return { status: res.statusCode, body: parsed, ms: performance.now() - started };
    },
    /**
     * Opens `n` keep-alive connections (one GET on each, concurrently) before a measured run, as a load
     * balancer's pool of upstream connections is open before fans arrive: connection set-up is not what a hold costs.
     */
    async connect(n: number, path = '/healthz') {
      await Promise.all(Array.from({ length: n }, () => this.request('GET', path, {})));
    },
    close() {
      void pool.close();
    },
  };
}

/** Runs `worker` in `concurrency` loops until `durationMs` has passed; bounded in count and time. */
export async function runLoad(concurrency: number, durationMs: number, worker: (client: number) => Promise<void>, maxRequests = 2_000_000) {
  const deadline = performance.now() + durationMs;
  let issued = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, c) => {
      while (performance.now() < deadline && issued < maxRequests) {
        issued++;
        await worker(c);
      }
    }),
  );
  return { elapsedMs: performance.now() - started, issued };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function summarize(latencies: number[]) {
  const s = [...latencies].sort((a, b) => a - b);
  return { count: s.length, p50Ms: round(percentile(s, 50)), p99Ms: round(percentile(s, 99)), maxMs: round(s[s.length - 1] ?? 0) };
}

export const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

const root = join(import.meta.dirname, '..', '..', '..');

/**
 * The environment of a bench store API with the product's protections on, as it runs for fans (the bench server turns
 * them off unless told): rate limits, the bot gate, load shedding, X-Forwarded-For believed from its loopback proxy.
 */
export const protectedStoreEnv = (databaseUrl: string): Record<string, string> => ({
  DATABASE_URL: databaseUrl,
  NODE_ENV: 'development',
  DEV_AUTH: 'false',
  RATE_LIMIT_ENABLED: 'true',
  BOT_GATE_ENABLED: 'true',
  LOAD_SHED_ENABLED: 'true',
  STORE_API_TRUST_PROXY: 'loopback',
});

/** Starts a bench server script in its own Node process; resolves with the port it printed (READY <port>). */
export function startProcess(script: string, env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  // BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") is passed to the server processes.
  const extra = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...extra, '--import', 'tsx', script], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      // Anything else the server prints (BENCH_NODE_ARGS=--trace-gc, say) goes to this process's stderr, tagged.
      if (out.includes('READY ')) return void process.stderr.write(d.toString().replace(/^(?=.)/gm, `[${script.split('/').pop()}] `));
      out += d.toString();
      const m = /READY (\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`${script} exited ${code}`)));
  });
}

export async function stopProcess(child: ChildProcess) {
  child.removeAllListeners('exit');
  await new Promise<void>((r) => {
    child.once('exit', () => r());
    child.kill('SIGTERM');
  });
}

/**
 * CPU time (user + system, in microseconds) a process has used so far, from /proc (Linux); null elsewhere. Per
 * request, it says what a route costs whatever else shares the machine's cores during the run.
 */
export function cpuMicros(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of the whole line)
    return (ticks * 1_000_000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}
const CLOCK_TICKS = 100; // USER_HZ on Linux

/**
 * Runs `f` and returns its result with the CPU microseconds `pid` used meanwhile, per request (`count(result)`), and
 * the CPU this process (the load generator: the own client or autocannon, both in this process) used per request,
 * which should be far below the server's: the two share the machine's cores. `window` is the run's span on the
 * monotonic clock in microseconds, the clock of a `--cpu-prof` profile's timestamps, so a profile of the server can
 * be read over this run alone.
 */
export async function withCpu<T>(
  pid: number,
  f: () => Promise<T>,
  count: (r: T) => number,
): Promise<T & { cpuUsPerRequest: number | null; clientCpuUsPerRequest: number | null; window: [number, number] }> {
  const before = cpuMicros(pid);
  const own = process.cpuUsage();
  const start = Number(process.hrtime.bigint() / 1000n);
  const r = await f();
  const end = Number(process.hrtime.bigint() / 1000n);
  const ownUsed = process.cpuUsage(own);
  const after = cpuMicros(pid);
  const n = count(r);
  return {
    ...r,
    cpuUsPerRequest: before === null || after === null || n === 0 ? null : Math.round((after - before) / n),
    clientCpuUsPerRequest: n === 0 ? null : Math.round((ownUsed.user + ownUsed.system) / n),
    window: [start, end],
  };
}
