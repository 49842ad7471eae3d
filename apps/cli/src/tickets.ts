import { json, text, type Command } from './command.js';
import { UsageError } from './errors.js';

// Tickets at the door and for fan support (docs/tickets.md). Registered in cli.ts's command table; the rules are in
// @onsale/shared/tickets.

export const TICKETS_USAGE = `  scanner:create --event <eventId> [--name <gate>] [--actor <name>]
                               make a scanner token for one event's door (audited); the token is printed once:
                               POST /scan and the offline manifest take it as Authorization: Bearer <token>
  tickets:show <orderId|paymentReference>
                               an order's tickets: seat, holder, status, device binding and transfers left
  tickets:counts <eventId>     tickets issued, delivered, transferred, listed, resold, revoked and scanned
  ticket:reissue <ticketId> --reason <text> [--actor <name>]
                               fan support: unbind a ticket from its device (the old codes stop; the fan's next
                               code binds the new device), audited`;

async function context() {
  const [{ withDatabase }, { loadCliConfig }, ops, { TicketService }] = await Promise.all([
    import('./commands.js'),
    import('./env.js'),
    import('./command.js'),
    import('@onsale/shared/tickets'),
  ]);
  return { withDatabase, databaseUrl: loadCliConfig().databaseUrl, defaultActor: ops.defaultActor, TicketService };
}

export const ticketCommands: Record<string, Command> = {
  'scanner:create': {
    options: { event: { type: 'string' }, name: { type: 'string' }, actor: { type: 'string' } },
    positionals: [],
    async run({ values, io }) {
      const eventId = text(values.event);
      if (!eventId) throw new UsageError('scanner:create needs --event <eventId>');
      const { withDatabase, databaseUrl, defaultActor, TicketService } = await context();
      const s = await withDatabase(databaseUrl, (db) =>
        new TicketService({ db }).createScanner(eventId, { name: text(values.name), createdBy: text(values.actor) ?? defaultActor() }),
      );
      io.out(json({ scannerId: s.id, eventId: s.eventId, name: s.name, token: s.token }));
    },
  },
  'tickets:show': {
    options: {},
    positionals: ['reference'],
    async run({ positionals, io }) {
      const { withDatabase, databaseUrl, TicketService } = await context();
      io.out(json(await withDatabase(databaseUrl, (db) => new TicketService({ db }).findByOrderReference(positionals[0]!))));
    },
  },
  'tickets:counts': {
    options: {},
    positionals: ['eventId'],
    async run({ positionals, io }) {
      const { withDatabase, databaseUrl, TicketService } = await context();
      const { getEvent } = await import('@onsale/shared/events');
      io.out(
        json(
          await withDatabase(databaseUrl, async (db) => {
            await getEvent(db, positionals[0]!);
            return new TicketService({ db }).counts(positionals[0]!);
          }),
        ),
      );
    },
  },
  'ticket:reissue': {
    options: { reason: { type: 'string' }, actor: { type: 'string' } },
    positionals: ['ticketId'],
    async run({ values, positionals, io }) {
      const reason = text(values.reason);
      if (!reason) throw new UsageError('ticket:reissue needs --reason <text> (it goes to the audit log)');
      const { withDatabase, databaseUrl, defaultActor, TicketService } = await context();
      io.out(
        json(
          await withDatabase(databaseUrl, (db) =>
            new TicketService({ db }).reissue(positionals[0]!, { actor: text(values.actor) ?? defaultActor(), reason }),
          ),
        ),
      );
    },
  },
};
