import { json, text, wholeNumber, type Command } from './command.js';
import { UsageError } from './errors.js';

// Listings and their waitlists, and the ways seats come back that an operator starts: a cancelled order and new
// inventory. Registered in cli.ts's command table; the rules are in @onsale/shared/waitlist, /checkout, /inventory.

export const WAITLIST_USAGE = `  listing:show <listingId>     a listing's performances, waitlist settings, live entries and recent
                               availability events (what came back, how it went out, how many were told)
  listing:waitlist <listingId> [--mode OFFER|BROADCAST] [--ttl-days <n>] [--offer-minutes <n>]
       [--inline-threshold <n>] [--actor <name>]
                               change a listing's waitlist settings (audited); prints the listing
  order:cancel <orderId> --reason <text> [--actor <name>]
                               cancel a confirmed order (audited); its seats come back, to the waitlist after a
                               sell-out
  inventory:add <eventId> --section <code> --rows <n> --seats-per-row <n> [--actor <name>]
                               append rows of new seats to a section (audited); the waitlist hears of them
  waitlist:maintain            run the waitlist housekeeping now (resume stalled fan-outs, lapse overdue offers,
                               delete expired entries) and print what it did`;

/** A whole-number flag of at least 1. */
function whole(name: string, v: string | boolean | undefined): number | undefined {
  const n = wholeNumber(`--${name}`, v);
  if (n !== undefined && n < 1) throw new UsageError(`--${name} must be at least 1`);
  return n;
}

async function context() {
  const [{ withDatabase }, { loadCliConfig }, ops] = await Promise.all([
    import('./commands.js'),
    import('./env.js'),
    import('./command.js'),
  ]);
  return { withDatabase, databaseUrl: loadCliConfig().databaseUrl, defaultActor: ops.defaultActor };
}

async function listingReport(db: import('@onsale/shared/db').Db, listingId: string) {
  const { loadListing, countListingEntries, recentAvailability } = await import('@onsale/shared/waitlist');
  const l = await loadListing(db, listingId);
  const entries = await countListingEntries(db, listingId);
  const recent = await recentAvailability(db, listingId, 20);
  return {
    id: l.id,
    name: l.name,
    waitlist: {
      mode: l.mode,
      ttlDays: l.ttlSeconds / 86400,
      offerMinutes: l.offerTtlSeconds / 60,
      inlineThreshold: l.inlineThreshold,
      ...entries,
    },
    performances: l.performances,
    recentAvailability: recent,
  };
}

export const waitlistCommands: Record<string, Command> = {
  'listing:show': {
    options: {},
    positionals: ['listingId'],
    async run({ positionals, io }) {
      const { withDatabase, databaseUrl } = await context();
      io.out(json(await withDatabase(databaseUrl, (db) => listingReport(db, positionals[0]!))));
    },
  },
  'listing:waitlist': {
    options: {
      mode: { type: 'string' },
      'ttl-days': { type: 'string' },
      'offer-minutes': { type: 'string' },
      'inline-threshold': { type: 'string' },
      actor: { type: 'string' },
    },
    positionals: ['listingId'],
    async run({ values, positionals, io }) {
      const mode = text(values.mode);
      if (mode !== undefined && mode !== 'OFFER' && mode !== 'BROADCAST')
        throw new UsageError(`--mode must be OFFER or BROADCAST; got ${JSON.stringify(mode)}`);
      const waitlistMode: 'OFFER' | 'BROADCAST' | undefined = mode;
      const ttlDays = whole('ttl-days', values['ttl-days']);
      const offerTtlMinutes = whole('offer-minutes', values['offer-minutes']);
      const inlineThreshold = whole('inline-threshold', values['inline-threshold']);
      const change = {
        listingId: positionals[0]!,
        ...(waitlistMode !== undefined ? { mode: waitlistMode } : {}),
        ...(ttlDays !== undefined ? { ttlDays } : {}),
        ...(offerTtlMinutes !== undefined ? { offerTtlMinutes } : {}),
        ...(inlineThreshold !== undefined ? { inlineThreshold } : {}),
      };
      const { withDatabase, databaseUrl, defaultActor } = await context();
      const actor = text(values.actor) ?? defaultActor();
      // The console's own service: the same bounds, the same audit row; the CLI acts for the house.
      const { setListingWaitlist } = await import('@onsale/shared/sale-setup');
      io.out(
        json(
          await withDatabase(databaseUrl, async (db) => {
            await db.transaction().execute((trx) => setListingWaitlist(trx, change, { actor, organisationId: null }));
            return listingReport(db, positionals[0]!);
          }),
        ),
      );
    },
  },
  'order:cancel': {
    options: { reason: { type: 'string' }, actor: { type: 'string' } },
    positionals: ['orderId'],
    async run({ values, positionals, io }) {
      const reason = text(values.reason);
      if (!reason) throw new UsageError('order:cancel needs --reason <text> (it goes to the audit log)');
      const { withDatabase, databaseUrl, defaultActor } = await context();
      const { cancelOrder } = await import('@onsale/shared/checkout');
      io.out(
        json(
          await withDatabase(databaseUrl, (db) =>
            cancelOrder(db, positionals[0]!, { actor: text(values.actor) ?? defaultActor(), reason }),
          ),
        ),
      );
    },
  },
  'inventory:add': {
    options: { section: { type: 'string' }, rows: { type: 'string' }, 'seats-per-row': { type: 'string' }, actor: { type: 'string' } },
    positionals: ['eventId'],
    async run({ values, positionals, io }) {
      const section = text(values.section);
      const rows = whole('rows', values.rows);
      const seatsPerRow = whole('seats-per-row', values['seats-per-row']);
      if (!section || rows === undefined || seatsPerRow === undefined)
        throw new UsageError('inventory:add needs --section <code> --rows <n> --seats-per-row <n>');
      const { withDatabase, databaseUrl, defaultActor } = await context();
      const { addSeats } = await import('@onsale/shared/inventory');
      io.out(
        json(
          await withDatabase(databaseUrl, (db) =>
            addSeats(db, positionals[0]!, { section, rows, seatsPerRow }, text(values.actor) ?? defaultActor()),
          ),
        ),
      );
    },
  },
  'waitlist:maintain': {
    options: {},
    positionals: [],
    async run({ io }) {
      const { withDatabase, databaseUrl } = await context();
      const { maintainWaitlist } = await import('@onsale/shared/waitlist');
      io.out(json(await withDatabase(databaseUrl, (db) => maintainWaitlist(db))));
    },
  },
};
