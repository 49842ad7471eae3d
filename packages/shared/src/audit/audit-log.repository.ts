import { sql, type RawBuilder } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { AuditLogQuery } from './audit-log.schema.js';

// SQL of the console's audit log view: filtered, scoped to a promoter's organisation, paged by id (newest first).

export interface AuditLogRow {
  id: number;
  at: Date;
  actor: string;
  action: string;
  event_id: string | null;
  event_name: string | null;
  /** The event's venue time zone (null for entries about no event). */
  event_time_zone: string | null;
  /** The event's currency, the one its details' amounts are in (null for entries about no event). */
  event_currency: string | null;
  details: Record<string, unknown>;
}

/** `LIKE` wildcards in user text matched literally. */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * An organisation's part of the log: entries of its events, and entries about its listings (`details.listingId`,
 * e.g. waitlist settings) where every event on the listing is the organisation's.
 */
function scopeCondition(organisationId: string | undefined): RawBuilder<boolean> {
  if (organisationId === undefined) return sql<boolean>`true`;
  return sql<boolean>`(
    a.event_id IN (SELECT id FROM events WHERE organisation_id = ${organisationId}::uuid)
    OR (a.event_id IS NULL AND a.details->>'listingId' IN (
      SELECT listing_id::text FROM events GROUP BY listing_id
      HAVING bool_and(organisation_id IS NOT DISTINCT FROM ${organisationId}::uuid))))`;
}

export async function findAuditEntries(db: Db | Trx, q: AuditLogQuery, organisationId: string | undefined): Promise<AuditLogRow[]> {
  const conditions: RawBuilder<unknown>[] = [scopeCondition(organisationId)];
  if (q.eventId) conditions.push(sql`a.event_id = ${q.eventId}::uuid`);
  if (q.actor) conditions.push(sql`a.actor ILIKE ${`%${likeEscape(q.actor)}%`}`);
  if (q.action) conditions.push(q.action.endsWith('.') ? sql`starts_with(a.action, ${q.action})` : sql`a.action = ${q.action}`);
  if (q.from) conditions.push(sql`a.at >= ${q.from}::timestamptz`);
  if (q.to) conditions.push(sql`a.at < ${q.to}::timestamptz`);
  if (q.before !== undefined) conditions.push(sql`a.id < ${q.before}`);
  const { rows } = await sql<AuditLogRow>`
    SELECT a.id, a.at, a.actor, a.action, a.event_id, e.name AS event_name, e.time_zone AS event_time_zone, e.currency AS event_currency, a.details
    FROM audit_log a LEFT JOIN events e ON e.id = a.event_id
    WHERE ${sql.join(conditions, sql` AND `)}
    ORDER BY a.id DESC
    LIMIT ${q.limit + 1}`.execute(db);
  return rows;
}

/** The distinct actions and actors in an organisation's part of the log (or all of it), for the filters. */
export async function findAuditFacets(db: Db | Trx, organisationId: string | undefined): Promise<{ actions: string[]; actors: string[] }> {
  const scope = scopeCondition(organisationId);
  const [actions, actors] = await Promise.all([
    sql<{ v: string }>`SELECT DISTINCT a.action AS v FROM audit_log a WHERE ${scope} ORDER BY 1 LIMIT 500`.execute(db),
    sql<{ v: string }>`SELECT DISTINCT a.actor AS v FROM audit_log a WHERE ${scope} ORDER BY 1 LIMIT 500`.execute(db),
  ]);
  return { actions: actions.rows.map((r) => r.v), actors: actors.rows.map((r) => r.v) };
}

/** Writes one audit entry, in the caller's transaction when given one: every change an operator or the system makes. */
export async function insertAudit(
  db: Db | Trx,
  entry: { actor: string; action: string; eventId?: string | null; details?: unknown },
): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      actor: entry.actor,
      action: entry.action,
      event_id: entry.eventId ?? null,
      details: JSON.stringify(entry.details ?? {}),
    })
    .execute();
}
