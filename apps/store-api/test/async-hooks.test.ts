import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { makeEvent } from './helper.js';

// Issue 27: on Node 20 an AsyncLocalStorage in use (or any async hook) turns on promise hooks for every promise of
// the process, ~12% of the store's busy time on the join path. The pool lanes are carried by each route's Db instead
// (plugins/pool-lanes.ts). The check runs in a process of its own (async-hooks-probe.ts): the test runner's process
// may have hooks on for its own reasons, or another test file's.

const root = join(import.meta.dirname, '..', '..', '..');
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 6 });
});
afterAll(() => t?.drop());

/** Runs the probe; its last line of output, parsed. */
async function probe(env: Record<string, string>): Promise<Record<string, unknown>> {
  const e: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(e)) if (k.startsWith('VITEST') || k === 'NODE_ENV' || k === 'TEST_DATABASE_URL') delete e[k];
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'async-hooks-probe.ts')], {
    cwd: root,
    env: { ...e, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  expect(code, out).toBe(0);
  const last = out.trim().split('\n').at(-1)!;
  return JSON.parse(last) as Record<string, unknown>;
}

describe('the store process and async hooks', () => {
  it('serves a join, a hold and a checkout with no promise hook turned on (no AsyncLocalStorage, no async hook)', async () => {
    const { eventId } = await makeEvent(t);
    const r = await probe({ DATABASE_URL: t.url, EVENT_ID: eventId });
    expect(r.statuses).toEqual({ join: 200, hold: 201, checkout: 200 });
    expect(r.before).toBe(false);
    expect(r.after).toBe(false);
    // The probe's control: an AsyncLocalStorage in use is seen.
    expect(r.control).toBe(true);
  });
});
