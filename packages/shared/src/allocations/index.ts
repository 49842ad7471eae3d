export * from '../events/allocations.schema.js';
export * from './allocations.service.js';
export * from './access-code.js';
export * from './tier-view.js';
export { assignAllocations, tierCapacities } from './assign.js';
export type { AllocationRow, AllocationAccess } from './allocations.table.js';
export { EventCache, type CachedEvent } from './event-cache.js';
