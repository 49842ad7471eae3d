import type { Db } from '@onsale/shared/db';
import type { Metrics } from '@onsale/shared/metrics';
import type { PaymentProvider } from '@onsale/shared/checkout';
import type { FanIdentity } from '@onsale/shared/auth';
import type { BotScorer } from '@onsale/shared/abuse';
import type { StoreApiConfig } from './env.js';

export interface StoreApiDeps {
  db: Db;
  config: StoreApiConfig;
  payments?: PaymentProvider;
  metrics?: Metrics;
  /** The bot-score hook's scorer (default: DefaultBotScorer over the request's signals). */
  botScorer?: BotScorer;
  /** Fan identity to use instead of the one the config names (tests). */
  identity?: FanIdentity;
  /** A store process of a cluster: merges every process's figures into GET /metrics (clusterMetricsGatherer). */
  clusterMetrics?: ((own: Metrics['registry']) => Promise<string>) | null;
  /**
   * The clock of the caches (event settings, seat maps), the hold rules and the bot gate, in epoch ms (default
   * Date.now), and the time admission claims are recorded at (default: the database's clock). Tests move an injected
   * clock instead of waiting for a cache to turn or a deferral to pass.
   */
  clock?: () => number;
}
