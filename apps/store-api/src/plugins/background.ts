import fp from 'fastify-plugin';
import { databaseFaultOf } from '@onsale/shared/db';
import type { CheckoutService, ProcessLease } from '@onsale/shared/checkout';
import type { HoldService } from '@onsale/shared/inventory';

/**
 * The store process's background beats: unfinished payments of dead processes settled (every second, and the stale
 * ones every 30 s), and the seat views of events in their on-sale rush read before their fans ask (every 2 s). A
 * database outage is logged once by the health listener, not by every beat. On close: the beats stop, a settling in
 * progress ends, and this process's checkout lease ends at once.
 */
export const backgroundPlugin = fp<{ checkout: CheckoutService; holds: HoldService; lease: ProcessLease }>(
  async (app, { checkout, holds, lease }) => {
    let settling: Promise<unknown> | undefined;
    const orphans = setInterval(() => {
      settling ??= checkout
        .recoverOrphanedPayments()
        .catch((err: unknown) => databaseFaultOf(err) || app.log.error({ err }, 'settling unfinished payments failed'))
        .finally(() => (settling = undefined));
    }, 1_000);
    orphans.unref();
    app.addHook('onClose', async () => {
      clearInterval(orphans);
      await settling;
      await lease.stop();
    });
    // Settles checkouts whose process died mid-payment (asks the provider, writes the order or gives the hold back).
    const recovery = setInterval(() => {
      checkout.recoverStalePayments().catch((err: unknown) => databaseFaultOf(err) || app.log.error({ err }, 'payment recovery failed'));
    }, 30_000);
    recovery.unref();
    app.addHook('onClose', async () => clearInterval(recovery));
    // Best-available views of the events in their on-sale rush are read before their fans ask (see warmOpening).
    const warming = setInterval(() => {
      // A database outage is logged once by the health listener, not by every background beat.
      holds.warmOpening().catch((err: unknown) => databaseFaultOf(err) || app.log.warn({ err }, 'warming seat views failed'));
    }, 2_000);
    warming.unref();
    app.addHook('onClose', async () => clearInterval(warming));
  },
  { name: 'store-background' },
);
