import { z } from 'zod';
import '../words/zod-messages.js';

// The console's audit log query. Zod only: the console validates its search params with it, the BFF its input.

const emptyAsUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const optionalText = (max: number) => z.preprocess(emptyAsUndefined, z.string().trim().max(max, `at most ${max} characters`).optional());
const optionalInstant = z.preprocess(
  emptyAsUndefined,
  z.iso.datetime({ offset: true, error: 'a date and time (ISO 8601 with an offset)' }).optional(),
);

export const AUDIT_LOG_PAGE_MAX = 200;

/**
 * Which audit entries to show, newest first: of one event, by an actor (any part of it, case-insensitive), of an
 * action (exact, or every action under a prefix ending in "."), from (inclusive) and to (exclusive) a time;
 * `before` is the page cursor (entries older than that id).
 */
export const auditLogQuerySchema = z
  .object({
    eventId: z.preprocess(emptyAsUndefined, z.guid({ error: 'an event id' }).optional()),
    actor: optionalText(254),
    action: optionalText(100),
    from: optionalInstant,
    to: optionalInstant,
    before: z.number().int().positive().optional(),
    limit: z.number().int().min(1).max(AUDIT_LOG_PAGE_MAX).default(50),
  })
  .superRefine((q, ctx) => {
    if (q.from && q.to && Date.parse(q.from) >= Date.parse(q.to))
      ctx.addIssue({ code: 'custom', path: ['to'], message: 'must be after "from"' });
  });
export type AuditLogQueryInput = z.input<typeof auditLogQuerySchema>;
export type AuditLogQuery = z.output<typeof auditLogQuerySchema>;
