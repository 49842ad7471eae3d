// The war room's rolling series: pure, browser-safe. The hub keeps one per event on the server; the console keeps
// its own from the stream, seeded with the hub's on its first message.
import type { WarRoomSnapshot } from './warroom.service.js';

/** A point of the rolling series the war room charts (inventory over time and friends). */
export interface WarRoomPoint {
  /** ms since the epoch (database clock). */
  t: number;
  available: number;
  held: number;
  sold: number;
  joined: number;
  waiting: number;
  admittedThrough: number;
  paymentAttemptsPerSecond: number;
}

export function toPoint(s: WarRoomSnapshot): WarRoomPoint {
  return {
    t: Date.parse(s.at),
    available: s.inventory.available,
    held: s.inventory.held,
    sold: s.inventory.sold,
    joined: s.queue.joined,
    waiting: s.queue.waiting,
    admittedThrough: s.queue.admittedThrough,
    paymentAttemptsPerSecond: s.payment.attemptsPerSecond,
  };
}

/**
 * The series with `point` added at the end (ignored when not newer than the last point) and points older than
 * `horizonMs` before it dropped. Returns a new array; the input is never changed.
 */
export function appendPoint(series: readonly WarRoomPoint[], point: WarRoomPoint, horizonMs: number): WarRoomPoint[] {
  const last = series[series.length - 1];
  if (last && last.t >= point.t) return [...series];
  const from = point.t - horizonMs;
  let drop = 0;
  while (drop < series.length && series[drop]!.t < from) drop++;
  return [...series.slice(drop), point];
}
