// The store processes' load as other domains use it: each store process's tracker, and the report it writes every
// beat (queue/watermark-store.ts) that the admission controller reads (controller.ts).
export { StoreLoadTracker } from './store-load.js';
export { readStoreLoad, reportStoreLoad } from './store-load.repository.js';
