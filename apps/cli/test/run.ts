import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { run } from '../src/cli.js';

export const root = join(import.meta.dirname, '..', '..', '..');
const tsx = join(root, 'node_modules', '.bin', 'tsx');
const main = join(root, 'apps', 'cli', 'src', 'main.ts');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs one command line of the CLI with DATABASE_URL in its environment: its argument parsing, its output and its
 * exit status, as `main.ts` runs them, but in this process (a child process costs a second or more of CPU to load
 * the CLI through tsx, and the suite runs about a hundred command lines). `onsaleProcess` runs the real thing.
 */
export async function onsale(databaseUrl: string, ...args: string[]): Promise<Run> {
  return onsaleWith({ DATABASE_URL: databaseUrl }, ...args);
}

/** `onsale` with more of the environment set (ONSALE_PASSWORD, a secret). */
export async function onsaleWith(env: Record<string, string>, ...args: string[]): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const io = { out: (line: string) => void (stdout += `${line}\n`), err: (line: string) => void (stderr += `${line}\n`) };
  const code = await run(args, io, { ...process.env, ...env });
  return { code, stdout, stderr };
}

/** Runs the CLI as an operator would: `tsx apps/cli/src/main.ts` in a child process with DATABASE_URL set. */
export function onsaleProcess(databaseUrl: string | undefined, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const env = { ...process.env };
    if (databaseUrl === undefined) delete env.DATABASE_URL;
    else env.DATABASE_URL = databaseUrl;
    execFile(tsx, [main, ...args], { cwd: root, env }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}
