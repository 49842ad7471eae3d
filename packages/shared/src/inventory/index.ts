export * from './inventory.service.js';
export type { SeatStatus, HoldStatus, SeatRow, HoldRow } from './inventory.table.js';
