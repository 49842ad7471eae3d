// A rehearsal's plan: who the virtual fans are, when they arrive, how the event's clock is compressed, when the
// faults strike, and what makes a verdict. Pure: the CLI's driver acts on it.

/** A seeded pseudo-random generator (mulberry32): a rehearsal replays the same crowd from the same seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The faults a rehearsal can strike. kill-store, kill-worker and restart-db need the product's processes and
 * database (`--spawn`); slow-payments changes only the rehearsal's own event, so it works against any product.
 */
export const FAULT_KINDS = ['kill-store', 'kill-worker', 'restart-db', 'slow-payments'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** When a fault strikes: a share of the planned sale (`@40%`) or seconds after the open (`@90s`). */
export type FaultAt = { percentOfSale: number } | { secondsAfterOpen: number };

export interface FaultSpec {
  kind: FaultKind;
  at: FaultAt;
  /** The text it was given as (`kill-store@30%`), for the report. */
  text: string;
}

/** Parses `NAME@P%` or `NAME@Ns`; throws an Error whose message names what is wrong. */
export function parseFault(text: string): FaultSpec {
  const m = /^([a-z-]+)@(\d+(?:\.\d+)?)(%|s)$/.exec(text.trim());
  if (!m)
    throw new Error(
      `--fault ${JSON.stringify(text)}: write NAME@P% (a share of the sale) or NAME@Ns (seconds after the open), e.g. kill-store@30%`,
    );
  const kind = m[1] as FaultKind;
  if (!FAULT_KINDS.includes(kind))
    throw new Error(`--fault ${JSON.stringify(text)}: unknown fault ${JSON.stringify(m[1])}; choose one of ${FAULT_KINDS.join(', ')}`);
  const n = Number(m[2]);
  if (m[3] === '%' && n > 100) throw new Error(`--fault ${JSON.stringify(text)}: a share of the sale is 0-100%`);
  return { kind, at: m[3] === '%' ? { percentOfSale: n } : { secondsAfterOpen: n }, text: text.trim() };
}

/** Milliseconds after the open at which a fault strikes, for a sale planned to last `plannedSaleMs`. */
export function faultOffsetMs(at: FaultAt, plannedSaleMs: number): number {
  return 'percentOfSale' in at ? Math.round((at.percentOfSale / 100) * plannedSaleMs) : Math.round(at.secondsAfterOpen * 1000);
}

/** The slow-payments fault: what the simulated gateway does to the rehearsal's event's charges, and for how long. */
export interface SlowPaymentsFault {
  /** Share of charges refused for load (429 at the gateway; fans read 503 PAYMENT_GATEWAY_BUSY and retry). */
  busyShare: number;
  retryAfterSeconds: number;
  /** Added to the latency of the charges not refused. */
  delayMs: number;
  /** How long the gateway stays so, ms: then it is lifted. */
  durationMs: number;
}

/**
 * The slow-payments fault for a sale planned to last `plannedSaleMs` (already compressed) at `timeScale`: half the
 * charges refused for load with Retry-After 1 s, the rest 60 s / K late, within 1 to 5 s (a slow provider's 5 s at
 * real time; never under a second, which is not slow, since the product's own payment timings are real seconds),
 * for 15% of the planned sale, at least 10 s (long enough for fans to meet it and retry) and at most an hour.
 */
export function slowPaymentsFault(plannedSaleMs: number, timeScale: number): SlowPaymentsFault {
  return {
    busyShare: 0.5,
    retryAfterSeconds: 1,
    delayMs: Math.round(Math.min(5000, Math.max(1000, 60_000 / timeScale))),
    durationMs: Math.round(Math.min(3_600_000, Math.max(10_000, plannedSaleMs * 0.15))),
  };
}

/** The event settings a time scale compresses, as the event file has them. */
export interface EventClock {
  holdTtlSeconds: number;
  holdExtensionSeconds: number;
  targetSaleMinutes: number;
  checkoutMinutes: number;
  seatPickingOpensAfterMinutes: number;
  offerTtlSeconds: number;
}

/**
 * The event's clock compressed `timeScale` times: every duration divided by it (a 30-minute sale in one minute at
 * 30), whole seconds never below 1 so a hold still lives. Rates are per real minute from then on.
 */
export function compressClock(c: EventClock, timeScale: number): EventClock {
  if (!(timeScale >= 1)) throw new Error(`time scale must be at least 1; got ${timeScale}`);
  const seconds = (s: number) => Math.max(1, Math.round(s / timeScale));
  return {
    holdTtlSeconds: seconds(c.holdTtlSeconds),
    holdExtensionSeconds: c.holdExtensionSeconds === 0 ? 0 : seconds(c.holdExtensionSeconds),
    targetSaleMinutes: c.targetSaleMinutes / timeScale,
    checkoutMinutes: c.checkoutMinutes / timeScale,
    seatPickingOpensAfterMinutes: c.seatPickingOpensAfterMinutes / timeScale,
    offerTtlSeconds: seconds(c.offerTtlSeconds),
  };
}

/** How the crowd arrives: a pre-open crowd growing towards the open, then a tail thinning out after it. */
export interface ArrivalCurve {
  /** How long the pre-open crowd takes to arrive, ms from the first fan. */
  preOpenMs: number;
  /** When the open is, ms from the first fan (default preOpenMs): the tail arrives after it. */
  openMs?: number;
  /** Share of the fans who arrive before the open. */
  preOpenShare: number;
  /** Mean delay after the open of the tail's fans, ms (exponential). */
  tailMeanMs: number;
}

/**
 * Each fan's arrival, ms from the start of the rehearsal (the open is at `preOpenMs`). Before the open the density
 * rises linearly towards it (most of a crowd comes in the last minutes); after it, an exponential tail.
 */
export function arrivalOffsets(fans: number, curve: ArrivalCurve, random: () => number): Float64Array {
  const out = new Float64Array(fans);
  for (let i = 0; i < fans; i++) {
    if (random() < curve.preOpenShare) out[i] = curve.preOpenMs * Math.sqrt(random());
    else out[i] = (curve.openMs ?? curve.preOpenMs) + -Math.log(1 - random()) * curve.tailMeanMs;
  }
  return out;
}

/** How bot operators work: many accounts each, a few devices and cards shared by all of them. */
export interface BotShape {
  accountsPerOperator: number;
  devicesPerOperator: number;
  cardsPerOperator: number;
}

export const DEFAULT_BOT_SHAPE: BotShape = { accountsPerOperator: 100, devicesPerOperator: 1, cardsPerOperator: 2 };

/**
 * The crowd's make-up: fan i is a bot when `botOperator[i] >= 0` (its operator's number). Bots are spread through
 * the crowd at random, `botsShare` of it, in operators of `accountsPerOperator` accounts.
 */
export function botOperators(fans: number, botsShare: number, shape: BotShape, random: () => number): Int32Array {
  const operatorOf = new Int32Array(fans).fill(-1);
  const bots = Math.round(fans * botsShare);
  // A partial Fisher-Yates shuffle picks which fans are bots without an array of objects.
  const idx = new Int32Array(fans);
  for (let i = 0; i < fans; i++) idx[i] = i;
  for (let k = 0; k < bots; k++) {
    const j = k + Math.floor(random() * (fans - k));
    const t = idx[k]!;
    idx[k] = idx[j]!;
    idx[j] = t;
    operatorOf[idx[k]!] = Math.floor(k / shape.accountsPerOperator);
  }
  return operatorOf;
}

/** A card number that passes the Luhn check, 16 digits, from a test range (never a real card). */
export function testCardNumber(n: number): string {
  const body = `4111${String(n % 1e11).padStart(11, '0')}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}
