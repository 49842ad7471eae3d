import type { ListDeliveriesInput } from '@onsale/shared/notify';
import { json, text, wholeNumber, type Command } from './command.js';
import { UsageError } from './errors.js';

// Webhook endpoints for waitlist notifications: add (the secret is printed once), list, disable/enable, the
// deliveries (DEAD: the dead-letter list) and redeliver. Registered in cli.ts's command table; the database layer
// loads only when one of these runs. The rules are in @onsale/shared/notify.

export const WEBHOOKS_USAGE = `  webhook:add --url <url> [--listing <listingId>] [--max-attempts <n>] [--timeout-ms <ms>]
                               register a receiver of waitlist notifications (signed POSTs) for one listing, or
                               every listing without --listing; prints the endpoint with its signing secret as
                               JSON (shown only this once)
  webhook:list                 every webhook endpoint and its circuit state as JSON (never the secret)
  webhook:disable <endpointId> stop sending to an endpoint (its pending deliveries go DEAD; redeliver them later)
  webhook:enable <endpointId>  send to it again
  webhook:deliveries [--endpoint <endpointId>] [--status PENDING|RETRYING|DELIVERED|DEAD] [--limit <n>]
                               recent deliveries, newest first, as JSON (default 50)
  webhook:redeliver <deliveryId>
                               send a DEAD delivery again with a fresh attempt budget`;

async function context() {
  const [{ withDatabase }, { loadCliConfig, cliEnv }, { defaultActor }, notify] = await Promise.all([
    import('./commands.js'),
    import('./env.js'),
    import('./command.js'),
    import('@onsale/shared/notify'),
  ]);
  return {
    withDatabase,
    databaseUrl: loadCliConfig().databaseUrl,
    notify,
    actor: defaultActor(),
    // WEBHOOK_ALLOW_HOSTS: the internal receivers this install allows (else public addresses only).
    outbound: () => notify.outboundPolicyFromEnv(cliEnv()),
  };
}

const setActive = (active: boolean): Command => ({
  options: {},
  positionals: ['endpointId'],
  async run({ positionals, io }) {
    const { withDatabase, databaseUrl, notify, actor } = await context();
    io.out(json(await withDatabase(databaseUrl, (db) => notify.setWebhookEndpointActiveAs(db, positionals[0]!, active, actor))));
  },
});

export const webhookCommands: Record<string, Command> = {
  'webhook:add': {
    options: { url: { type: 'string' }, listing: { type: 'string' }, 'max-attempts': { type: 'string' }, 'timeout-ms': { type: 'string' } },
    positionals: [],
    async run({ values, io }) {
      const url = text(values.url);
      if (!url) throw new UsageError('webhook:add needs --url <http(s) url of the receiver>');
      const input = {
        url,
        listingId: text(values.listing),
        maxAttempts: wholeNumber('--max-attempts', values['max-attempts']),
        timeoutMs: wholeNumber('--timeout-ms', values['timeout-ms']),
      };
      const { withDatabase, databaseUrl, notify, actor, outbound } = await context();
      const policy = outbound();
      const endpoint = await withDatabase(databaseUrl, (db) => notify.addWebhookEndpointAs(db, input, actor, { outbound: policy }));
      io.out(json(endpoint));
      io.err(
        `the signing secret of endpoint ${endpoint.id} is shown only this once: give it to the receiver, which verifies X-Onsale-Signature with it.`,
      );
    },
  },
  'webhook:list': {
    options: {},
    positionals: [],
    async run({ io }) {
      const { withDatabase, databaseUrl, notify } = await context();
      io.out(json(await withDatabase(databaseUrl, (db) => notify.listWebhookEndpoints(db))));
    },
  },
  'webhook:disable': setActive(false),
  'webhook:enable': setActive(true),
  'webhook:deliveries': {
    options: { endpoint: { type: 'string' }, status: { type: 'string' }, limit: { type: 'string' } },
    positionals: [],
    async run({ values, io }) {
      const status = text(values.status)?.toUpperCase();
      const query = {
        endpointId: text(values.endpoint),
        status: status as ListDeliveriesInput['status'],
        limit: wholeNumber('--limit', values.limit),
      };
      const { withDatabase, databaseUrl, notify } = await context();
      io.out(json(await withDatabase(databaseUrl, (db) => notify.listDeliveries(db, query))));
    },
  },
  'webhook:redeliver': {
    options: {},
    positionals: ['deliveryId'],
    async run({ positionals, io }) {
      const deliveryId = wholeNumber('webhook:redeliver: <deliveryId>', positionals[0]);
      const { withDatabase, databaseUrl, notify, actor } = await context();
      io.out(json(await withDatabase(databaseUrl, (db) => notify.redeliverAs(db, deliveryId!, actor))));
    },
  },
};
