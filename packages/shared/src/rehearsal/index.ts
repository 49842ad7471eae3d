export * from './stats.js';
export * from './plan.js';
export * from './verdict.js';
export * from './report.js';
export * from './resources.js';
export type { RehearsalReportRow, RehearsalStatus } from './rehearsal.table.js';
export * from './rehearsal.repository.js';
export * from './launch.js';
