export * from '../events/lottery.schema.js';
export * from './lottery.service.js';
export * from './draw.js';
export * from './invitation.js';
export * from './audit.js';
export type * from './lottery.table.js';
