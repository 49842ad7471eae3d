import { sql, type Insertable, type RawBuilder } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { FairnessSignoffsTable } from './signoff.table.js';

// The fairness sign-offs: their rows, and the predicate as SQL for the repositories that read an event's queue state with it.

/**
 * SQL: the event has a live sign-off of its current fairness mode. `eventId` and `mode` are the columns of the
 * event row in the caller's query (e.g. `e.id`, `e.fairness_mode`). One home for the predicate: the controller,
 * the store API's watermarks, the war room and the event lists all use it.
 */
export function signedOffSql(eventId: string, mode: string): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM fairness_signoffs s
    WHERE s.event_id = ${sql.ref(eventId)} AND s.superseded_at IS NULL AND s.fairness_mode = ${sql.ref(mode)})`;
}

export function findLiveSignoff(db: Db | Trx, eventId: string) {
  return db
    .selectFrom('fairness_signoffs')
    .selectAll()
    .where('event_id', '=', eventId)
    .where('superseded_at', 'is', null)
    .executeTakeFirst();
}

/** Every sign-off of the event, newest first. */
export function findSignoffs(db: Db | Trx, eventId: string) {
  return db.selectFrom('fairness_signoffs').selectAll().where('event_id', '=', eventId).orderBy('id', 'desc').execute();
}

export function insertSignoff(trx: Trx, row: Insertable<FairnessSignoffsTable>) {
  return trx.insertInto('fairness_signoffs').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Marks the live sign-off superseded; returns it, or undefined when there was none. */
export function supersedeSignoff(trx: Trx, eventId: string, by: string, reason: string) {
  return trx
    .updateTable('fairness_signoffs')
    .set({ superseded_at: sql<Date>`now()`, superseded_by: by, superseded_reason: reason })
    .where('event_id', '=', eventId)
    .where('superseded_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}
