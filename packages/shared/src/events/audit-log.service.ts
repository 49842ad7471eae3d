import type { Db, Trx } from '../db/connect.js';
import { DomainError } from '../errors.js';
import * as repo from './audit-log.repository.js';
import { auditLogQuerySchema, type AuditLogQueryInput } from './audit-log.schema.js';
import { formatIssues } from './events.schema.js';

/** One entry of the audit log: who did what, when, to which event, with the details the action recorded. */
export interface AuditLogEntry {
  id: number;
  at: Date;
  actor: string;
  action: string;
  eventId: string | null;
  eventName: string | null;
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
export async function listAuditLog(db: Db | Trx, input: AuditLogQueryInput, scope: { organisationId: string } | null): Promise<AuditLogPage> {
  const parsed = auditLogQuerySchema.safeParse(input);
  if (!parsed.success) {
    const issues = formatIssues(parsed.error);
    throw new DomainError('invalid', 'INVALID_AUDIT_QUERY', issues.map((i) => `${i.path}: ${i.message}`).join('; '), { field: issues[0]?.path, issues });
  }
  const q = parsed.data;
  const rows = await repo.findAuditEntries(db, q, scope?.organisationId);
  const page = rows.slice(0, q.limit);
  return {
    entries: page.map((r) => ({ id: r.id, at: r.at, actor: r.actor, action: r.action, eventId: r.event_id, eventName: r.event_name, details: r.details ?? {} })),
    nextBefore: rows.length > q.limit ? page[page.length - 1]!.id : null,
  };
}

/** The actions and actors that occur in the (scoped) log, for the console's filters. */
export function auditLogFacets(db: Db | Trx, scope: { organisationId: string } | null): Promise<{ actions: string[]; actors: string[] }> {
  return repo.findAuditFacets(db, scope?.organisationId);
}
