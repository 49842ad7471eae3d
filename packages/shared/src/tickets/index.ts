export * from './tickets.schema.js';
export * from './codes.js';
export * from './tickets.service.js';
export type * from './tickets.table.js';
