import type { Db, Trx } from '../db/connect.js';
import { DomainError, formatIssues } from '../errors.js';
import * as repo from './audit-log.repository.js';
import { AUDIT_LOG_PAGE_MAX, auditLogQuerySchema, type AuditLogQuery, type AuditLogQueryInput } from './audit-log.schema.js';
import { csvWallTime, toCsv } from '../export/csv.js';
import { actionWords, actorWords, auditDetailsWords } from '../words/audit.js';

/** One entry of the audit log: who did what, when, to which event, with the details the action recorded. */
export interface AuditLogEntry {
  id: number;
  at: Date;
  actor: string;
  action: string;
  eventId: string | null;
  eventName: string | null;
  /** The event's venue time zone, in which its details' times read (null: an entry about no event). */
  eventTimeZone: string | null;
  /** The event's currency, in which its details' amounts read (null: an entry about no event). */
  eventCurrency: string | null;
  details: Record<string, unknown>;
}

/** A page of the audit log, newest first; `nextBefore` asks for the next (older) page, null on the last. */
export interface AuditLogPage {
  entries: AuditLogEntry[];
  nextBefore: number | null;
}

/**
 * The audit log, filtered (see auditLogQuerySchema) and paged newest first. With a scope, only an organisation's
 * part: its events' entries and its listings'. INVALID_AUDIT_QUERY names the field at fault.
 */
export async function listAuditLog(
  db: Db | Trx,
  input: AuditLogQueryInput,
  scope: { organisationId: string } | null,
): Promise<AuditLogPage> {
  return pageOf(db, parseQuery(input), scope);
}

function parseQuery(input: AuditLogQueryInput): AuditLogQuery {
  const parsed = auditLogQuerySchema.safeParse(input);
  if (!parsed.success) {
    const issues = formatIssues(parsed.error);
    throw new DomainError('invalid', 'INVALID_AUDIT_QUERY', issues.map((i) => `${i.path}: ${i.message}`).join('; '), {
      field: issues[0]?.path,
      issues,
    });
  }
  return parsed.data;
}

/** The most entries one CSV export carries (newest first); an export that stops there says so. */
export const AUDIT_EXPORT_MAX_ROWS = 50_000;

/** The audit log's columns in the CSV export: times in UTC and at the venue, words beside the raw keys. */
export const AUDIT_CSV_HEADER = [
  'Time (UTC)',
  'Time at the venue',
  'Venue time zone',
  'Who',
  'Actor id',
  'What',
  'Action',
  'Event',
  'Event id',
  'Details',
  'Details (JSON)',
] as const;

/**
 * The whole audit log that the filters select (every page, newest first, at most AUDIT_EXPORT_MAX_ROWS) as CSV, for
 * the operator's records: each entry in words (who, what, the details as a sentence, times at the venue) beside the
 * raw values (actor id, action key, details as JSON), so nothing is lost. The scope is the list's.
 */
export async function auditLogCsv(
  db: Db | Trx,
  input: AuditLogQueryInput,
  scope: { organisationId: string } | null,
  maxRows = AUDIT_EXPORT_MAX_ROWS,
): Promise<{ csv: string; rows: number; truncated: boolean }> {
  const q = parseQuery({ ...input, before: undefined, limit: AUDIT_LOG_PAGE_MAX });
  const entries: AuditLogEntry[] = [];
  let before: number | undefined;
  let more = true;
  while (more && entries.length < maxRows) {
    const page = await pageOf(db, { ...q, before, limit: Math.min(AUDIT_LOG_PAGE_MAX, maxRows - entries.length) }, scope);
    entries.push(...page.entries);
    more = page.nextBefore !== null;
    before = page.nextBefore ?? undefined;
  }
  const csv = toCsv(
    AUDIT_CSV_HEADER,
    entries.map((e) => {
      const zone = e.eventTimeZone ?? 'UTC';
      return [
        e.at.toISOString(),
        csvWallTime(e.at, zone),
        zone,
        actorWords(e.actor),
        e.actor,
        actionWords(e.action),
        e.action,
        e.eventName,
        e.eventId,
        auditDetailsWords(e.action, e.details, zone, e.eventCurrency),
        JSON.stringify(e.details),
      ];
    }),
  );
  return { csv, rows: entries.length, truncated: more };
}

async function pageOf(db: Db | Trx, q: AuditLogQuery, scope: { organisationId: string } | null): Promise<AuditLogPage> {
  const rows = await repo.findAuditEntries(db, q, scope?.organisationId);
  const page = rows.slice(0, q.limit);
  return {
    entries: page.map((r) => ({
      id: r.id,
      at: r.at,
      actor: r.actor,
      action: r.action,
      eventId: r.event_id,
      eventName: r.event_name,
      eventTimeZone: r.event_time_zone,
      eventCurrency: r.event_currency,
      details: r.details ?? {},
    })),
    nextBefore: rows.length > q.limit ? page[page.length - 1]!.id : null,
  };
}

/** The actions and actors that occur in the (scoped) log, for the console's filters. */
export function auditLogFacets(db: Db | Trx, scope: { organisationId: string } | null): Promise<{ actions: string[]; actors: string[] }> {
  return repo.findAuditFacets(db, scope?.organisationId);
}
