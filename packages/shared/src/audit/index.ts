// The audit log: every change an operator or the system makes, written in the change's transaction (insertAudit)
// and read back page by page or as CSV (listAuditLog, the console's audit page and `onsale audit`). Below every
// other domain: it imports none of them.
export * from './audit-log.service.js';
export * from './audit-log.schema.js';
export { insertAudit } from './audit-log.repository.js';
