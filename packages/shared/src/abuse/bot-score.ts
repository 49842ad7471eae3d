/**
 * Bot scoring: what a join request looks like, a pluggable scorer, and the verdict its score maps to. Pure: the
 * store API gathers the signals, the join gate acts on the verdict.
 *
 * Friction is proportional to risk: low-risk sessions see nothing, medium-risk ones solve
 * a proof-of-work before joining, high-risk ones are queued behind everyone else. Hard limits stay at hold and
 * checkout, where identity and payment instrument are known; a scorer only decides how much friction to add.
 */

/** What the origin can tell about a join request. */
export interface BotSignals {
  /** The User-Agent header, or null when absent. */
  userAgent: string | null;
  /** Lower-cased names of the request headers present. */
  headerNames: readonly string[];
  /** What this instance has seen of the device id: how long ago first (null: never before) and by how many accounts. */
  device: { firstSeenSecondsAgo: number | null; accountsSeen: number };
  /** Requests to the rate-limited routes in the current window, by this account and from this IP. */
  requestRate: { accountPerWindow: number; ipPerWindow: number };
  /** A client-supplied attestation (X-Client-Attestation), unverified; null when absent. */
  attestation: string | null;
}

/** Scores a request from 0 (surely a person) to 1 (surely a bot). May be asynchronous (a vendor call). */
export interface BotScorer {
  score(signals: BotSignals): number | Promise<number>;
}

export type BotVerdict = 'PASS' | 'CHALLENGE' | 'LOW_PRIORITY';

/** Score thresholds: at or above `challenge` a proof-of-work; at or above `lowPriority` a later place in line. */
export interface BotThresholds {
  challenge: number;
  lowPriority: number;
}

export const DEFAULT_BOT_THRESHOLDS: BotThresholds = { challenge: 0.6, lowPriority: 0.85 };

/** The verdict a score maps to. */
export function botVerdict(score: number, t: BotThresholds = DEFAULT_BOT_THRESHOLDS): BotVerdict {
  if (!(score >= 0)) return 'PASS'; // NaN or negative: a broken scorer adds no friction (rate limits and hard limits still apply)
  if (score >= t.lowPriority) return 'LOW_PRIORITY';
  if (score >= t.challenge) return 'CHALLENGE';
  return 'PASS';
}

/** Libraries and headless browsers that announce themselves. */
const AUTOMATION_UA =
  /\b(headlesschrome|phantomjs|puppeteer|playwright|selenium|webdriver|python-requests|python-urllib|aiohttp|httpx|curl|wget|go-http-client|scrapy|okhttp|java\/|libwww-perl|httpclient|postmanruntime|insomnia)\b/i;

export interface DefaultBotScorerOptions {
  /** Verifies a client attestation (a platform integrity token, say). A verified one scores 0; a failing one adds risk. */
  verifyAttestation?: (attestation: string) => boolean | Promise<boolean>;
  /** Requests per rate-limit window above which an account looks automated (default 30). */
  accountRequestsHigh?: number;
  /** Requests per window from one IP above which the address looks like a farm (default 600). */
  ipRequestsHigh?: number;
}

/**
 * The default scorer: a transparent sum of weights over the signals, clamped to [0, 1].
 *
 *   User-Agent missing                             +0.45
 *   User-Agent of an automation library / headless +0.45
 *   User-Agent present but not a browser's          +0.25
 *   no Accept-Language                              +0.15
 *   no Accept                                       +0.05
 *   device never seen before by this instance       +0.05
 *   device seen with 3+ accounts (10+)              +0.30 (+0.50)
 *   account above accountRequestsHigh per window    +0.20
 *   IP above ipRequestsHigh per window              +0.10
 *   attestation present but failing verification    +0.30
 *   attestation verified                            score 0
 *
 * With the default thresholds a browser passes; curl, a script or a request without a User-Agent is challenged;
 * a script that also shares its device with other accounts, or hammers the API, is queued behind everyone.
 */
export class DefaultBotScorer implements BotScorer {
  constructor(private readonly opts: DefaultBotScorerOptions = {}) {}

  async score(s: BotSignals): Promise<number> {
    let attestationRisk = 0;
    if (s.attestation !== null && this.opts.verifyAttestation) {
      if (await this.opts.verifyAttestation(s.attestation)) return 0;
      attestationRisk = 0.3;
    }
    return Math.min(1, scoreSignals(s, this.opts) + attestationRisk);
  }
}

/** The default scorer's weights without the attestation step (pure and synchronous). */
export function scoreSignals(s: BotSignals, opts: Pick<DefaultBotScorerOptions, 'accountRequestsHigh' | 'ipRequestsHigh'> = {}): number {
  const headers = new Set(s.headerNames);
  let score = 0;
  const ua = s.userAgent?.trim() ?? '';
  if (ua === '') score += 0.45;
  else if (AUTOMATION_UA.test(ua)) score += 0.45;
  else if (!/^Mozilla\/5\.0 /.test(ua)) score += 0.25;
  if (!headers.has('accept-language')) score += 0.15;
  if (!headers.has('accept')) score += 0.05;
  if (s.device.firstSeenSecondsAgo === null) score += 0.05;
  if (s.device.accountsSeen >= 10) score += 0.5;
  else if (s.device.accountsSeen >= 3) score += 0.3;
  if (s.requestRate.accountPerWindow > (opts.accountRequestsHigh ?? 30)) score += 0.2;
  if (s.requestRate.ipPerWindow > (opts.ipRequestsHigh ?? 600)) score += 0.1;
  return Math.min(1, Math.round(score * 1000) / 1000);
}
