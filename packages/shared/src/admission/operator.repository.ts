import { sql } from 'kysely';
import type { Trx } from '../db/connect.js';

// The operator controls' SQL (operator.ts): an event's queues (its own, or its presale tiers') and their queue_state.

export interface ControlRow {
  event_id: string;
  paused: boolean;
  paused_reason: string | null;
  paused_by: string | null;
  paused_at: Date | null;
  rate_override_per_min: number | null;
  admitted_through: number;
  updated_at: Date;
}

/** An event's presale tiers with their queues, in order (none: the event has only its own queue). */
export function findQueuesOfEvent(trx: Trx, eventId: string) {
  return trx
    .selectFrom('allocations')
    .select(['code', 'queue_id', 'general'])
    .where('event_id', '=', eventId)
    .orderBy('position')
    .execute();
}

/** Locks the queues' rows, in id order. */
export async function lockQueueControls(trx: Trx, queueIds: string[]): Promise<ControlRow[]> {
  const { rows } = await sql<ControlRow>`
    SELECT event_id, paused, paused_reason, paused_by, paused_at, rate_override_per_min, admitted_through, updated_at
    FROM queue_state WHERE event_id = ANY(${queueIds}::uuid[]) ORDER BY event_id FOR UPDATE`.execute(trx);
  return rows;
}

/** One queue's controls, with the database's clock. */
export async function findQueueControl(trx: Trx, queueId: string): Promise<(ControlRow & { now: Date })[]> {
  const { rows } = await sql<ControlRow & { now: Date }>`
    SELECT event_id, paused, paused_reason, paused_by, paused_at, rate_override_per_min, admitted_through, updated_at, now() AS now
    FROM queue_state WHERE event_id = ${queueId}`.execute(trx);
  return rows;
}

/** Pauses the queues, saying why and who. */
export async function pauseQueues(trx: Trx, queueIds: string[], reason: string, actor: string): Promise<ControlRow[]> {
  const { rows } = await sql<ControlRow>`
    UPDATE queue_state SET paused = true, paused_reason = ${reason}, paused_by = ${actor}, paused_at = now(), updated_at = now()
    WHERE event_id = ANY(${queueIds}::uuid[])
    RETURNING event_id, paused, paused_reason, paused_by, paused_at, rate_override_per_min, admitted_through, updated_at`.execute(trx);
  return rows;
}

/** Resumes the queues. */
export async function resumeQueues(trx: Trx, queueIds: string[]): Promise<(ControlRow & { now: Date })[]> {
  const { rows } = await sql<ControlRow & { now: Date }>`
    UPDATE queue_state SET paused = false, paused_reason = NULL, paused_by = NULL, paused_at = NULL, updated_at = now()
    WHERE event_id = ANY(${queueIds}::uuid[])
    RETURNING event_id, paused, paused_reason, paused_by, paused_at, rate_override_per_min, admitted_through, updated_at, now() AS now`.execute(
    trx,
  );
  return rows;
}

/** Sets (or clears, with null) a queue's operator rate. */
export async function setQueueRateOverride(trx: Trx, queueId: string, perMinute: number | null): Promise<ControlRow[]> {
  const { rows } = await sql<ControlRow>`
    UPDATE queue_state SET rate_override_per_min = ${perMinute}, updated_at = now()
    WHERE event_id = ${queueId}
    RETURNING event_id, paused, paused_reason, paused_by, paused_at, rate_override_per_min, admitted_through, updated_at`.execute(trx);
  return rows;
}
