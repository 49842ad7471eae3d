import type { Command } from '../command.js';
import { text } from '../command.js';
import { UsageError } from '../errors.js';

export const REHEARSE_USAGE = `  rehearse --event-file <json> --fans <n> [--time-scale <k>] [--bots-share <b>] [--abandon <a>] [--slow-payers <s>]
           [--failing-payers <f>] [--target <url> | --spawn [--store-instances <n>] [--workers <m>] [--edge]]
           [--fault <name>@<p>% | <name>@<n>s ...] [--report <file.json>] [--seed <n>] [--connections <n>]
           [--max-connections <n>] [--poll-budget <polls/s>] [--tracers <n>] [--pre-open-seconds <s>]
           [--stop-after <s>]
                               a synthetic on-sale: creates a rehearsal event from the event file (its clock --time-scale
                               times fast, default 30: hold TTLs, pacing, windows), lets <n> virtual fans at it over
                               HTTP (a pre-open crowd, then a tail; --bots-share of them bots, default 0.3, in operators
                               sharing devices and cards, solving proofs-of-work; --abandon 0.1 of fans leave their hold,
                               --slow-payers 0.1 pay late, --failing-payers 0.05 meet a declined card first), prints
                               progress on stderr and the report (JSON at --report, Markdown beside it, and a row in
                               rehearsal_reports). --target: a running store API or edge using this database
                               (DATABASE_URL) and believing X-Forwarded-For from this machine (STORE_API_TRUST_PROXY).
                               --spawn: its own product on a scratch embedded PostgreSQL (default 2 store API processes,
                               1 worker). Faults, each at a share of the planned sale (@30%) or seconds after the open
                               (@90s): kill-store, kill-worker, restart-db (--spawn only), and slow-payments (with
                               --target too: the simulated gateway, for the rehearsal's event only, refuses half its
                               charges for load and answers the rest 60 s / K late, within 1-5 s, for 15% of the sale,
                               10 s or more). --stop-after (or Ctrl-C once): the fans stop there and the report covers
                               what happened so far, with what bound the run (each process's CPU, the machine's, the
                               database's commits). Exit 0 when the verdict is PASS (nothing sold twice, no duplicate
                               order, no drift, every fault recovered, not stopped early), 1 otherwise`;

const share = (name: string, v: string | boolean | undefined, dflt: number): number => {
  const s = text(v);
  if (s === undefined) return dflt;
  const n = Number(s);
  if (!/^\d*\.?\d+$/.test(s) || n < 0 || n > 1)
    throw new UsageError(`rehearse: ${name} must be a share from 0 to 1; got ${JSON.stringify(s)}`);
  return n;
};
const count = (name: string, v: string | boolean | undefined, dflt: number | undefined, min: number, max: number): number | undefined => {
  const s = text(v);
  if (s === undefined) return dflt;
  const n = Number(s);
  if (!/^\d+$/.test(s) || n < min || n > max)
    throw new UsageError(`rehearse: ${name} must be a whole number from ${min} to ${max}; got ${JSON.stringify(s)}`);
  return n;
};

export const rehearseCommands: Record<string, Command> = {
  rehearse: {
    options: {
      'event-file': { type: 'string' },
      fans: { type: 'string' },
      'time-scale': { type: 'string' },
      'bots-share': { type: 'string' },
      abandon: { type: 'string' },
      'slow-payers': { type: 'string' },
      'failing-payers': { type: 'string' },
      target: { type: 'string' },
      spawn: { type: 'boolean' },
      'store-instances': { type: 'string' },
      workers: { type: 'string' },
      edge: { type: 'boolean' },
      fault: { type: 'string', multiple: true },
      report: { type: 'string' },
      seed: { type: 'string' },
      connections: { type: 'string' },
      'max-connections': { type: 'string' },
      'poll-budget': { type: 'string' },
      tracers: { type: 'string' },
      'pre-open-seconds': { type: 'string' },
      'stop-after': { type: 'string' },
    },
    positionals: [],
    async run({ values, io }) {
      const eventFile = text(values['event-file']);
      if (!eventFile) throw new UsageError('rehearse needs --event-file <path to event json>');
      const fans = count('--fans', values.fans, undefined, 1, 10_000_000);
      if (fans === undefined) throw new UsageError('rehearse needs --fans <n>');
      const ts = text(values['time-scale']);
      const timeScale = ts === undefined ? 30 : Number(ts);
      if (!(timeScale >= 1 && timeScale <= 1000))
        throw new UsageError(`rehearse: --time-scale must be a number from 1 to 1000; got ${JSON.stringify(ts)}`);
      const target = text(values.target);
      const spawn = values.spawn === true;
      if (spawn === (target !== undefined)) throw new UsageError('rehearse needs exactly one of --target <url> or --spawn');
      if (target !== undefined && !/^https?:\/\/[^\s/]+(\/.*)?$/.test(target))
        throw new UsageError(`rehearse: --target must be an http(s) URL; got ${JSON.stringify(target)}`);
      if (!spawn && (values['store-instances'] !== undefined || values.workers !== undefined || values.edge === true))
        throw new UsageError('rehearse: --store-instances, --workers and --edge go with --spawn');
      const { parseFault } = await import('@onsale/shared/rehearsal');
      const rawFaults = (values.fault as unknown as string[] | undefined) ?? [];
      const faults = rawFaults.map((f) => {
        try {
          return parseFault(f);
        } catch (e) {
          throw new UsageError(`rehearse: ${(e as Error).message}`);
        }
      });
      const needSpawn = faults.filter((f) => f.kind !== 'slow-payments');
      if (needSpawn.length > 0 && !spawn)
        throw new UsageError(
          `rehearse: --fault ${needSpawn[0]!.text} needs --spawn (the rehearsal must own the processes and the database it strikes)`,
        );
      const seedText = text(values.seed);
      const { rehearse } = await import('./run.js');
      const report = await rehearse(
        (await import('../env.js')).loadCliConfig().databaseUrl,
        {
          eventFile,
          fans,
          timeScale,
          botsShare: share('--bots-share', values['bots-share'], 0.3),
          abandon: share('--abandon', values.abandon, 0.1),
          slowPayers: share('--slow-payers', values['slow-payers'], 0.1),
          failingPayers: share('--failing-payers', values['failing-payers'], 0.05),
          target,
          spawn: spawn
            ? {
                storeInstances: count('--store-instances', values['store-instances'], 2, 1, 16)!,
                workers: count('--workers', values.workers, 1, 1, 16)!,
                edge: values.edge === true,
              }
            : undefined,
          faults,
          reportFile: text(values.report),
          seed: seedText === undefined ? Math.floor(Math.random() * 1_000_000) : count('--seed', seedText, 0, 0, 2 ** 31 - 1)!,
          connections: count('--connections', values.connections, 64, 1, 4096)!,
          maxConnections: count('--max-connections', values['max-connections'], undefined, 4, 16_384),
          pollBudgetPerSecond: count('--poll-budget', values['poll-budget'], 500, 10, 1_000_000)!,
          // Default: 1% of the crowd, at most 500 (at 200,000 fans on a time scale of 30, about 450 polls a second).
          tracers: count('--tracers', values.tracers, Math.min(500, Math.ceil(fans * 0.01)), 0, 5_000)!,
          preOpenSeconds: count('--pre-open-seconds', values['pre-open-seconds'], undefined, 1, 3600),
          stopAfterSeconds: count('--stop-after', values['stop-after'], undefined, 1, 7 * 24 * 3600),
        },
        io,
      );
      const { reportMarkdown } = await import('@onsale/shared/rehearsal');
      io.out(reportMarkdown(report));
      if (report.verdict !== 'PASS') {
        const { CliError } = await import('../errors.js');
        throw new CliError('REHEARSAL_FAILED', report.reasons.join('; '));
      }
    },
  },
};
