import { json, text, wholeNumber, type Command } from './command.js';
import type { Io } from './commands.js';
import { UsageError } from './errors.js';

// The post-sale review: clusters of orders linked by card, device and account signals, and cancelling a cluster.
// Registered in cli.ts's command table; the rule is @onsale/shared/abuse's clusterOrders.

export const REVIEW_USAGE = `  review <eventId> [--created-within <seconds>] [--min-accounts <n>] [--format text|json]
                               cluster the event's confirmed orders by shared card, shared device and account
                               signals (ids that differ by a number; with --created-within, accounts created that
                               close together) and print each cluster with its evidence; reads only
  review <eventId> --cancel <clusterId> --reason <text> [--actor <name>] [same clustering flags]
                               cancel every order of that cluster as the review prints it now (each audited with
                               the reason; seats come back, to the waitlist after a sell-out)`;

type Review = import('@onsale/shared/abuse').EventReview;
type Cluster = import('@onsale/shared/abuse').ReviewCluster;

const money = (cents: number) => `$${(cents / 100).toFixed(2)}`;
const span = (s: number) =>
  s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : s < 172_800 ? `${Math.round(s / 3600)} h` : `${Math.round(s / 86_400)} d`;

function printCluster(c: Cluster, eventId: string, io: Io) {
  io.out(
    `cluster ${c.id}: ${c.accounts.length} accounts, ${c.orders.length} orders, ${c.seats} seats, ${money(c.amountCents)}; linked by ${c.signals.join(', ')}`,
  );
  io.out(`  accounts created within ${span(c.accountsCreatedWithinSeconds)} of each other`);
  if (c.transfers > 0 || c.listings > 0) io.out(`  tickets passed on: ${c.transfers} transferred, ${c.listings} listed for resale`);
  io.out('  evidence:');
  for (const e of c.evidence) io.out(`    ${e.signal.padEnd(17)} ${e.value}: ${e.accounts.join(', ')} (${e.orders.length} orders)`);
  io.out('  orders:');
  for (const o of c.orders) io.out(`    ${o.orderId}  ${o.accountId}  ${o.seats} seats  ${money(o.amountCents)}  ${o.orderedAt}`);
  io.out(`  to cancel: onsale review ${eventId} --cancel ${c.id} --reason "<why>"`);
}

function printReview(r: Review, io: Io) {
  io.out(
    `review of "${r.eventName}" (${r.eventId}): ${r.confirmedOrders} confirmed orders; ${r.clusters.length} cluster${r.clusters.length === 1 ? '' : 's'} ` +
      `with ${r.clusteredOrders} orders and ${r.clusteredSeats} seats`,
  );
  for (const c of r.clusters) {
    io.out('');
    printCluster(c, r.eventId, io);
  }
}

export const reviewCommands: Record<string, Command> = {
  review: {
    options: {
      cancel: { type: 'string' },
      reason: { type: 'string' },
      actor: { type: 'string' },
      'created-within': { type: 'string' },
      'min-accounts': { type: 'string' },
      format: { type: 'string' },
    },
    positionals: ['eventId'],
    async run({ values, positionals, io }) {
      const format = text(values.format) ?? 'text';
      if (format !== 'text' && format !== 'json')
        throw new UsageError(`review: --format must be text or json; got ${JSON.stringify(format)}`);
      const minAccounts = wholeNumber('--min-accounts', values['min-accounts']);
      if (minAccounts !== undefined && minAccounts < 2) throw new UsageError('--min-accounts must be at least 2');
      const opts = { createdWithinSeconds: wholeNumber('--created-within', values['created-within']) ?? null, minAccounts };
      const cluster = text(values.cancel);
      const reason = text(values.reason);
      if (values.cancel !== undefined && !cluster) throw new UsageError('review --cancel needs a cluster id (as the review prints it)');
      if (cluster && !reason?.trim())
        throw new UsageError('review --cancel needs --reason <text>: it goes to the audit log with every cancelled order');
      if (!cluster && reason !== undefined) throw new UsageError('review: --reason goes with --cancel <clusterId>');

      const [{ withDatabase }, { loadCliConfig }, { defaultActor }, abuse] = await Promise.all([
        import('./commands.js'),
        import('./env.js'),
        import('./command.js'),
        import('@onsale/shared/abuse'),
      ]);
      const eventId = positionals[0]!;
      await withDatabase(loadCliConfig().databaseUrl, async (db) => {
        if (!cluster) {
          const r = await abuse.reviewEvent(db, eventId, opts);
          if (format === 'json') io.out(json(r));
          else printReview(r, io);
          return;
        }
        const r = await abuse.cancelCluster(db, eventId, cluster, { actor: text(values.actor) ?? defaultActor(), reason: reason! }, opts);
        if (format === 'json') return io.out(json(r));
        io.out(
          `cancelled ${r.cancelled.length} orders of cluster ${r.clusterId}; ${r.seatsReturned} seats returned${r.cancelled.some((c) => c.toWaitlist) ? ' to the waitlist' : ''}`,
        );
        for (const c of r.cancelled)
          io.out(`  ${c.orderId}  ${c.accountId}  ${c.seatsReturned} seats${c.toWaitlist ? '  -> waitlist' : ''}`);
        for (const s of r.skipped) io.out(`  ${s.orderId}  not cancelled: ${s.code}`);
      });
    },
  },
};
