import { execFile } from 'node:child_process';
import { join } from 'node:path';

export const root = join(import.meta.dirname, '..', '..', '..');
const tsx = join(root, 'node_modules', '.bin', 'tsx');
const main = join(root, 'apps', 'cli', 'src', 'main.ts');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI as an operator would: a child process with DATABASE_URL in its environment. */
export function onsale(databaseUrl: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(tsx, [main, ...args], { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}
