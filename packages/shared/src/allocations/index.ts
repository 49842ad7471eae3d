export * from './allocations.schema.js';
export * from './allocations.service.js';
export * from './access-code.js';
export { assignAllocations } from './assign.js';
export type { AllocationRow, AllocationAccess } from './allocations.table.js';
