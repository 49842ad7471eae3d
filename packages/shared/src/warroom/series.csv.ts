import { csvWallTime, toCsv } from '../export/csv.js';
import type { SaleMinuteRow } from './series.repository.js';

/** The whole sale's series in the CSV export: one row a minute, units in the column names. */
export const SERIES_CSV_HEADER = [
  'Minute (UTC)',
  'Minute at the venue',
  'State',
  'Capacity',
  'Available',
  'Held',
  'Sold',
  'Joined',
  'Waiting',
  'Admitted through (watermark)',
  'Admitted (admission tokens issued)',
  'Watermark advanced (positions)',
  'Controller rate (admits/min)',
  'Plan (admits/min)',
  'Operator rate override (admits/min)',
  'Checkout attempts',
  'Checkouts failed at the gateway',
  'Cards declined by their issuer',
  'Payment attempts per second',
  'Hold latency p99 (ms)',
  'Critical alerts',
  'Warning alerts',
] as const;

const round = (n: number | null, digits: number) => (n === null ? null : Number(n.toFixed(digits)));

/** An event's minutes (findSaleMinutes, oldest first) as CSV, the venue's wall clock beside UTC. Pure. */
export function saleMinutesCsv(rows: readonly (SaleMinuteRow & { advanced: number })[], timeZone: string): string {
  return toCsv(
    SERIES_CSV_HEADER,
    rows.map((m) => [
      m.minute.toISOString(),
      csvWallTime(m.minute, timeZone),
      m.state,
      m.capacity,
      m.available,
      m.held,
      m.sold,
      m.joined,
      m.waiting,
      Number(m.admitted_through),
      m.admitted,
      m.advanced,
      round(m.controller_rate_per_min, 1),
      round(m.plan_admits_per_min, 1),
      m.rate_override_per_min,
      m.checkout_attempts,
      m.checkout_failed,
      m.checkout_declined,
      round(m.payment_attempts_per_second, 2),
      round(m.hold_latency_p99_ms, 1),
      m.alerts_critical,
      m.alerts_warning,
    ]),
  );
}
