export * from './payment.js';
export * from './checkout.schema.js';
export * from './checkout.service.js';
export * from './cancel.js';
export * from './process-lease.js';
