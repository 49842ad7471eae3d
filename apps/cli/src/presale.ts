import { json, text, wholeNumber, type Command } from './command.js';
import { UsageError } from './errors.js';

// Presale tiers (allocations): their live inventory, rolling one forward now, and issuing access codes. Registered
// in cli.ts's command table; the rules are in @onsale/shared/allocations.

export const PRESALE_USAGE = `  tier:list <eventId>          the event's presale tiers in sale order: window, access rule, queue, when unsold
                               seats roll forward, and live capacity / available / held / sold / drift per tier
  tier:roll <eventId> <tier> [--force] [--reason <text>] [--actor <name>]
                               roll the tier's unsold seats into the next tier now, in one transaction (audited;
                               the waitlist hears of them); before the tier's roll time it needs --force
  access:issue <eventId> <tier> [--count <n>] [--account <accountId>] [--valid-until <iso date>] [--actor <name>]
                               signed access codes for an ACCESS_CODE tier, one per line: each admits one account
                               (the --account it is issued to, else the first to use it) to the tier's queue;
                               valid until the tier closes unless --valid-until; uses QUEUE_TOKEN_SECRET;
                               audited (how many, for whom, until when; never the codes)`;

async function context() {
  const [{ withDatabase }, { loadCliConfig }, ops, allocations] = await Promise.all([
    import('./commands.js'),
    import('./env.js'),
    import('./command.js'),
    import('@onsale/shared/allocations'),
  ]);
  return { withDatabase, databaseUrl: loadCliConfig().databaseUrl, defaultActor: ops.defaultActor, allocations };
}

export const presaleCommands: Record<string, Command> = {
  'tier:list': {
    options: {},
    positionals: ['eventId'],
    run: async ({ positionals, io }) => {
      const { withDatabase, databaseUrl, allocations } = await context();
      await withDatabase(databaseUrl, async (db) => {
        const { getEvent } = await import('@onsale/shared/events');
        const event = await getEvent(db, positionals[0]!);
        const tiers = await allocations.tierInventory(db, event.id);
        io.out(json({ eventId: event.id, tiers }));
      });
    },
  },
  'tier:roll': {
    options: { force: { type: 'boolean' }, reason: { type: 'string' }, actor: { type: 'string' } },
    positionals: ['eventId', 'tier'],
    run: async ({ values, positionals, io }) => {
      const { withDatabase, databaseUrl, defaultActor, allocations } = await context();
      await withDatabase(databaseUrl, async (db) => {
        const { getEvent } = await import('@onsale/shared/events');
        const event = await getEvent(db, positionals[0]!);
        const result = await allocations.rollForward(db, event.id, positionals[1]!, text(values.actor) ?? defaultActor(), {
          force: values.force === true,
          reason: text(values.reason),
        });
        io.out(json(result));
      });
    },
  },
  'access:issue': {
    options: { count: { type: 'string' }, account: { type: 'string' }, 'valid-until': { type: 'string' }, actor: { type: 'string' } },
    positionals: ['eventId', 'tier'],
    run: async ({ values, positionals, io }) => {
      const count = wholeNumber('--count', values.count);
      const until = text(values['valid-until']);
      if (until !== undefined && Number.isNaN(Date.parse(until)))
        throw new UsageError(`--valid-until must be an ISO date; got ${JSON.stringify(until)}`);
      const { withDatabase, databaseUrl, defaultActor, allocations } = await context();
      const { createTokenKey } = await import('@onsale/shared/queue');
      const key = await createTokenKey((await import('./env.js')).cliSecrets().queueTokenSecret);
      await withDatabase(databaseUrl, async (db) => {
        const { getEvent } = await import('@onsale/shared/events');
        const event = await getEvent(db, positionals[0]!);
        const issued = await allocations.issueAccessCodes(db, key, event.id, positionals[1]!, {
          count,
          accountId: text(values.account),
          validUntil: until === undefined ? undefined : new Date(until),
          actor: text(values.actor) ?? defaultActor(),
        });
        io.err(
          `${issued.codes.length} access code${issued.codes.length === 1 ? '' : 's'} for tier ${issued.tier}, valid until ${issued.expiresAt}`,
        );
        for (const c of issued.codes) io.out(c);
      });
    },
  },
};
