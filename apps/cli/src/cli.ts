import { parseArgs } from 'node:util';
import { DomainError } from '@onsale/shared';
import type { Io } from './commands.js';
import { defaultActor, text, type Command } from './command.js';
import { CliError, UsageError } from './errors.js';
import { PLAN_FLAGS, plan } from './plan.js';
import { USERS_USAGE, userCommands } from './users.js';
import { WEBHOOKS_USAGE, webhookCommands } from './webhooks.js';
import { WAITLIST_USAGE, waitlistCommands } from './waitlist.js';
import { TICKETS_USAGE, ticketCommands } from './tickets.js';
import { REVIEW_USAGE, reviewCommands } from './review.js';
import { LOTTERY_USAGE, lotteryCommands } from './lottery.js';
import { PRESALE_USAGE, presaleCommands } from './presale.js';
import { POW_USAGE, powCommands } from './pow.js';
import { REHEARSE_USAGE, rehearseCommands } from './rehearse/command.js';

export const USAGE = `usage: onsale <command> [options]

commands:
  migrate                      apply pending database migrations and list them
  event:create --file <json> [--actor <name>] [--no-signoff]
                               validate an event file and create the event, its sections and seats;
                               records the actor's sign-off of its fairness mode (an event that is not
                               signed off does not open) unless --no-signoff, which leaves it for a
                               promoter to sign off in the console; prints {"eventId", "listingId",
                               "capacity", "signedOff"} as JSON
  event:show <eventId>         event settings, sections and live inventory counts as JSON
  event:list                   every event (id, name, on-sale time, capacity) as JSON
  plan --seats <n> --tickets-per-order <x> --duration-min <m> --overbook <f> --checkout-min <c> --payment-tps <t>
       [--payment-attempts <a>] [--hold-ttl-min <ttl>]
                               the admission plan as JSON: buyers/min (inventory pacing vs payment ceiling),
                               admits/min, concurrent shoppers, store req/s, and seats stranded by abandoned
                               holds at the hold TTL (default 6) and at 15 min; needs no database
  queue:pause <eventId> --reason <text> [--public-note <text>] [--tier <code>] [--actor <name>]
                               pause admissions: every fan not yet admitted sees PAUSED, positions are kept;
                               the reason and the actor go to the audit log (internal); the public note, if any,
                               to the publishable summary; prints the queue controls as JSON.
                               Every queue of the event (general sale and presales), or --tier's only
  queue:resume <eventId> [--tier <code>] [--actor <name>] [--reason <text>]
                               resume admissions (audited): every queue of the event, or --tier's only
  queue:rate <eventId> <perMinute|off> [--tier <code>] [--actor <name>] [--reason <text>]
                               override the admission rate (0-100000 admits/min; 0 admits no one) or turn the
                               override off to follow the plan again (audited); the general sale's queue, or
                               --tier's
  audit:verify <eventId> [--tier <code>]
                               recompute every pre-open position from the published data (revealed seed,
                               commitment, cohort size, join list) and print each check; exit 1 if one fails;
                               an event with presale tiers: every tier's own queue too (or --tier's only);
                               for a registration lottery, re-derive the winners from the revealed seed and the
                               published registration list and compare them with the recorded winners
  audit:summary <eventId> [--format markdown|json] [--operator]
                               the publishable summary of the on-sale: fairness mode in plain words, seed
                               commitment and reveal, admissions per minute, when the queue stopped (with the
                               operators' public notes), rate changes, sell-out time; nothing private (default
                               markdown). --operator: the complete export, with who and why, for the organiser
${USERS_USAGE}
${WEBHOOKS_USAGE}
${WAITLIST_USAGE}
${TICKETS_USAGE}
${REVIEW_USAGE}
${LOTTERY_USAGE}
${PRESALE_USAGE}
${POW_USAGE}
${REHEARSE_USAGE}
  help                         this text

run from the repository root as \`npm run onsale -- <command>\` or \`pnpm onsale <command>\`.
database: DATABASE_URL, else the embedded server under ./.data/ (the running one of \`npm start\` if any).
--actor defaults to cli:<your user name>.
exit status: 0 done, 1 failed, 2 bad command line.`;

// The database layer and zod load only when a command needs them, so usage and help answer at once.
const commandsModule = () => import('./commands.js');
const operations = () => import('./operations.js');
const databaseUrl = async () => (await import('./env.js')).loadCliConfig().databaseUrl;

const actorOf = (values: Record<string, string | boolean | undefined>) => text(values.actor) ?? defaultActor();
const ACTOR = { actor: { type: 'string' } } as const;
const REASON = { reason: { type: 'string' } } as const;
const TIER = { tier: { type: 'string' } } as const;

const commands: Record<string, Command> = {
  migrate: { options: {}, positionals: [], run: async ({ io }) => (await commandsModule()).migrate(await databaseUrl(), io) },
  'event:create': {
    options: { file: { type: 'string', short: 'f' }, 'no-signoff': { type: 'boolean' }, ...ACTOR },
    positionals: [],
    run: async ({ values, io }) => {
      if (typeof values.file !== 'string' || values.file === '') throw new UsageError('event:create needs --file <path to event json>');
      return (await commandsModule()).eventCreate(await databaseUrl(), values.file, io, {
        actor: actorOf(values),
        signOff: values['no-signoff'] !== true,
      });
    },
  },
  'event:show': {
    options: {},
    positionals: ['eventId'],
    run: async ({ positionals, io }) => (await commandsModule()).eventShow(await databaseUrl(), positionals[0]!, io),
  },
  'event:list': { options: {}, positionals: [], run: async ({ io }) => (await commandsModule()).eventList(await databaseUrl(), io) },
  plan: {
    options: Object.fromEntries(Object.keys(PLAN_FLAGS).map((f) => [f, { type: 'string' }])),
    positionals: [],
    run: async ({ values, io }) => plan(values, io),
  },
  'queue:pause': {
    options: { ...ACTOR, ...REASON, ...TIER, 'public-note': { type: 'string' } },
    positionals: ['eventId'],
    run: async ({ values, positionals, io }) => {
      const reason = text(values.reason);
      if (reason === undefined) throw new UsageError('queue:pause needs --reason <text>: operators and the audit log need to know why');
      const publicNote = text(values['public-note']);
      return (await operations()).queuePause(
        await databaseUrl(),
        positionals[0]!,
        { reason, actor: actorOf(values), tier: text(values.tier), ...(publicNote ? { publicNote } : {}) },
        io,
      );
    },
  },
  'queue:resume': {
    options: { ...ACTOR, ...REASON, ...TIER },
    positionals: ['eventId'],
    run: async ({ values, positionals, io }) =>
      (await operations()).queueResume(
        await databaseUrl(),
        positionals[0]!,
        { actor: actorOf(values), reason: text(values.reason), tier: text(values.tier) },
        io,
      ),
  },
  'queue:rate': {
    options: { ...ACTOR, ...REASON, ...TIER },
    positionals: ['eventId', 'perMinute|off'],
    run: async ({ values, positionals, io }) => {
      const ops = await operations();
      const perMinute = ops.parseRate(positionals[1]!);
      return ops.queueRate(
        await databaseUrl(),
        positionals[0]!,
        perMinute,
        { actor: actorOf(values), reason: text(values.reason), tier: text(values.tier) },
        io,
      );
    },
  },
  'audit:verify': {
    options: { ...TIER },
    positionals: ['eventId'],
    run: async ({ values, positionals, io }) =>
      (await operations()).auditVerify(await databaseUrl(), positionals[0]!, io, { tier: text(values.tier) }),
  },
  'audit:summary': {
    options: { format: { type: 'string' }, operator: { type: 'boolean' } },
    positionals: ['eventId'],
    run: async ({ values, positionals, io }) => {
      const format = text(values.format) ?? 'markdown';
      if (format !== 'markdown' && format !== 'json')
        throw new UsageError(`audit:summary: --format must be markdown or json; got ${JSON.stringify(format)}`);
      return (await operations()).auditSummaryCommand(await databaseUrl(), positionals[0]!, format, io, {
        operator: values.operator === true,
      });
    },
  },
  help: { options: {}, positionals: [], run: async ({ io }) => io.out(USAGE) },
  ...userCommands,
  ...webhookCommands,
  ...waitlistCommands,
  ...ticketCommands,
  ...reviewCommands,
  ...lotteryCommands,
  ...presaleCommands,
  ...powCommands,
  ...rehearseCommands,
};

/** Drops the password from a connection string before it is printed. */
function redact(text: string): string {
  return text.replace(/(postgres(?:ql)?:\/\/[^:@/\s]+):[^@\s]+@/g, '$1:***@');
}

const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET', '28P01', '28000', '3D000']);

/** Prints an error the way an operator wants it; returns the exit status. Stack traces only for the unexpected. */
export function report(e: unknown, io: Io): number {
  if (e instanceof UsageError) {
    io.err(`onsale: ${e.message}\n\n${USAGE}`);
    return 2;
  }
  if (e instanceof DomainError && (e.code === 'INVALID_EVENT_FILE' || e.code === 'EVENT_TIME_PASSED')) {
    const issues = (e.details.issues as { path: string; message: string }[] | undefined) ?? [];
    io.err(`error ${e.code}: the event file has ${issues.length} problem${issues.length === 1 ? '' : 's'}; nothing was written`);
    for (const i of issues) io.err(`  ${i.path}: ${i.message}`);
    return 1;
  }
  if (e instanceof DomainError || e instanceof CliError) {
    io.err(`error ${e.code}: ${e.message}`);
    return 1;
  }
  // By code and name, not instanceof: the classes live in modules loaded only by commands.
  if (e instanceof Error && (e as { code?: unknown }).code === 'MIGRATION_FAILED') {
    io.err(`error MIGRATION_FAILED: ${redact(e.message)}`);
    return 1;
  }
  if (e instanceof Error && e.name === 'ZodError') {
    io.err('error INVALID_CONFIG: the environment is not valid');
    for (const i of (e as unknown as { issues: { path: PropertyKey[]; message: string }[] }).issues)
      io.err(`  ${i.path.map(String).join('.')}: ${i.message}`);
    return 1;
  }
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && CONNECT_ERRORS.has(code)) {
    io.err(`error DATABASE_UNAVAILABLE: cannot use the database (${redact((e as Error).message)}); check DATABASE_URL`);
    return 1;
  }
  if (code === '42P01') {
    io.err('error NOT_MIGRATED: the database has no onsale schema yet; run `npm run onsale -- migrate` first');
    return 1;
  }
  io.err(`error UNEXPECTED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  return 1;
}

/** Runs one command line; returns the exit status. `env`: the environment it reads (default process.env). */
export async function run(argv: string[], io: Io, env?: NodeJS.ProcessEnv): Promise<number> {
  if (env) {
    const { withCliEnv } = await import('./env.js');
    return withCliEnv(env, () => run(argv, io));
  }
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h') {
    if (name === undefined) io.err(USAGE);
    else io.out(USAGE);
    return name === undefined ? 2 : 0;
  }
  try {
    const command = commands[name];
    if (!command) throw new UsageError(`unknown command ${JSON.stringify(name)}`);
    let parsed;
    try {
      parsed = parseArgs({
        args: rest,
        options: { ...command.options, help: { type: 'boolean', short: 'h' } },
        allowPositionals: true,
        strict: true,
      });
    } catch (e) {
      throw new UsageError(`${name}: ${(e as Error).message}`);
    }
    if (parsed.values.help) {
      io.out(USAGE);
      return 0;
    }
    if (parsed.positionals.length !== command.positionals.length) {
      const want = command.positionals.map((p) => `<${p}>`).join(' ');
      throw new UsageError(`${name} takes ${want ? `exactly ${want}` : 'no arguments'}; got ${JSON.stringify(parsed.positionals)}`);
    }
    await command.run({ values: parsed.values, positionals: parsed.positionals, io });
    return 0;
  } catch (e) {
    return report(e, io);
  }
}
