export * from './payment.js';
export * from './checkout.schema.js';
export * from './checkout.service.js';
export * from './cancel.js';
export { CardFingerprints, legacyCardFingerprint, LEGACY_FINGERPRINT_PREFIX } from './card-fingerprint.js';
export * from './process-lease.js';
export * from './refund.js';
