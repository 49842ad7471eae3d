export * from './bot-score.js';
export * from './device.js';
export { DeviceSightings } from './device-sightings.js';
export * from './pow.js';
export * from './join-gate.js';
export * from './review.js';
export * from './review.service.js';
export { hasQueuePosition } from './abuse.repository.js';
export { createAbuseMetrics, localShareOfLimit, type AbuseMetrics } from './metrics.js';
