export * from './plan.js';
export * from './budget.js';
export * from './rate.js';
