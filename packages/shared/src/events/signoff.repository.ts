import { sql, type RawBuilder } from 'kysely';

// The fairness sign-off predicate as SQL, for the repositories that read an event's queue state with it.

/**
 * SQL: the event has a live sign-off of its current fairness mode. `eventId` and `mode` are the columns of the
 * event row in the caller's query (e.g. `e.id`, `e.fairness_mode`). One home for the predicate: the controller,
 * the store API's watermarks, the war room and the event lists all use it.
 */
export function signedOffSql(eventId: string, mode: string): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM fairness_signoffs s
    WHERE s.event_id = ${sql.ref(eventId)} AND s.superseded_at IS NULL AND s.fairness_mode = ${sql.ref(mode)})`;
}
