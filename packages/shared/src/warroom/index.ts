export * from './alerts.js';
export * from './prometheus.js';
export * from './store-metrics.js';
export * from './warroom.schema.js';
export * from './warroom.service.js';
export { WarRoomHub, type WarRoomHubOptions, type WarRoomMessage, type WarRoomBoardMessage } from './hub.js';
