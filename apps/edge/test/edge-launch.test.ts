import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EDGE_V8_FLAGS, edgeV8Flags, startLocalEdge } from '../src/local.js';

// The local edge's processes as users start and stop them: `npm run edge` (scripts/edge.ts) runs workerd serve and
// its framing guard; a terminal's Ctrl-C (SIGINT to the whole process group) stops all of them and the command exits
// 0 without an error; close() leaves no process behind; a port in use is one clear error.

const root = join(import.meta.dirname, '..', '..', '..');
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** The pids (not yet reaped zombies left out) whose field `index` of /proc/<pid>/stat after the name is `value`. */
async function processesWhere(index: number, value: number): Promise<number[]> {
  const { readdir, readFile } = await import('node:fs/promises');
  const pids: number[] = [];
  for (const d of await readdir('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = await readFile(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[index]) === value && fields[0] !== 'Z') pids.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
const groupOf = (pgid: number) => processesWhere(2, pgid);
const childrenOf = (pid: number) => processesWhere(1, pid);

const started: number[] = [];
afterAll(() => {
  for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

describe('the local edge as a process', () => {
  it('npm run edge: Ctrl-C (SIGINT to its process group) stops workerd and the framing guard, and the command exits 0', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/edge.ts'], {
      cwd: root,
      env: { ...process.env, EDGE_PORT: '0', STORE_API_URL: 'http://127.0.0.1:9' },
      detached: true, // a process group of its own, as a terminal gives a command
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(child.pid!);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
    await expect.poll(() => out, { timeout: 60_000 }).toContain('Ctrl-C to stop.');
    expect(out).toMatch(/edge {8}http:\/\/127\.0\.0\.1:\d+ {3}\(workerd serve behind its framing guard/);
    const group = await groupOf(child.pid!);
    const names = await Promise.all(
      group.map(async (pid) => (await import('node:fs/promises')).readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')),
    );
    expect(names.some((n) => n.includes('workerd') && n.includes('serve'))).toBe(true);
    expect(names.some((n) => n.includes('framing-guard'))).toBe(true);
    started.push(...group);

    process.kill(-child.pid!, 'SIGINT');
    expect(await exited).toBe(0);
    await expect.poll(async () => (await groupOf(child.pid!)).length, { timeout: 10_000 }).toBe(0);
    expect(err).not.toMatch(/error|uncaught/i);
  });

  it('npm run edge killed with kill -9: the guard sees it gone and stops, taking workerd along', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/edge.ts'], {
      cwd: root,
      env: { ...process.env, EDGE_PORT: '0', STORE_API_URL: 'http://127.0.0.1:9' },
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    started.push(child.pid!);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await expect.poll(() => out, { timeout: 60_000 }).toContain('Ctrl-C to stop.');
    const { readFile } = await import('node:fs/promises');
    const group = await groupOf(child.pid!);
    const named = await Promise.all(
      group.map(async (pid) => ({ pid, cmd: await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '') })),
    );
    const edgePids = named.filter((p) => p.cmd.includes('workerd') || p.cmd.includes('framing-guard')).map((p) => p.pid);
    expect(edgePids).toHaveLength(2);
    started.push(...group);
    // The launcher is the process that ran scripts/edge.ts (tsx runs it in a child of its own): kill -9 both.
    for (const p of named.filter((x) => x.cmd.includes('scripts/edge.ts'))) process.kill(p.pid, 'SIGKILL');
    await expect.poll(() => edgePids.filter(alive), { timeout: 15_000 }).toEqual([]);
  });

  it("V8 flags reach workerd's isolate, and what V8 prints arrives while workerd runs (the edge bench's --trace-gc)", async () => {
    const lines: string[] = [];
    const edge = await startLocalEdge({
      storeApiUrl: 'http://127.0.0.1:9',
      queueTokenSecret: '',
      authSecret: '',
      framingGuard: false,
      script: `export default { fetch() { gc(); return new Response('collected'); } };`,
      v8Flags: ['--expose-gc', '--trace-gc'],
      log: (line) => lines.push(line),
    });
    started.push(edge.pid);
    try {
      expect(await (await fetch(`${edge.url}/`)).text()).toBe('collected');
      // The full collection the worker asked for, reported by V8 before workerd exits (its stdout line-buffered).
      await expect.poll(() => lines.some((l) => /ms: Mark-(Compact|Sweep)/.test(l)), { timeout: 10_000 }).toBe(true);
    } finally {
      await edge.close();
    }
  });

  it("EDGE_V8_FLAGS from the environment replaces the edge's own V8 settings; empty is V8's defaults; a word not a flag is refused", () => {
    expect(edgeV8Flags({})).toEqual(EDGE_V8_FLAGS);
    expect(edgeV8Flags({ EDGE_V8_FLAGS: '' })).toEqual([]);
    expect(edgeV8Flags({ EDGE_V8_FLAGS: ' --max-semi-space-size=4  --single-threaded-gc ' })).toEqual([
      '--max-semi-space-size=4',
      '--single-threaded-gc',
    ]);
    expect(() => edgeV8Flags({ EDGE_V8_FLAGS: '--max-semi-space-size=1 rm' })).toThrow(/EDGE_V8_FLAGS: "rm" is not a V8 flag/);
  });

  it("workerd's V8 runs with the edge's young generation of 1 MB (EDGE_V8_FLAGS), and V8's own without it", async () => {
    // A request that makes about 40 MB of short-lived objects: with a 1 MB semi-space no scavenge frees more than
    // about 1 MB (V8's default young generation here frees several MB a scavenge). The batch workerd destroys after
    // each collection, on the thread that answers, is as large as what the collection freed.
    const script = `export default { fetch() { let n = 0; for (let i = 0; i < 400000; i++) { const o = { a: i, b: [i, i + 1], c: 'x' + i }; n += o.b.length; } return new Response(String(n)); } };`;
    const largestFreed = async (edgeV8Flags: boolean) => {
      const lines: string[] = [];
      const edge = await startLocalEdge({
        ...{ storeApiUrl: 'http://127.0.0.1:9', queueTokenSecret: '', authSecret: '', framingGuard: false, script, edgeV8Flags },
        v8Flags: ['--trace-gc'],
        log: (line) => lines.push(line),
      });
      started.push(edge.pid);
      try {
        for (let i = 0; i < 3; i++) expect((await fetch(`${edge.url}/`)).status).toBe(200);
        const freed = () =>
          lines.flatMap((l) => {
            const m = /ms: Scavenge.*? ([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB/.exec(l);
            return m ? [Number(m[1]) - Number(m[2])] : [];
          });
        await expect.poll(() => freed().length, { timeout: 10_000 }).toBeGreaterThan(5);
        return Math.max(...freed());
      } finally {
        await edge.close();
      }
    };
    expect(await largestFreed(true)).toBeLessThanOrEqual(1.1);
    expect(await largestFreed(false)).toBeGreaterThan(2);
  });

  it('close() stops workerd and the guard', async () => {
    const edge = await startLocalEdge({ storeApiUrl: 'http://127.0.0.1:9', queueTokenSecret: '', authSecret: '', log: () => {} });
    started.push(edge.pid, edge.guardPid!);
    expect(alive(edge.pid) && alive(edge.guardPid!)).toBe(true);
    await edge.close();
    await edge.close(); // twice is fine
    await expect.poll(() => alive(edge.pid) || alive(edge.guardPid!)).toBe(false);
  });

  it('a port in use: EADDRINUSE naming the port, with or without the guard, and nothing left running', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      for (const framingGuard of [true, false]) {
        const attempt = startLocalEdge({
          storeApiUrl: 'http://127.0.0.1:9',
          queueTokenSecret: '',
          authSecret: '',
          port,
          framingGuard,
          log: () => {},
        });
        await expect(attempt).rejects.toMatchObject({ code: 'EADDRINUSE', port, message: expect.stringContaining(`:${port}`) });
      }
      // No workerd and no guard of this process left (esbuild's own service process stays, as esbuild keeps it).
      const ours = async () => {
        const { readFile } = await import('node:fs/promises');
        const lines = await Promise.all(
          (await childrenOf(process.pid)).map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')),
        );
        return lines.filter((l) => l.includes('workerd') || l.includes('framing-guard'));
      };
      await expect.poll(ours).toEqual([]);
    } finally {
      taken.close();
    }
  });
});
