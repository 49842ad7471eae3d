export * from './events.schema.js';
export * from './events.service.js';
export * from './layout.js';
export type { FairnessMode, EventRow, SectionRow } from './events.table.js';
export { insertAudit } from './events.repository.js';
export { EventCache, type CachedEvent } from './event-cache.js';
export * from './configure.service.js';
export * from './audit-log.service.js';
export { AWAITING_SIGNOFF_MESSAGE, AWAITING_SIGNOFF_MESSAGES, awaitsSignOff } from './signoff.service.js';
