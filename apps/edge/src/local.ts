// The edge worker run locally on `workerd serve`, Cloudflare's open-source runtime, as a self-hosted edge runs it: the
// `workerd` package's binary and a configuration generated here (no account, no network). `npm start -- --edge`,
// `npm run edge` (and so the rehearsal's `--edge`), the tests and the benchmark all start it here.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { EdgeEnv } from './config.js';
import type { FramingGuardOptions } from './framing-guard.js';

/** The compatibility date the worker is written for (wrangler.toml says the same). */
export const COMPATIBILITY_DATE = '2026-07-30';

/** The workerd binary the `workerd` package ships (its postinstall only checks it; nothing is downloaded). */
export const WORKERD_BIN: string = (createRequire(import.meta.url)('workerd') as { default: string }).default;

const entry = fileURLToPath(new URL('./index.ts', import.meta.url));

/**
 * The worker bundled as wrangler bundles it for Cloudflare: one ES module, browser platform with the workerd
 * conditions, every import (the shared edge modules) inlined. `minify` as for a deploy.
 */
export async function bundleWorker(opts: { entry?: string; minify?: boolean } = {}): Promise<string> {
  const out = await build({
    entryPoints: [opts.entry ?? entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    minify: opts.minify ?? false,
    write: false,
    logLevel: 'silent',
  });
  return out.outputFiles[0]!.text;
}

export interface LocalEdgeOptions {
  /** The store API the worker fronts. */
  storeApiUrl: string;
  queueTokenSecret: string;
  authSecret: string;
  /** EDGE_PORT; 0 for any free port. */
  port?: number;
  host?: string;
  watermarkTtlSeconds?: number;
  staleSeconds?: number;
  originTimeoutMs?: number;
  proxyTimeoutMs?: number;
  fanTimeoutMs?: number;
  breakerFailures?: number;
  breakerOpenSeconds?: number;
  /** EDGE_JOIN_BATCH: most joins in one request to the origin, or `off` (the default: each join proxied alone). */
  joinBatch?: number | 'off';
  /** EDGE_JOIN_ALONE_BELOW: joins at the origin below which a join goes alone (default 32; 0: every join batched). */
  joinAloneBelow?: number;
  /** EDGE_JOIN_BATCH_WAIT_MS: the longest a backlogged join waits for its batch (default 10). */
  joinBatchWaitMs?: number;
  /**
   * The framing guard in front of workerd (default on): malformed request framing answered 400 in the error shape
   * rather than workerd's bare 500. Off: workerd's own socket is the edge's.
   */
  framingGuard?: boolean;
  /** Another worker script instead (the benchmark's bare route). */
  script?: string;
  /** Where workerd's own output and the worker's console go (default: this process's stderr). */
  log?: (line: string) => void;
  /** More flags for workerd's V8 (its configuration's `v8Flags`, after EDGE_V8_FLAGS): the benchmark's `--trace-gc`. */
  v8Flags?: readonly string[];
  /** EDGE_V8_FLAGS, the runtime's settings the edge always runs with (default true; false: V8's own defaults, for a comparison). */
  edgeV8Flags?: boolean;
}

/**
 * The V8 settings every workerd the edge starts runs with (`npm start -- --edge`, `npm run edge`, the rehearsal, the
 * benchmark's every target alike). A young generation of 1 MB a semi-space instead of V8's default (up to 8 MB
 * here): workerd destroys the C++ side of each request's objects (Request, Response, Headers, bodies) in one batch
 * in a collection's epilogue, on the thread that answers, for every request since the previous collection. With
 * V8's default young generation that batch held some thousands of requests, 40-110 ms of CPU in which no
 * connection was answered (the edge bench's stalls, every connection at once, the p99); with 1 MB it holds some
 * hundreds, a few ms (perf, docs/benchmarks.md, 2026-12-07 14:15).
 */
export const EDGE_V8_FLAGS: readonly string[] = ['--max-semi-space-size=1'];

/**
 * The V8 settings this launch runs workerd with: EDGE_V8_FLAGS from the environment when it is set (flags separated
 * by spaces; empty for V8's own defaults), else the edge's own above. A word that is not a flag is refused.
 */
export function edgeV8Flags(env: NodeJS.ProcessEnv = process.env): readonly string[] {
  const given = env.EDGE_V8_FLAGS;
  if (given === undefined) return EDGE_V8_FLAGS;
  const flags = given.split(/\s+/).filter((f) => f !== '');
  for (const f of flags)
    if (!/^--[a-z0-9_-]+(=\S+)?$/i.test(f)) throw new Error(`EDGE_V8_FLAGS: "${f}" is not a V8 flag (--name or --name=value)`);
  return flags;
}

export interface LocalEdge {
  url: string;
  /** The workerd process's id (the benchmark reads its CPU time). */
  pid: number;
  /** The framing guard's process id, when it runs. */
  guardPid: number | undefined;
  /** Stops workerd (SIGTERM, then SIGKILL after 5 s); resolves once it has exited. Safe to call twice. */
  close(): Promise<void>;
}

const STDBUF = '/usr/bin/stdbuf';

/** A socket address as workerd's configuration spells it (an IPv6 address in brackets). */
const address = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`;

/**
 * The configuration `workerd serve` reads: the worker, one HTTP socket, and the network it may reach (the origin is
 * usually on this machine or a private network, which workerd's default `internet` service refuses). Every binding
 * is read from workerd's environment (`fromEnvironment`), so no value (and no secret) is written into a file or
 * needs quoting here.
 */
function capnpConfig(listen: string, bindings: readonly string[], v8Flags: readonly string[] = []): string {
  // (A Unix socket's address is `unix:<path>`, which needs no brackets.)
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "edge", worker = .edge),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "${listen}", http = (), service = "edge")],${v8Flags.length === 0 ? '' : `\n  v8Flags = [${v8Flags.map((f) => JSON.stringify(f)).join(', ')}],`}
);

const edge :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "${COMPATIBILITY_DATE}",
  bindings = [
${bindings.map((name) => `    (name = "${name}", fromEnvironment = "${name}"),`).join('\n')}
  ],
  globalOutbound = "internet",
);
`;
}

/** Starts the edge worker on `workerd serve`, listening on `port`, in front of `storeApiUrl`. */
export async function startLocalEdge(o: LocalEdgeOptions): Promise<LocalEdge> {
  const bindings: Record<keyof EdgeEnv, string> = {
    STORE_API_URL: o.storeApiUrl,
    QUEUE_TOKEN_SECRET: o.queueTokenSecret,
    AUTH_SECRET: o.authSecret,
    EDGE_WATERMARK_TTL_SECONDS: String(o.watermarkTtlSeconds ?? 2),
    EDGE_STALE_SECONDS: String(o.staleSeconds ?? 15),
    EDGE_ORIGIN_TIMEOUT_MS: String(o.originTimeoutMs ?? 5000),
    EDGE_PROXY_TIMEOUT_MS: String(o.proxyTimeoutMs ?? 20_000),
    EDGE_FAN_TIMEOUT_MS: String(o.fanTimeoutMs ?? 12_000),
    EDGE_BREAKER_FAILURES: String(o.breakerFailures ?? 5),
    EDGE_BREAKER_OPEN_SECONDS: String(o.breakerOpenSeconds ?? 5),
    // One isolate on this machine: the worker keeps cacheable answers in its own memory (workerd serve has no Cache
    // API storage of its own; on Cloudflare the binding is unset and the Cache API is used).
    EDGE_CACHE: 'memory',
    EDGE_JOIN_BATCH: String(o.joinBatch ?? 'off'),
    EDGE_JOIN_ALONE_BELOW: String(o.joinAloneBelow ?? 32),
    EDGE_JOIN_BATCH_WAIT_MS: String(o.joinBatchWaitMs ?? 10),
  };
  const script = o.script ?? (await bundleWorker());
  const dir = await mkdtemp(join(tmpdir(), 'onsale-edge-'));
  const log = o.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  let child: ChildProcess | undefined;
  let socketDir: string | undefined;
  try {
    await writeFile(join(dir, 'worker.js'), script, { mode: 0o600 });
    const guarded = o.framingGuard ?? true;
    const host = o.host ?? '127.0.0.1';
    // Behind the guard, workerd listens on a Unix socket in a directory of its own (0700), which lives as long as
    // workerd: the guard passes every byte both ways, and a Unix socket costs both processes less CPU per request
    // than a loopback TCP connection (no TCP stack, no acknowledgements).
    if (guarded) socketDir = await mkdtemp(join(tmpdir(), 'onsale-edge-sock-'));
    const socketPath = socketDir === undefined ? '' : join(socketDir, 'workerd.sock');
    // Behind the guard, workerd listens on a loopback port of its own; the guard takes EDGE_HOST:EDGE_PORT.
    await writeFile(
      join(dir, 'edge.capnp'),
      capnpConfig(guarded ? `unix:${socketPath}` : address(host, o.port ?? 0), Object.keys(bindings), [
        ...(o.edgeV8Flags === false ? [] : edgeV8Flags()),
        ...(o.v8Flags ?? []),
      ]),
      {
        mode: 0o600,
      },
    );
    // In the caller's process group: a terminal's Ctrl-C reaches workerd too, which stops at once and quietly (the
    // edge is the first thing npm start stops anyway), and a group kill (the rehearsal's guard) takes it along.
    // The environment is the bindings and nothing else of this process's.
    // With the caller's V8 flags (the benchmark's `--trace-gc`, which V8 prints to a buffered stdout), workerd's stdout is made
    // line-buffered by `stdbuf` (which execs workerd: the same process id), so each line arrives when it is printed.
    const [bin, args] =
      (o.v8Flags?.length ?? 0) > 0 && existsSync(STDBUF)
        ? [STDBUF, ['-oL', WORKERD_BIN, 'serve', join(dir, 'edge.capnp'), '--control-fd=3']]
        : [WORKERD_BIN, ['serve', join(dir, 'edge.capnp'), '--control-fd=3']];
    child = spawn(bin, args, {
      env: { ...bindings, ...(process.env.TZ ? { TZ: process.env.TZ } : {}) },
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    const workerdPort = await listening(child, log, guarded ? 0 : (o.port ?? 0));
    const proc = child;
    let guard: { port: number; proc: ChildProcess } | undefined;
    if (guarded) {
      try {
        guard = await startGuard({ host, port: o.port ?? 0, target: { path: socketPath } }, proc.pid!, log);
      } catch (e) {
        proc.kill('SIGKILL');
        throw e;
      }
    }
    const port = guard?.port ?? workerdPort;
    // A process that exits without closing it (an error, process.exit) takes workerd along.
    const sockets = socketDir;
    const atExit = () => {
      proc.kill('SIGKILL');
      guard?.proc.kill('SIGKILL');
      if (sockets !== undefined) rmSync(sockets, { recursive: true, force: true });
    };
    process.on('exit', atExit);
    const exited = new Promise<void>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) resolve();
      else proc.once('exit', () => resolve());
    });
    void exited.then(() => process.removeListener('exit', atExit));
    return {
      url: `http://${address(o.host === '0.0.0.0' || o.host === '::' || !o.host ? '127.0.0.1' : o.host, port)}`,
      pid: proc.pid!,
      guardPid: guard?.proc.pid,
      close: async () => {
        if (guard) await stopChild(guard.proc);
        if (proc.exitCode === null && proc.signalCode === null) {
          proc.kill('SIGTERM');
          const force = setTimeout(() => proc.kill('SIGKILL'), 5000);
          await exited;
          clearTimeout(force);
        }
        if (sockets !== undefined) await rm(sockets, { recursive: true, force: true });
      },
    };
  } catch (e) {
    child?.kill('SIGKILL');
    if (socketDir !== undefined) await rm(socketDir, { recursive: true, force: true });
    throw e;
  } finally {
    // workerd has read its configuration and the module by the time it listens (or it failed).
    await rm(dir, { recursive: true, force: true });
  }
}

const guardScript = fileURLToPath(new URL('./framing-guard.ts', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** The framing guard as a process of its own (so its CPU is counted as the edge's); resolves once it listens. */
function startGuard(
  { host, port, target }: FramingGuardOptions,
  workerdPid: number,
  log: (line: string) => void,
): Promise<{ port: number; proc: ChildProcess }> {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', guardScript, host, String(port), 'path' in target ? target.path : String(target.port), String(workerdPid)],
    {
      cwd: repoRoot,
      // Named as the product's processes are (ONSALE_PROCESS), so a rehearsal counts its CPU as the edge's.
      env: { PATH: process.env.PATH ?? '', ONSALE_PROCESS: 'edge-1' },
      // stdin open to this process: when it is gone (even by kill -9), so are the guard and workerd.
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  const said: string[] = [];
  createInterface({ input: proc.stderr }).on('line', (line) => {
    if (said.length < 20) said.push(line);
    log(line);
  });
  return new Promise((resolve, reject) => {
    createInterface({ input: proc.stdout }).on('line', (line) => {
      try {
        const m = JSON.parse(line) as { event?: string; port?: number };
        if (m.event === 'listen' && typeof m.port === 'number') return resolve({ port: m.port, proc });
      } catch {
        // not a control line
      }
      log(line);
    });
    proc.once('error', reject);
    proc.once('exit', (code, signal) => {
      const words = said.join('\n');
      const inUse = /address already in use/i.test(words);
      const err = new Error(
        inUse
          ? `the edge could not listen: address already in use :${port}`
          : `the edge's framing guard exited (${signal ?? `exit ${code}`}): ${words}`,
      );
      if (inUse) Object.assign(err, { code: 'EADDRINUSE', port });
      reject(err);
    });
  });
}

/** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. */
async function stopChild(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGTERM');
  const force = setTimeout(() => proc.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(force);
}

/** Resolves with the port workerd listens on (its control descriptor says so); rejects with its words if it exits. */
function listening(child: ChildProcess, log: (line: string) => void, wanted: number): Promise<number> {
  const said: string[] = [];
  for (const stream of [child.stdout, child.stderr] as Readable[])
    createInterface({ input: stream }).on('line', (line) => {
      if (said.length < 50) said.push(line);
      log(line);
    });
  return new Promise<number>((resolve, reject) => {
    const control = createInterface({ input: child.stdio[3] as Readable });
    control.on('line', (line) => {
      try {
        const m = JSON.parse(line) as { event?: string; socket?: string; port?: number };
        if (m.event === 'listen' && m.socket === 'http' && typeof m.port === 'number') resolve(m.port);
      } catch {
        // not a control message
      }
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      const words = said.join('\n');
      const inUse = /address already in use|EADDRINUSE/i.test(words);
      const err = new Error(
        inUse
          ? `workerd could not listen: address already in use :${wanted}`
          : `workerd exited before listening (${signal ?? `exit ${code}`})${words ? `: ${words}` : ''}`,
      ) as Error & { code?: string; port?: number };
      if (inUse) Object.assign(err, { code: 'EADDRINUSE', port: wanted });
      reject(err);
    });
  });
}
