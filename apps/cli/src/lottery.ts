import type { Io } from './commands.js';
import { json, text, type Command } from './command.js';
import { CliError } from './errors.js';

// Registration lotteries: run the draw, read the summary, and the lottery half of audit:verify. Registered in
// cli.ts's command table; the rules are in @onsale/shared/lottery.

export const LOTTERY_USAGE = `  lottery:draw <eventId> [--actor <name>]
                               run a registration lottery's draw once registration has closed: reveal the seed,
                               pick the winners and their cohorts, put everyone else on the listing's waitlist
                               (audited); prints the draw as JSON. Run again, it prints the recorded draw and
                               changes nothing
  lottery:show <eventId>       a registration lottery's settings, registration count and draw as JSON`;

async function context() {
  const [{ withDatabase }, { loadCliConfig }, ops] = await Promise.all([
    import('./commands.js'),
    import('./env.js'),
    import('./command.js'),
  ]);
  return { withDatabase, databaseUrl: loadCliConfig().databaseUrl, defaultActor: ops.defaultActor };
}

export const lotteryCommands: Record<string, Command> = {
  'lottery:draw': {
    options: { actor: { type: 'string' } },
    positionals: ['eventId'],
    async run({ values, positionals, io }) {
      const { withDatabase, databaseUrl, defaultActor } = await context();
      const { drawLottery } = await import('@onsale/shared/lottery');
      const actor = text(values.actor) ?? defaultActor();
      io.out(
        json(await withDatabase(databaseUrl, (db) => db.transaction().execute((trx) => drawLottery(trx, positionals[0]!, { actor })))),
      );
    },
  },
  'lottery:show': {
    options: {},
    positionals: ['eventId'],
    async run({ positionals, io }) {
      const { withDatabase, databaseUrl } = await context();
      const { lotterySummary } = await import('@onsale/shared/lottery');
      io.out(json(await withDatabase(databaseUrl, (db) => lotterySummary(db, positionals[0]!))));
    },
  },
};

/**
 * Prints a lottery audit (audit:verify on a REGISTRATION_LOTTERY event): each check, then the verdict; a failed
 * check is `error AUDIT_FAILED`, exit status 1.
 */
export function printLotteryAudit(eventId: string, result: import('@onsale/shared/lottery').LotteryAuditResult, io: Io): void {
  io.out(`lottery audit of event ${eventId}: ${result.registrations} registrations, ${result.winners.length} winners recomputed`);
  const width = Math.max(...result.checks.map((c) => c.name.length));
  for (const c of result.checks) io.out(`  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.name.padEnd(width)}  ${c.detail}`);
  const failed = result.checks.filter((c) => !c.ok);
  if (failed.length > 0)
    throw new CliError(
      'AUDIT_FAILED',
      `${failed.length} of ${result.checks.length} checks failed: ${failed.map((c) => c.name).join(', ')}`,
    );
  io.out(
    `verified: all ${result.checks.length} checks passed; the winners were re-derived from the revealed seed and the published registration list`,
  );
}
