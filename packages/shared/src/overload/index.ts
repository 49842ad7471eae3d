export {
  checkSheddingLimits,
  DEFAULT_SHEDDING_LIMITS,
  lowestDelayLimit,
  SHED_ORDERS,
  shedReason,
  shedRetryAfterSeconds,
  type LoadReading,
  type ShedOrder,
  type ShedReason,
  type SheddingLimits,
} from './shedding.js';
export { LoadShedder, type LoadShedderOptions, type ShedAnswer } from './shedder.js';
export { loadSheddingConfigOf, loadSheddingEnvShape, type LoadSheddingConfig } from './settings.js';
export { BUDGET_MARGIN_MS, checkTimeoutOrder, STORE_SERVER_TIMEOUTS } from './timeouts.js';
export { EpisodeLog } from './episode-log.js';
