import type { ChildProcess } from 'node:child_process';
import { delimiter, join } from 'node:path';

/**
 * A user's shell for a child `npm start` or CLI: no test-runner variables and no test database, the workspace's
 * binaries on PATH as scripts/bootstrap.mjs puts them.
 */
export function userEnv(root: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env))
    if (k.startsWith('VITEST') || k === 'NODE_ENV' || k === 'TEST_DATABASE_URL' || k === 'DATABASE_URL') delete env[k];
  return { ...env, PATH: `${join(root, 'node_modules', '.bin')}${delimiter}${env.PATH ?? ''}`, ...extra };
}

/** Polls a child's collected output for `pattern`: fails at once when the child has exited, and after `ms` otherwise. */
export async function waitForOutput(child: ChildProcess, output: () => string, pattern: RegExp, ms: number): Promise<RegExpMatchArray> {
  const end = Date.now() + ms;
  for (;;) {
    const m = output().match(pattern);
    if (m) return m;
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`npm start exited before printing ${pattern}:\n${output()}`);
    if (Date.now() > end) throw new Error(`npm start did not print ${pattern} within ${ms / 1000} s:\n${output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
