import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { SaleMinutesTable } from './warroom.table.js';
import type { Insertable, Selectable } from 'kysely';

// SQL of the war room's series for the whole sale: one row per event and minute (the last reading of the minute).

export type SaleMinuteRow = Selectable<SaleMinutesTable>;

/** Writes the minute's figures of each event, replacing an earlier reading of the same minute. */
export async function upsertSaleMinutes(trx: Trx | Db, rows: readonly Omit<Insertable<SaleMinutesTable>, 'recorded_at'>[]): Promise<void> {
  if (rows.length === 0) return;
  await trx
    .insertInto('sale_minutes')
    .values(rows.map((r) => ({ ...r })))
    .onConflict((oc) =>
      oc.columns(['event_id', 'minute']).doUpdateSet((eb) => ({
        state: eb.ref('excluded.state'),
        capacity: eb.ref('excluded.capacity'),
        available: eb.ref('excluded.available'),
        held: eb.ref('excluded.held'),
        sold: eb.ref('excluded.sold'),
        joined: eb.ref('excluded.joined'),
        waiting: eb.ref('excluded.waiting'),
        admitted_through: eb.ref('excluded.admitted_through'),
        admitted: eb.ref('excluded.admitted'),
        controller_rate_per_min: eb.ref('excluded.controller_rate_per_min'),
        plan_admits_per_min: eb.ref('excluded.plan_admits_per_min'),
        rate_override_per_min: eb.ref('excluded.rate_override_per_min'),
        checkout_attempts: eb.ref('excluded.checkout_attempts'),
        checkout_failed: eb.ref('excluded.checkout_failed'),
        checkout_declined: eb.ref('excluded.checkout_declined'),
        payment_attempts_per_second: eb.ref('excluded.payment_attempts_per_second'),
        hold_latency_p99_ms: eb.ref('excluded.hold_latency_p99_ms'),
        alerts_critical: eb.ref('excluded.alerts_critical'),
        alerts_warning: eb.ref('excluded.alerts_warning'),
        recorded_at: sql<Date>`now()`,
      })),
    )
    .execute();
}

/**
 * An event's minutes, oldest first (at most `limit`: 10,080 is a week of minutes). `admitted` is the minute's
 * admission tokens as the store API counted them (the monitor's last reading of a minute can precede its end), and
 * `advanced` the positions the watermark moved.
 */
export async function findSaleMinutes(db: Db | Trx, eventId: string, limit = 10_080): Promise<(SaleMinuteRow & { advanced: number })[]> {
  const { rows } = await sql<SaleMinuteRow & { advanced: number }>`
    SELECT s.event_id, s.minute, s.state, s.capacity, s.available, s.held, s.sold, s.joined, s.waiting, s.admitted_through::float8 AS admitted_through,
           coalesce(m.admission_tokens_issued, s.admitted) AS admitted, coalesce(m.watermark_advanced, 0) AS advanced,
           s.controller_rate_per_min, s.plan_admits_per_min, s.rate_override_per_min, s.checkout_attempts, s.checkout_failed, s.checkout_declined,
           s.payment_attempts_per_second, s.hold_latency_p99_ms, s.alerts_critical, s.alerts_warning, s.recorded_at
    FROM sale_minutes s LEFT JOIN admission_minutes m ON m.event_id = s.event_id AND m.minute = s.minute
    WHERE s.event_id = ${eventId}
    ORDER BY s.minute
    LIMIT ${limit}`.execute(db);
  return rows;
}
