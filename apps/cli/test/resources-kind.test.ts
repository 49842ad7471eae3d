import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { perRequestOf, answeredByKind } from '@onsale/shared/rehearsal';
import { kindOf } from '../src/rehearse/resources.js';

// The rehearsal's sampler names each process it started by ONSALE_PROCESS (read from /proc/<pid>/environ): real
// processes here, as the spawned product's are.
const started: ChildProcess[] = [];
afterEach(() => {
  for (const c of started.splice(0)) c.kill('SIGKILL');
});

function idle(name: string | undefined): number {
  const env = { ...process.env };
  delete env.ONSALE_PROCESS;
  if (name) env.ONSALE_PROCESS = name;
  const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60000)'], { env, stdio: 'ignore' });
  started.push(c);
  return c.pid!;
}

describe.runIf(process.platform === 'linux')('the rehearsal sampler: kinds of process', () => {
  it("counts the edge's framing guard as the edge and the rehearsal's watchdog as the driver's", () => {
    expect(kindOf(idle('edge-1'), 'node', process.pid)).toBe('edge (framing guard)');
    expect(kindOf(idle('rehearsal-1'), 'node', process.pid)).toBe('driver');
  });

  it('keeps the store, the worker, workerd and PostgreSQL apart, and everything else as the product', () => {
    expect(kindOf(idle('store-2'), 'node', process.pid)).toBe('store');
    expect(kindOf(idle('worker-1'), 'node', process.pid)).toBe('worker');
    expect(kindOf(idle(undefined), 'node', process.pid)).toBe('product (BFF, supervisor, tools)');
    expect(kindOf(idle(undefined), 'workerd', process.pid)).toBe('edge (workerd)');
    expect(kindOf(idle(undefined), 'postgres', process.pid)).toBe('postgres');
    expect(kindOf(process.pid, 'node', process.pid)).toBe('driver');
    // tsx's esbuild service: the driver's when the driver started it, the product's when the product did.
    expect(kindOf(idle(undefined), 'esbuild', process.pid, process.pid)).toBe('driver');
    expect(kindOf(idle(undefined), 'esbuild', process.pid, process.pid + 1)).toBe('product (BFF, supervisor, tools)');
  });

  it("puts the framing guard's CPU in the edge's figure per request, still in the product's", () => {
    const group = (name: string, cpuSeconds: number) => ({
      name,
      processes: 1,
      cpuSeconds,
      avgCores: 0,
      peakCores: 0,
      busiestProcessCores: 0,
      multiCore: false,
    });
    const p = perRequestOf(
      [group('edge (workerd)', 3), group('edge (framing guard)', 1), group('product (BFF, supervisor, tools)', 0.5), group('driver', 2)],
      { ...answeredByKind(), 'status (edge)': 1000 },
    );
    expect(p.processes.find((x) => x.name === 'edge')).toEqual({ name: 'edge', cpuSeconds: 4, cpuMsPerRequest: 4 });
    expect(p.processes.find((x) => x.name === 'other of the product')?.cpuSeconds).toBe(0.5);
    expect(p.product.cpuSeconds).toBe(4.5);
  });
});
