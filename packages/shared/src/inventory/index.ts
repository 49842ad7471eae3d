export * from './inventory.service.js';
export * from './best-available.js';
export * from './holds.service.js';
export * from './holds.schema.js';
export * from './seatmap.js';
export { SectionAvailabilityCache } from './availability-cache.js';
export type { SeatStatus, HoldStatus, SeatRow, HoldRow } from './inventory.table.js';
export * from './add-seats.js';
