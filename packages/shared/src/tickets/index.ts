export * from './tickets.schema.js';
export * from './codes.js';
export type * from './tickets.table.js';
