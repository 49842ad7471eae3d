export * from './plan.js';
export * from './budget.js';
export * from './rate.js';
export * from './advance.js';
export {
  AdmissionController,
  tickEvent,
  ADMISSION_WINDOW_BEFORE_OPEN_MS,
  MAX_TICK_ELAPSED_MS,
  type AdmissionControllerOptions,
  type ControllerTickReport,
  type EventTickContext,
  type EventTickOutcome,
  type FansInside,
} from './controller.js';
export { findActiveEvents, type ActiveEventRow } from './controller.repository.js';
export * from './operator.js';
export * from './audit.js';
export * from './fairness-report.js';
export * from './schedule.service.js';
