import { sql } from 'kysely';
import type { Db } from '@onsale/shared/db';

// The rehearsal driver's own reads of the product's database (run.ts): what the admission controller says and did.

/** The admission controller's reason for its current rate (shown on the progress line), or null. */
export async function controllerReason(db: Db, eventId: string): Promise<string | null> {
  const r = await db.selectFrom('queue_state').select('controller_reason').where('event_id', '=', eventId).executeTakeFirst();
  return r?.controller_reason ?? null;
}

/** When the event sold out, or null. */
export async function soldOutAtOf(db: Db, eventId: string): Promise<Date | null> {
  const r = await db.selectFrom('queue_state').select('sold_out_at').where('event_id', '=', eventId).executeTakeFirst();
  return r?.sold_out_at ?? null;
}

/** The controller's last sign of life for the event: its heartbeat or the sell-out, whichever is later. */
export async function controllerLastTick(db: Db, eventId: string): Promise<Date | null> {
  const r = await db
    .selectFrom('queue_state')
    .select(sql<Date | null>`greatest(heartbeat_at, sold_out_at)`.as('t'))
    .where('event_id', '=', eventId)
    .executeTakeFirst();
  return r?.t ?? null;
}
