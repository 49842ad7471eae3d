export * from './queue.service.js';
export { initQueue } from './queue-init.js';
export { WatermarkStore, type PublicQueueInfo } from './watermark-store.js';
export { joinSequenceName, lastMinuteAdmissions } from './queue.repository.js';
export * from './edge.js';
export * from './edge-state.js';
export * from './fairness.js';
export { CachedTokenVerifier, BoundedCache, createNodeTokenKey, verifyAdmission } from './token-cache.js';
export * from './copy.js';
