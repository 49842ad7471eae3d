import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, closeSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DomainError } from '@onsale/shared';
import type { Db } from '@onsale/shared/db';
import { abandonRehearsalRun, findRehearsalStartedSince, rehearseArgs, type RehearsalLaunch } from '@onsale/shared/rehearsal';

/** Starts rehearsals for the console: `onsale rehearse` against the product's fan-facing URL, on its database. */
export interface RehearsalLauncher {
  /** The fan-facing URL the rehearsals drive (the edge, else the store API). */
  readonly target: string;
  /** Starts one and resolves with its run's id once the run is recorded; refuses with REHEARSAL_NOT_STARTED if it stopped first. */
  start(launch: RehearsalLaunch): Promise<{ runId: string; pid: number; log: string }>;
  /** Stops the runs still going and waits for them (each is then ERROR unless it finished); the BFF calls it on close. */
  close(): Promise<void>;
}

export interface CliRehearsalLauncherOptions {
  db: Db;
  /** The database the rehearsal writes its event and report to: the product's own (DATABASE_URL). */
  databaseUrl: string;
  target: string;
  /** The repository (the CLI and the example event files are read from it). */
  root: string;
  /** Where each run's output goes, a file per run (default <root>/.data/rehearsals). */
  logDir?: string;
  /** How long a run has to record itself before it counts as not started (default 2 minutes: a loaded machine). */
  startTimeoutMs?: number;
}

/**
 * Runs `onsale rehearse` in a child process of this one (it stops with the product), its output in a log file, and
 * waits for the run's row in rehearsal_reports: the console then follows it there (RUNNING, then its report).
 */
export function cliRehearsalLauncher(o: CliRehearsalLauncherOptions): RehearsalLauncher {
  const logDir = o.logDir ?? join(o.root, '.data', 'rehearsals');
  const running = new Set<ChildProcess>();
  const stopping = new WeakMap<ChildProcess, Promise<void>>();
  return {
    target: o.target,
    async close() {
      await Promise.all(
        [...running].map((c) => {
          c.kill('SIGTERM');
          return stopping.get(c) ?? Promise.resolve();
        }),
      );
    },
    async start(launch) {
      mkdirSync(logDir, { recursive: true });
      const log = join(logDir, `rehearsal-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
      const fd = openSync(log, 'a');
      const startedAt = await o.db.selectNoFrom((eb) => eb.fn<Date>('now', []).as('now')).executeTakeFirstOrThrow();
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', join(o.root, 'apps', 'cli', 'src', 'main.ts'), ...rehearseArgs(launch, o.target)],
        {
          cwd: o.root,
          env: { ...process.env, DATABASE_URL: o.databaseUrl },
          stdio: ['ignore', fd, fd],
        },
      );
      closeSync(fd);
      running.add(child);
      let exited: number | null | undefined;
      let runId: string | undefined;
      const ended = new Promise<void>((resolve) =>
        child.on('exit', (code) => {
          exited = code ?? 1;
          // A driver that stopped without writing its report leaves its run ERROR, not RUNNING for ever.
          // Ignored on purpose: A run the database could not mark is shown as abandoned by the next list (its driver is gone).
          void (runId ? abandonRehearsalRun(o.db, runId).catch(() => {}) : Promise.resolve()).finally(() => {
            running.delete(child);
            resolve();
          });
        }),
      );
      stopping.set(child, ended);
      const deadline = Date.now() + (o.startTimeoutMs ?? 120_000);
      for (;;) {
        const row = await findRehearsalStartedSince(o.db, startedAt.now, launch.fans);
        if (row) {
          runId = row.id;
          return { runId, pid: child.pid ?? 0, log };
        }
        if (exited !== undefined || Date.now() > deadline) {
          if (exited === undefined) child.kill('SIGTERM');
          const tail = readFileSync(log, 'utf8').trim().split('\n').slice(-3).join(' ');
          throw new DomainError('unavailable', 'REHEARSAL_NOT_STARTED', `The rehearsal stopped before it started: ${tail || 'no output'}`, {
            field: 'example',
          });
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    },
  };
}
