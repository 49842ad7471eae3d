import { monitorEventLoopDelay } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { Pool, type Dispatcher } from 'undici';
import { AccountTokens } from '@onsale/shared/auth';
import { LatencyHistogram } from './histogram.js';
import { solveChallenge } from '@onsale/shared/abuse';
import {
  answeredByKind,
  arrivalOffsets,
  botOperators,
  DEFAULT_BOT_SHAPE,
  seededRandom,
  testCardNumber,
  type BotShape,
  RefusalCounter,
  type RefusalCount,
  type RequestKind,
} from '@onsale/shared/rehearsal';

// The virtual crowd: one process, one event loop, a keep-alive pool, and per fan a few numbers in typed arrays (the
// strings a fan must carry, its tokens, only while it needs them). A fan is a small state machine driven by a timer
// wheel: arrive, join (solving a proof-of-work or waiting out a deferral when told), poll honouring Retry-After,
// hold when admitted, pay (or not), join the waitlist on SOLD_OUT.

export interface DriverSection {
  code: string;
  qualityRank: number;
  capacity: number;
}

export interface DriverOptions {
  /** Where fans go (the edge, or the store API). */
  fansUrl: string;
  eventId: string;
  listingId: string;
  onsaleAtMs: number;
  /** When the first fan arrives (the pre-open crowd starts then). */
  startAtMs: number;
  fans: number;
  timeScale: number;
  botsShare: number;
  botShape?: BotShape;
  /** Shares of the fans (not bots) who abandon their hold, pay slowly, and whose first card is declined. */
  abandon: number;
  slowPayers: number;
  failingPayers: number;
  /** Signs the fans' account tokens (the install's AUTH_SECRET). */
  authSecret: string;
  sections: DriverSection[];
  perAccountSeats: number;
  ticketsPerOrder: number;
  holdTtlSeconds: number;
  checkoutMinutes: number;
  /** How the crowd arrives, ms: the pre-open crowd's window (it ends before the open), and the tail's mean. */
  preOpenMs: number;
  preOpenShare: number;
  tailMeanMs: number;
  /** Status polls a second the crowd may make at most (spreads the polls of a large crowd). */
  pollBudgetPerSecond: number;
  /**
   * Tracer fans: this many of the fans (not bots, spread evenly over the crowd) poll exactly at their Retry-After,
   * outside the poll budget, so the sold-out propagation to fans who poll as told is weighed whatever the crowd's
   * size (at 200,000 the budget spaces every other fan's polls far past what it was told). Default 0.
   */
  tracers?: number;
  connections: number;
  /**
   * The most connections the crowd opens at once, over all its pools (each opened as its fans need it): polls have
   * half of --connections, joins twice it, the waitlist a quarter; the purchase path (seat maps, holds,
   * checkouts) the rest, so a fan inside sends at once and never behind a poll or a join: in effect a connection per
   * fan inside. Default defaultMaxConnections (those three and PURCHASE_CONNECTIONS).
   */
  maxConnections?: number;
  seed: number;
  /** From when fans may pick exact seats (epoch ms); some do, from the section's seat list. */
  seatPickingOpensAtMs: number;
  /** Share of fans who pick exact seats once they may. */
  pickers: number;
  /** Prefix of every account id of this run (bots' ids continue it with `b`). */
  accountPrefix: string;
  /** Gives up this long after the open. */
  deadlineMs: number;
}

/** Where a fan is, as one byte of a Uint8Array. */
const Phase = { PENDING: 0, JOINING: 1, WAITING: 2, HOLDING: 3, PAYING: 4, BOUGHT: 5, WAITLISTED: 6, GAVE_UP: 7 } as const;
type Phase = (typeof Phase)[keyof typeof Phase];

const HUMAN_HEADERS = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
  accept: 'application/json',
  'accept-language': 'en-GB,en;q=0.9',
};
const BOT_HEADERS = { 'user-agent': 'python-requests/2.32.3', accept: '*/*' };

/** A shopper in the store: the few strings a fan needs between admission and its order (held by active fans only). */
interface Shopper {
  admissionToken: string;
  /** The last answer this shopper got (why a fan is still in the store at the deadline). */
  last?: string;
  holdId?: string;
  seats?: number[];
  quantity: number;
  section: string;
  /** A slow payer: takes the extension when payment starts, then most of the longer hold. */
  slow?: boolean;
  extended?: boolean;
  /** Exact seats this fan picked (null: best available). */
  seatIds?: number[] | null;
  /** The fan has read the seat map for this attempt. */
  looked?: boolean;
  idempotencyKey?: string;
  declinedOnce?: boolean;
  /** A failing payer: its first card is declined (drawn once, so a retried checkout sends the same card). */
  failing?: boolean;
  expiresAtMs?: number;
  /** Holds refused in a row for want of seats together. */
  refused?: number;
  /** The party takes the split a refusal offered (`split: true`) when it cannot sit together. */
  split?: boolean;
  /** When the fan first asked for this hold (its retries after a 503, a 429 or a reset are the same hold to the fan). */
  holdSince?: number;
  /** Of that time, how long its requests waited inside the driver for a connection (the driver's lag, not the product's). */
  holdWaitMs?: number;
}

/** The fields of the product's answers the fans read (each route's own; all optional here). */
interface Body {
  error?: string;
  queueToken?: string;
  cohort?: string;
  position?: number | null;
  state?: string;
  admissionToken?: string;
  challenge?: { token: string; nonce: string; difficulty: number };
  deferral?: { token: string };
  sections?: { code: string; available: number }[];
  seats?: { id: number; available?: boolean }[];
  alternatives?: { section: string; available: number }[];
  /** SECTION_NEARLY_FULL: the best split of a party that cannot sit together; SINGLE_SEAT_LEFT: the seats to pick instead. */
  split?: { row: string; seats: number[] }[];
  instead?: number[];
  holdId?: string;
  expiresAt?: string;
  orderId?: string;
  seatCount?: number;
}

/**
 * An answer, and how long its request took: `ms` from when it went on the wire to its answer (the product's), `waitMs`
 * before that, waiting inside the driver for one of its connections (the driver's own lag).
 */
type Answer = {
  status: number;
  code: string | null;
  body: Body | null;
  retryAfterS: number | null;
  ms: number;
  waitMs: number;
  key: string;
};

/** A kind of request's timings: the product's (on the wire to its answer) and the driver's wait before it, ms. */
export interface RequestTimings {
  product: { count: number; p50: number | null; p99: number | null; max: number | null };
  driverWait: { count: number; p50: number | null; p99: number | null; max: number | null };
}

/** What the driver saw, for the report. */
export interface DriverResult {
  humans: number;
  bots: number;
  /** Pre-open fans: arrival (join) order and the place they were given. */
  ranked: { arrival: Float64Array; position: Float64Array };
  /** Each hold as its fan timed it: from the first request for it to the 201, its retries (503, 429, a reset) included. */
  holdLatencies: Float64Array;
  /** Of each of those (same order), the time its requests waited inside the driver for a connection (the driver's lag). */
  holdDriverLag: Float64Array;
  /** When each polling fan read SOLD_OUT (ms after the open), as the driver read it. */
  soldOutReadsAtMs: Float64Array;
  /** Of each of those (same order), the time that poll waited inside the driver for a connection. */
  soldOutDriverWait: Float64Array;
  /** The same, of the fans who read it on a poll sent as told (within their Retry-After, see positionExpired). */
  soldOutReadsAsToldAtMs: Float64Array;
  soldOutAsToldDriverWait: Float64Array;
  /** The tracer fans (DriverOptions.tracers), and the same of those of them who read SOLD_OUT. */
  tracers: number;
  soldOutReadsTracerAtMs: Float64Array;
  soldOutTracerDriverWait: Float64Array;
  /**
   * Per kind of request, the product's time (on the wire to the answer) and the driver's wait before it; and the joins
   * answered after the open apart (`join after the open`, also counted in `join`), and the joins answered 200 apart
   * (`join 200`, also counted in `join`): a join's time without the quick refusals (shed 503s, deferrals), whose share
   * moves a median of all joins when two runs shed differently.
   */
  requestTimings: Record<DriverRequestKind | 'join after the open' | 'join 200', RequestTimings>;
  /** Connections each of the driver's pools may open (the purchase path's are opened as its fans need them). */
  connections: Record<DriverRequestKind, number>;
  /** Fans who read ADMITTED (collected an admission), once each. */
  admitted: number;
  /**
   * The admitted fans who did not buy, by who they are (fan or bot) and why: still shopping or back in line when the
   * run ended, sold out, left their hold, refused at their limits or for seats.
   */
  admittedNotBought: Record<string, number>;
  /**
   * `POSITION_EXPIRED` answers, to fans who polled as told (no later than the Retry-After they were given, on the
   * event's clock, its jitter and a second's grace) and to fans who polled later (the poll budget spread the crowd far
   * back, as a background tab does). `asToldBackInLine`: of the as-told ones, fans whose poll was their first after
   * going back to the line on their own (their admission refused on a hold: it lapsed, 10 minutes after they collected
   * it, while their hold waited to be sent), so the product had told them nothing since their turn: it came and was
   * collected more than the claim window before.
   */
  positionExpired: { asTold: number; late: number; asToldBackInLine: number };
  firstAdmitAtMs: number | null;
  lastAdmitAtMs: number | null;
  strandedSeats: [number, number][];
  answers: Map<string, number>;
  /** The answers by kind of request and answer (`hold 503 SERVICE_UNAVAILABLE`). */
  answersOfKind: Record<string, number>;
  /** The answers that were not a 2xx (and requests that got none) by kind of request, answer and a 503's reason. */
  refusals: RefusalCount[];
  /** Seats in two confirmed orders as the fans saw them, and pairs of holds that held one seat at once. */
  doubleSoldSeen: number;
  holdConflicts: { seat: number; first: string; second: string }[];
  /** Holds for which the fans saw two different orders. */
  duplicateOrdersSeen: number;
  waitlistJoined: number;
  requests: number;
  bought: number;
  gaveUp: number;
  unfinished: number;
  /** Fans still in the store at the deadline, by what they were doing and the last answer they got. */
  unfinishedBy: Record<string, number>;
  eventLoopDelayP99Ms: number | null;
  /** Fans who joined the line (had a queue token) at least once. */
  joined: number;
  /** The longest any fan waited past its arrival time to send its join (the join backlog was full), ms. */
  arrivalLagMaxMs: number;
  /** Fans who never sent a join: their arrival came after the end, or while the backlog was full to the end. */
  neverArrived: number;
  /** Requests answered by kind (a status poll by who answered it), and those never answered. */
  answeredByKind: Record<RequestKind, number>;
  /** Seat-map reads the edge answered from its cache (`X-Onsale-Edge: hit`): the store API never saw them. */
  seatMapsFromEdgeCache: number;
  unansweredRequests: number;
}

export interface Progress {
  tMs: number;
  joined: number;
  waiting: number;
  admitted: number;
  shopping: number;
  bought: number;
  seatsBought: number;
  done: number;
  errors: number;
  requests: number;
  /** Fans whose arrival time has come, or whose join came due again, who have not been able to send it yet (the join connections are full). */
  backlog: number;
  /** Per kind of request: requests waiting inside the driver for a connection, and on the wire (undici's pool stats). */
  lines: Record<DriverRequestKind, { queued: number; running: number; connected: number }>;
  /** Joins sent (or being signed) and not yet answered; joins, first or again, wait while it is at the cap. */
  joinsInFlight: number;
}

/** What a fan's request is, for the report's CPU per request (a status poll's edge or origin is read off its answer). */
export type DriverRequestKind = Exclude<RequestKind, 'status (edge)' | 'status (origin)'> | 'status';
const DRIVER_REQUEST_KINDS: DriverRequestKind[] = ['join', 'status', 'seat map', 'hold', 'checkout', 'waitlist'];

/** An answer as read off the wire: its status, the two headers the fans read, the body. */
interface RawAnswer {
  status: number;
  retryAfter: string | undefined;
  /** `x-onsale-edge`: `hit` when the edge answered alone. */
  edge: string | undefined;
  /** The body's bytes as they came (empty: none). */
  bytes: Buffer;
  /** The body as text (decoded when read). */
  readonly text: string;
  /** performance.now() when undici began writing the request to its socket (0: never written), and when it was answered. */
  wireAt: number;
  endAt: number;
}

const EMPTY = Buffer.alloc(0);

/** Whether `s` is all ASCII digits (a Retry-After in seconds). */
function isDigits(s: string): boolean {
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** Whether a raw header name (bytes as they came) is `name` (lower case ASCII), in any case. */
function headerIs(raw: Buffer, name: string): boolean {
  if (raw.length !== name.length) return false;
  // Lower case names of letters and '-': setting 0x20 lower-cases a letter and leaves '-' as it is.
  for (let k = 0; k < name.length; k++) if ((raw[k]! | 0x20) !== name.charCodeAt(k)) return false;
  return true;
}

/**
 * Reads one answer whole as undici delivers it, and is the answer too: one object a request (its methods on the
 * prototype), not a closure per callback. Undici's own handler interface (onConnect, onHeaders with the raw header
 * bytes, onData, onComplete), not the newer one it wraps: that one costs a wrapper and a controller a request and
 * turns every header of every answer (and its trailers) into an object of strings, where the fans read two headers.
 */
class AnswerReader implements Dispatcher.DispatchHandler, RawAnswer {
  status = 0;
  retryAfter: string | undefined = undefined;
  edge: string | undefined = undefined;
  bytes: Buffer = EMPTY;
  wireAt = 0;
  endAt = 0;
  private chunks: Buffer[] | null = null;

  constructor(
    private readonly resolve: (a: RawAnswer) => void,
    private readonly reject: (e: Error) => void,
  ) {}

  get text(): string {
    return this.bytes.length === 0 ? '' : this.bytes.toString('utf8');
  }

  // Undici calls this as it writes the request to a connection's socket: from here on the time is the product's.
  onConnect() {
    this.wireAt = performance.now();
  }

  onHeaders(statusCode: number, raw: Buffer[]) {
    this.status = statusCode;
    for (let k = 0; k + 1 < raw.length; k += 2) {
      const name = raw[k]!;
      if (headerIs(name, 'retry-after')) this.retryAfter = raw[k + 1]!.toString('latin1');
      else if (headerIs(name, 'x-onsale-edge')) this.edge = raw[k + 1]!.toString('latin1');
    }
    return true;
  }

  onData(chunk: Buffer) {
    if (this.bytes === EMPTY) this.bytes = chunk;
    else (this.chunks ??= [this.bytes]).push(chunk);
    return true;
  }

  onComplete() {
    this.endAt = performance.now();
    if (this.chunks) this.bytes = Buffer.concat(this.chunks);
    this.chunks = null;
    this.resolve(this);
  }

  onError(error: Error) {
    (error as { wireAt?: number }).wireAt = this.wireAt;
    this.reject(error);
  }
}

/**
 * Sends one request on `pool` and resolves with its whole answer, and when it went on the wire and was answered (rejects
 * with undici's error, its `code` and `wireAt` set).
 */
export function send(
  pool: Pool,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    try {
      pool.dispatch({ method, path, headers, body }, new AnswerReader(resolve, reject));
    } catch (e) {
      reject(e instanceof Error ? e : new Error(String(e)));
    }
  });
}

/**
 * The purchase path's connections (seat maps, holds, checkouts together) by default: a connection per fan in those
 * stages, up to this many. A real crowd has a connection a fan; the driver's pools open one as a fan's request needs
 * it (undici opens a connection only when every open one is busy), so the bound is a ceiling the crowd reaches only
 * when that many fans inside wait on the product at once, and the fans inside are what the admission controller
 * bounds. Before (2026-12-07), the purchase path had what 8x --connections left over (336 at 64, 134 for holds):
 * the 200,000-fan stadium's holds then waited 18 s at the median (p99 88 s) inside the driver behind 15,000 fans let
 * in, a line the product never saw and the controller could not count, and 23,309 checkouts met HOLD_EXPIRED after
 * waiting 8 s in it. With a connection a fan the wait is at the product, where the store times it and the controller
 * follows it (window.ts: holds in flight, their latency, holds shed). 4,096 keeps the driver's, the edge's and the
 * store's sockets well inside the machine's 20,000 open files a process.
 */
export const PURCHASE_CONNECTIONS = 4096;

/**
 * How long the driver keeps an idle connection for its next request: under the 5 s after which `workerd serve` (the
 * edge, and the framing guard in front of it) closes an idle keep-alive connection without a `Keep-Alive` hint. Kept
 * longer (60 s, as before), a fan's next request raced that close on a connection idle for 5 s (a hold's fan paying,
 * say) and read a closed socket (`UND_ERR_SOCKET`: 52 answers in the quiet 20,000-fan run of 2026-12-07 06:34, 295 at
 * 200,000), which a browser would have sent again on a new connection. The edge's idle close is measured in apps/edge/test/idle-close.test.ts.
 */
export const DRIVER_KEEP_ALIVE_MS = 4_000;

/** The default --max-connections: polls, joins and the waitlist (see connectionBounds) plus PURCHASE_CONNECTIONS. */
export function defaultMaxConnections(connections: number): number {
  const b = connectionBounds(connections, 0);
  return b.status + b.join + b.waitlist + PURCHASE_CONNECTIONS;
}

/**
 * The connections each pool may open: polls half of `connections`, joins twice it (arrivals come faster than the
 * product answers a join: at 200,000 fans 233 a second against 133 answered over 64 connections), the waitlist a
 * quarter, and the purchase path the rest of `max` (holds 40%, seat maps and checkouts 30% each), at least one each.
 * Pools open connections as their requests need them, so a bound is a ceiling, not a cost.
 */
export function connectionBounds(connections: number, max: number): Record<DriverRequestKind, number> {
  const status = Math.max(1, Math.ceil(connections / 2));
  const join = Math.max(1, connections * 2);
  const waitlist = Math.max(1, Math.ceil(connections / 4));
  const purchase = Math.max(3, max - status - join - waitlist);
  const hold = Math.max(1, Math.floor(purchase * 0.4));
  const seatMap = Math.max(1, Math.floor(purchase * 0.3));
  return { status, join, waitlist, hold, 'seat map': seatMap, checkout: Math.max(1, purchase - hold - seatMap) };
}

/**
 * A fan's party: from one seat to the most an account may have, about `ticketsPerOrder` on average. The mean +- 1 it
 * was before (2.5 made parties of 2 and 3 only) left no party of one to take the single seats late in a sale, and
 * none of four: 2.5 of at most 4 spreads over 1-4 (1 and 4 a sixth each, 2 and 3 a third each), mean 2.5.
 */
export function partySize(ticketsPerOrder: number, perAccountSeats: number, u: number): number {
  const mean = Math.min(perAccountSeats, Math.max(1, ticketsPerOrder));
  const spread = Math.max(0, Math.min(mean - 1, perAccountSeats - mean));
  return Math.max(1, Math.min(perAccountSeats, Math.round(mean + (u - 0.5) * 2 * spread)));
}

/** The crowd. `run()` resolves when every fan has finished or the deadline passed. */
export class Crowd {
  /**
   * A set of keep-alive connections for each kind of request (status polls, joins, the waitlist, seat maps, holds,
   * checkouts), each opened as its requests need it, up to its bound. A crowd's requests do not queue behind one
   * another as one client's would (a real crowd has a connection a fan): a backlog of joins the product cannot take yet
   * must not hold up fans already inside, and a fan holding seats must not wait for a free connection behind
   * thousands of others still looking, while its hold's clock runs. A request that still waits for a connection is the
   * driver's lag, timed apart from the product's time (requestTimings, holdDriverLag).
   */
  private readonly pools: Record<DriverRequestKind, Pool>;
  private readonly poolSizes: Record<DriverRequestKind, number>;
  private readonly timings = Object.fromEntries(
    DRIVER_REQUEST_KINDS.map((k) => [k, { product: new LatencyHistogram(), driverWait: new LatencyHistogram() }]),
  ) as Record<DriverRequestKind, { product: LatencyHistogram; driverWait: LatencyHistogram }>;
  /**
   * Joins sent after the open, timed apart: the open is when the purchase path loads the product, and whether joins then
   * wait in the driver (its connections) or at the product (its answers) is what tells a starved driver from a slow one.
   */
  private readonly joinAfterOpen = { product: new LatencyHistogram(), driverWait: new LatencyHistogram() };
  private readonly joinAccepted = { product: new LatencyHistogram(), driverWait: new LatencyHistogram() };
  private readonly random: () => number;
  private readonly phase: Uint8Array;
  private readonly arrival: Float64Array;
  private readonly operator: Int32Array;
  private readonly joinedAt: Float64Array;
  private readonly preOpen: Uint8Array;
  private readonly position: Float64Array;
  private readonly soldOutAt: Float64Array;
  /** The latest a fan may send its next poll and still have polled as told (epoch ms; NaN: not told yet). */
  private readonly toldBy: Float64Array;
  private readonly positionExpired = { asTold: 0, late: 0, asToldBackInLine: 0 };
  /** The fan went back to the line on its own (no seats on the map, or its admission refused on a hold) and has not polled since. */
  private readonly backInLine: Uint8Array;
  /** The fan read SOLD_OUT on a poll it sent as told. */
  private readonly soldOutAsTold: Uint8Array;
  /** A tracer fan: polls exactly at its Retry-After, outside the poll budget (DriverOptions.tracers). */
  private readonly tracer: Uint8Array;
  private readonly tracerCount: number;
  private readonly retries: Uint16Array;
  private readonly queueToken: (string | undefined)[];
  private readonly accountToken: (string | undefined)[];
  private readonly extraHeader = new Map<number, [string, string]>();
  private readonly shoppers = new Map<number, Shopper>();
  private readonly tokens: AccountTokens;
  private readonly wheel = new Map<number, number[]>();
  private readonly tickMs = 20;
  private nextTick = 0;
  private timer: NodeJS.Timeout | undefined;
  private finished = 0;
  private inFlight = 0;
  /** Joins sent and not yet answered: first arrivals wait for this to fall below joinBacklogCap before they join. */
  private joinsInFlight = 0;
  /** How late the latest arrival came to its join, ms (0 while the product keeps up with the crowd). */
  private arrivalLagMs = 0;
  /** The fans in order of arrival, and how many of them have sent their first join. */
  private order: number[] = [];
  private arrivedCount = 0;
  /** Fans who have had a queue token at least once. */
  private joinedCount = 0;
  /**
   * Most joins queued for the join connections at once. A fan's browser waits for its join to be answered before it
   * asks again; a crowd far larger than the product's pace (2,000,000 arriving at 2,000 a second to a product taking
   * 100) would otherwise queue one request object per arrived fan in the driver, gigabytes of them: they arrive in
   * order instead, as connections free up, and the report counts how late.
   */
  private readonly joinBacklogCap: number;
  /**
   * Fans whose join came due again (a retry after a 503 or a reset, a deferral waited out, a proof-of-work solved, a
   * rejoin) while joinBacklogCap joins were in flight, with when it came due (ms since the start), first come first
   * sent with the arrivals: before, those joins went out past the cap, and in the 200,000-fan run of 2026-12-07 the
   * pre-open crowd's retries kept the cap full for the rest of the run, so 55,193 of the 60,000 fans who arrived after
   * the open never sent their join while the product answered the retries.
   */
  private readonly joinLine: number[] = [];
  private readonly joinLineDueAt: number[] = [];
  private joinLineHead = 0;
  private pollsThisSecond = 0;
  /** Polls sent (or being signed) and not yet answered. */
  private pollsOutstanding = 0;
  private waiting = 0;
  /** Fans told to come back soon (near the front), and how many. */
  private readonly nearFront: Uint8Array;
  private nearFrontCount = 0;
  private readonly wasAdmitted: Uint8Array;
  /** Why an admitted fan gave up without buying (the report tells the admitted fans who did not buy apart). */
  private readonly gaveUpWhy = new Map<number, string>();
  private readonly expiredOnce: Uint8Array;
  private readonly holdLatencies: number[] = [];
  private readonly holdDriverLag: number[] = [];
  /** The time the poll that told a fan SOLD_OUT waited inside the driver, ms. */
  private readonly soldOutWait: Float32Array;
  private readonly abandoned: { expiresAtMs: number; seats: number }[] = [];
  private readonly strandedSeries: [number, number][] = [];
  private readonly seatOrder = new Map<number, string>();
  private readonly seatHold = new Map<number, { holdId: string; untilMs: number }>();
  private readonly holdConflicts: { seat: number; first: string; second: string }[] = [];
  private readonly ordersByHold = new Map<string, string>();
  private doubleSoldSeen = 0;
  private duplicateOrdersSeen = 0;
  private admitted = 0;
  private firstAdmitAt: number | null = null;
  private lastAdmitAt: number | null = null;
  private waitlistJoined = 0;
  private bought = 0;
  private seatsBought = 0;
  private gaveUp = 0;
  private errors = 0;
  requests = 0;
  /** Requests answered, by kind; and those that got no answer (a reset, a timeout). */
  private readonly answeredByKind = answeredByKind();
  private seatMapsFromEdgeCache = 0;
  private unanswered = 0;
  readonly answers = new Map<string, number>();
  /** The same by kind of request (`join 503 SERVICE_UNAVAILABLE`): which requests a refusal answered. */
  private readonly answersOfKind = Object.fromEntries(DRIVER_REQUEST_KINDS.map((k) => [k, new Map<string, number>()])) as Record<
    DriverRequestKind,
    Map<string, number>
  >;
  readonly refusals = new RefusalCounter();
  /** Called with every answer's key (faults count what fans read while they last). */
  onAnswer: ((key: string) => void) | undefined;
  private resolveDone: (() => void) | undefined;
  private readonly loopDelay = monitorEventLoopDelay({ resolution: 20 });
  /** The last seat map and seat list answered at each path, and its parsed body (see parse()). */
  private readonly sameAnswer = new Map<string, { bytes: Buffer; body: Body | null }>();

  constructor(private readonly o: DriverOptions) {
    this.poolSizes = connectionBounds(o.connections, o.maxConnections ?? defaultMaxConnections(o.connections));
    this.pools = Object.fromEntries(
      DRIVER_REQUEST_KINDS.map((k) => [
        k,
        new Pool(o.fansUrl, {
          connections: this.poolSizes[k],
          pipelining: 1,
          keepAliveTimeout: DRIVER_KEEP_ALIVE_MS,
          headersTimeout: 30_000,
          bodyTimeout: 30_000,
        }),
      ]),
    ) as Record<DriverRequestKind, Pool>;
    this.joinBacklogCap = this.poolSizes.join * 32;
    this.random = seededRandom(o.seed);
    const n = o.fans;
    this.phase = new Uint8Array(n);
    this.arrival = arrivalOffsets(
      n,
      { preOpenMs: o.preOpenMs, openMs: o.onsaleAtMs - o.startAtMs, preOpenShare: o.preOpenShare, tailMeanMs: o.tailMeanMs },
      this.random,
    );
    this.operator = botOperators(n, o.botsShare, o.botShape ?? DEFAULT_BOT_SHAPE, this.random);
    this.joinedAt = new Float64Array(n).fill(Number.NaN);
    this.preOpen = new Uint8Array(n);
    this.nearFront = new Uint8Array(n);
    this.wasAdmitted = new Uint8Array(n);
    this.expiredOnce = new Uint8Array(n);
    this.position = new Float64Array(n).fill(Number.NaN);
    this.soldOutAt = new Float64Array(n).fill(Number.NaN);
    this.soldOutWait = new Float32Array(n);
    this.toldBy = new Float64Array(n).fill(Number.NaN);
    this.soldOutAsTold = new Uint8Array(n);
    this.tracer = new Uint8Array(n);
    this.tracerCount = pickTracers(this.tracer, o.tracers ?? 0, (i) => this.operator[i]! >= 0);
    this.backInLine = new Uint8Array(n);
    this.retries = new Uint16Array(n);
    this.queueToken = new Array<string | undefined>(n);
    this.accountToken = new Array<string | undefined>(n);
    this.tokens = new AccountTokens(o.authSecret, 24 * 3600);
  }

  private get now() {
    return Date.now();
  }

  /** Milliseconds since the open (negative before it). */
  private sinceOpen(t = this.now) {
    return t - this.o.onsaleAtMs;
  }

  /** Set by stop(): the run ends now, as at the deadline but without its grace. */
  private stopped = false;

  private pastDeadline() {
    return this.stopped || this.sinceOpen() > this.o.deadlineMs;
  }

  /**
   * Ends the run early (an operator's Ctrl-C, `--stop-after`): no fan takes another step, the requests in flight are
   * let finish, and run() resolves with what happened so far, the fans still in line counted as unfinished.
   */
  stop() {
    this.stopped = true;
    // Requests already on the wire get a few seconds to be answered; those still queued for a connection (tens of
    // thousands in a crowd larger than the product's pace) are dropped rather than sent, and not counted as answers.
    setTimeout(() => {
      // Ignored on purpose: The driver's own HTTP pools at the end of a run: nothing is in flight.
      for (const p of Object.values(this.pools)) void p.destroy().catch(() => {});
    }, 5000).unref();
  }

  private isBot(i: number) {
    return this.operator[i]! >= 0;
  }

  private accountId(i: number) {
    const op = this.operator[i]!;
    return op >= 0 ? `${this.o.accountPrefix}b${op}-${i}` : `${this.o.accountPrefix}f${i}`;
  }

  /** Bots share their operator's few devices; a fan has its own. */
  private device(i: number) {
    const op = this.operator[i]!;
    const shape = this.o.botShape ?? DEFAULT_BOT_SHAPE;
    return op >= 0 ? `rehearsal-bot-${this.o.seed}-${op}-${i % shape.devicesPerOperator}` : `rehearsal-fan-${this.o.seed}-${i}`;
  }

  private card(i: number) {
    const op = this.operator[i]!;
    const shape = this.o.botShape ?? DEFAULT_BOT_SHAPE;
    return op >= 0
      ? testCardNumber(this.o.seed * 1_000_003 + 10_000_000 + op * shape.cardsPerOperator + (i % shape.cardsPerOperator))
      : testCardNumber(this.o.seed * 1_000_003 + i);
  }

  /** Fans from their own addresses (an /16 of test space), a bot operator from one. */
  private address(i: number) {
    const k = this.isBot(i) ? 60_000 + this.operator[i]! : i % 60_000;
    return `10.${100 + (k >> 16)}.${(k >> 8) & 255}.${k & 255}`;
  }

  /**
   * A fan's request headers. Its account token (kept as the Authorization value, `Bearer ...`) is signed on its first
   * request; after that the headers come without a promise.
   */
  private headers(i: number): Record<string, string> | Promise<Record<string, string>> {
    const authorization = this.accountToken[i];
    if (authorization === undefined)
      return this.tokens.issue(this.accountId(i)).then((r) => this.headersWith(i, (this.accountToken[i] = `Bearer ${r.token}`)));
    return this.headersWith(i, authorization);
  }

  private headersWith(i: number, authorization: string): Record<string, string> {
    // The fan's address as a proxy in front of the store API says it (X-Forwarded-For), and as Cloudflare would give
    // it to the edge worker (CF-Connecting-IP, which the local workerd does not set).
    const address = this.address(i);
    return {
      authorization,
      'x-device-id': this.device(i),
      'x-forwarded-for': address,
      'cf-connecting-ip': address,
      ...(this.isBot(i) ? BOT_HEADERS : HUMAN_HEADERS),
    };
  }

  private schedule(i: number, delayMs: number) {
    const tick = Math.max(this.nextTick, Math.ceil((this.now + Math.max(0, delayMs) - this.o.startAtMs) / this.tickMs));
    let list = this.wheel.get(tick);
    if (!list) this.wheel.set(tick, (list = []));
    list.push(i);
  }

  private record(key: string) {
    this.answers.set(key, (this.answers.get(key) ?? 0) + 1);
    this.onAnswer?.(key);
  }

  /**
   * One request on a pool, its answer read whole. Through undici's dispatcher with a handler of its own rather than
   * `pool.request()`: no body stream, no per-request Readable and its promises, which were most of the driver's cost
   * per request once the proof-of-work was cheap.
   */
  private async request(
    kind: DriverRequestKind,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<Answer> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const started = performance.now();
    this.requests++;
    this.inFlight++;
    try {
      const res = await send(this.pools[kind], method, path, headers, payload);
      const waitMs = res.wireAt - started;
      const ms = res.endAt - res.wireAt;
      const t = this.timings[kind];
      t.product.add(ms);
      t.driverWait.add(waitMs);
      if (kind === 'join' && this.sinceOpen() >= 0) {
        this.joinAfterOpen.product.add(ms);
        this.joinAfterOpen.driverWait.add(waitMs);
      }
      if (kind === 'join' && res.status === 200) {
        this.joinAccepted.product.add(ms);
        this.joinAccepted.driverWait.add(waitMs);
      }
      const parsed = this.parse(kind, path, res.status, res.bytes);
      const ra = res.retryAfter;
      const retryAfterS = ra !== undefined && ra.length > 0 && ra.length < 10 && isDigits(ra) ? Number(ra) : null;
      const code = res.status >= 400 ? (typeof parsed?.error === 'string' ? parsed.error : null) : null;
      const key = code ? `${res.status} ${code}` : String(res.status);
      this.answeredByKind[kind === 'status' ? (res.edge === 'hit' ? 'status (edge)' : 'status (origin)') : kind]++;
      if (kind === 'seat map' && res.edge === 'hit' && res.status === 200) this.seatMapsFromEdgeCache++;
      this.record(key);
      const ofKind = this.answersOfKind[kind];
      ofKind.set(key, (ofKind.get(key) ?? 0) + 1);
      this.refusals.count(kind, res.status, key, parsed);
      if (res.status >= 500) this.errors++;
      return { status: res.status, code, body: parsed, retryAfterS, ms, waitMs, key };
    } catch (e) {
      const code = (e as { code?: string }).code ?? 'network';
      const end = performance.now();
      const wireAt = (e as { wireAt?: number }).wireAt || end;
      const timing = { ms: end - wireAt, waitMs: wireAt - started };
      if (this.stopped && code === 'UND_ERR_DESTROYED') {
        this.requests--; // never sent
        return { status: 0, code, body: null, retryAfterS: null, ...timing, key: 'stopped' };
      }
      this.errors++;
      this.unanswered++;
      this.record(`network ${code}`);
      this.refusals.count(kind, 0, `network ${code}`, null);
      return { status: 0, code, body: null, retryAfterS: null, ...timing, key: `network ${code}` };
    } finally {
      this.inFlight--;
    }
  }

  /**
   * An answer's body, parsed. A seat map or a section's seat list is the same answer to every fan for the second or two
   * the product caches it (20-40 kB at the stadium: parsing each one again was most of the driver's CPU for those
   * requests, and most of its garbage): the same bytes at the same path give the same parsed body, which the fans only
   * read.
   */
  private parse(kind: DriverRequestKind, path: string, status: number, bytes: Buffer): Body | null {
    if (bytes.length === 0) return null;
    const memo = kind === 'seat map' && status === 200 ? this.sameAnswer.get(path) : undefined;
    if (memo && memo.bytes.equals(bytes)) return memo.body;
    let body: Body | null;
    try {
      body = JSON.parse(bytes.toString('utf8')) as Body;
    } catch {
      body = null;
    }
    if (kind === 'seat map' && status === 200) this.sameAnswer.set(path, { bytes, body });
    return body;
  }

  /** A wait in the fan's compressed clock: `seconds` of the event's time, with ±20% jitter. */
  private eventWait(seconds: number) {
    return ((seconds * 1000) / this.o.timeScale) * (0.8 + 0.4 * this.random());
  }

  /**
   * How long a fan waits before the next poll: Retry-After on the event's clock, never more often than the per-account
   * limit allows (60 a minute by default). All polls together stay within the poll budget, fans near the front (told
   * to come back soon) first: they have up to 60% of it, the crowd further back the rest, spread evenly (a fan far back
   * then polls later than told, as one with the page in a background tab does; it only learns its turn later). Bots
   * poll four times sooner than told.
   */
  private pollDelay(i: number, retryAfterS: number | null) {
    const ra = retryAfterS ?? 5;
    // As told: within Retry-After on the event's clock (never sooner than the per-account limit lets it), its jitter,
    // and a second for the driver's timer and the network.
    this.toldBy[i] = this.now + Math.max(((ra * 1000) / this.o.timeScale) * 1.2, 1650) + 1000;
    // A tracer polls at its Retry-After exactly, whatever the budget (never sooner than the per-account limit lets it).
    if (this.tracer[i] === 1) return Math.max((ra * 1000) / this.o.timeScale, TRACER_MIN_POLL_MS);
    const near = ra <= 5;
    if (this.nearFront[i] !== (near ? 1 : 0)) {
      this.nearFront[i] = near ? 1 : 0;
      this.nearFrontCount += near ? 1 : -1;
    }
    const jitter = 0.8 + 0.4 * this.random();
    const budget = this.o.pollBudgetPerSecond;
    const nearUse = Math.min(this.nearFrontCount / 1.5, 0.6 * budget);
    let wait = Math.max(this.eventWait(ra), 1500 * (0.9 + 0.2 * this.random()));
    if (near) wait = Math.max(wait, (this.nearFrontCount / (0.6 * budget)) * 1000 * jitter);
    else wait = Math.max(wait, ((this.waiting - this.nearFrontCount) / (budget - nearUse)) * 1000 * jitter);
    return this.isBot(i) ? Math.max(250, wait / 4) : wait;
  }

  /**
   * After a refusal that says to come back (429, 503, a network error): Retry-After in real seconds (capped at 10 s),
   * never sooner than told (up to a fifth later, so retries told alike do not come back together); without one, a
   * doubling backoff from 0.25 s to 5 s, jittered either way.
   */
  private backoff(i: number, a: Answer) {
    const n = Math.min(10, this.retries[i]!++);
    if (a.retryAfterS !== null) return Math.min(10_000, a.retryAfterS * 1000) * (1 + 0.2 * this.random());
    return Math.min(5, 0.25 * 2 ** n) * 1000 * (0.5 + this.random());
  }

  /** The fan no longer polls: it leaves the near-front count. */
  private leaveQueue(i: number) {
    this.waiting--;
    if (this.nearFront[i] === 1) {
      this.nearFront[i] = 0;
      this.nearFrontCount--;
    }
  }

  private finish(i: number, phase: Phase, why?: string) {
    if (this.phase[i] === Phase.WAITING) this.leaveQueue(i);
    if (phase === Phase.GAVE_UP && this.wasAdmitted[i] === 1) this.gaveUpWhy.set(i, why ?? this.shoppers.get(i)?.last ?? 'gave up');
    this.phase[i] = phase;
    this.queueToken[i] = undefined;
    this.accountToken[i] = undefined;
    this.extraHeader.delete(i);
    this.shoppers.delete(i);
    if (phase === Phase.GAVE_UP) this.gaveUp++;
    this.finished++;
    if (this.finished === this.o.fans) this.resolveDone?.();
  }

  private setPhase(i: number, phase: Phase) {
    if (this.phase[i] === Phase.WAITING && phase !== Phase.WAITING) this.leaveQueue(i);
    if (this.phase[i] !== Phase.WAITING && phase === Phase.WAITING) this.waiting++;
    this.phase[i] = phase;
  }

  private step(i: number) {
    const p = this.phase[i]!;
    if ((p === Phase.PENDING || p === Phase.JOINING) && this.joinsInFlight >= this.joinBacklogCap) {
      this.joinLine.push(i);
      this.joinLineDueAt.push(this.now - this.o.startAtMs);
      return;
    }
    const go =
      p === Phase.PENDING || p === Phase.JOINING
        ? this.join(i)
        : p === Phase.WAITING
          ? this.poll(i)
          : p === Phase.HOLDING
            ? this.hold(i)
            : p === Phase.PAYING
              ? this.pay(i)
              : undefined;
    go?.catch((e: unknown) => {
      this.record(`driver ${(e as Error).message.slice(0, 60)}`);
      this.finish(i, Phase.GAVE_UP, `driver error`);
    });
  }

  private async join(i: number) {
    this.setPhase(i, Phase.JOINING);
    // Counted from here, not from the request: signing the fan's token is asynchronous, and a tick lets arrivals in
    // while the count is below the cap.
    this.joinsInFlight++;
    let a: Answer;
    let sentAt: number;
    try {
      const h = await this.headers(i);
      const extra = this.extraHeader.get(i);
      if (extra) h[extra[0]] = extra[1];
      sentAt = this.now;
      a = await this.request('join', 'POST', `/events/${this.o.eventId}/queue`, h);
    } finally {
      this.joinsInFlight--;
    }
    this.extraHeader.delete(i);
    if (a.status === 200 && a.body?.queueToken) {
      this.retries[i] = 0;
      this.queueToken[i] = a.body.queueToken;
      if (Number.isNaN(this.joinedAt[i]!)) this.joinedCount++;
      this.joinedAt[i] = sentAt;
      if (a.body.cohort === 'PREOPEN') this.preOpen[i] = 1;
      if (typeof a.body.position === 'number' && this.sinceOpen() >= 0) this.position[i] = a.body.position;
      if (a.body.state === 'SOLD_OUT') return this.soldOut(i, false);
      this.setPhase(i, Phase.WAITING);
      return this.schedule(i, this.pollDelay(i, a.retryAfterS));
    }
    if (a.code === 'CHALLENGE_REQUIRED' && a.body?.challenge) {
      const c = a.body.challenge;
      this.extraHeader.set(i, ['x-proof-of-work', `${c.token}:${solveChallenge(c.nonce, c.difficulty)}`]);
      return this.schedule(i, 0);
    }
    if (a.code === 'JOIN_DEFERRED' && a.body?.deferral?.token) {
      this.extraHeader.set(i, ['x-join-deferral', a.body.deferral.token]);
      // A deferral's Retry-After is the product's own clock (its delay is real seconds): wait it out as told.
      return this.schedule(i, (a.retryAfterS ?? 1) * 1000 + 50);
    }
    if (
      a.status === 0 ||
      a.status === 429 ||
      a.status >= 500 ||
      a.code === 'JOIN_RACE' ||
      a.code === 'POW_EXPIRED' ||
      a.code === 'DEFERRAL_EXPIRED'
    ) {
      if (this.pastDeadline()) return this.finish(i, Phase.GAVE_UP, 'the run ended');
      return this.schedule(i, this.backoff(i, a));
    }
    this.finish(i, Phase.GAVE_UP, `join ${a.key}`);
  }

  private async poll(i: number) {
    if (this.pastDeadline()) return this.finish(i, Phase.GAVE_UP, 'the run ended');
    const token = this.queueToken[i];
    if (!token) return this.finish(i, Phase.GAVE_UP);
    // The poll budget spreads polls over time, not over the status connections: when the edge answers slower than the
    // budget sends them (a loaded machine), polls line up inside the driver, first come first sent, and a fan near the
    // front (its turn next, or come) waits behind a line of fans far back whose polls change nothing (up to 6,672 polls
    // queued on 32 connections in an 8,000-fan run). A real crowd has a connection a fan. So a fan far back does not
    // poll while twice the status connections' polls are outstanding (as many on the wire, as many waiting): its poll
    // is put off (it polls later than told, and is counted so); fans near the front always send.
    // Counted from here, not from undici's queue: a tick's fans pass this line before any of their polls is dispatched.
    if (this.nearFront[i] === 0 && this.tracer[i] === 0 && this.pollsOutstanding >= 2 * this.poolSizes.status)
      return this.schedule(i, 250 + 500 * this.random());
    this.pollsOutstanding++;
    let a: Answer;
    let asTold: boolean;
    try {
      const h = await this.headers(i);
      h['x-queue-token'] = token;
      this.pollsThisSecond++;
      asTold = !(this.now > this.toldBy[i]!);
      a = await this.request('status', 'GET', `/events/${this.o.eventId}/queue/status`, h);
    } finally {
      this.pollsOutstanding--;
    }
    if (a.status !== 200) {
      if (a.status === 401 || a.status === 403) return this.rejoin(i);
      // The fan's turn came and passed unused (it polled too late): join again as told, once; then it gives up.
      if (a.code === 'POSITION_EXPIRED') {
        if (asTold) this.positionExpired.asTold++;
        else this.positionExpired.late++;
        if (asTold && this.backInLine[i] === 1) this.positionExpired.asToldBackInLine++;
        this.backInLine[i] = 0;
        if (this.expiredOnce[i] === 1) return this.finish(i, Phase.GAVE_UP, 'turn expired twice');
        this.expiredOnce[i] = 1;
        return this.rejoin(i);
      }
      return this.schedule(i, this.backoff(i, a));
    }
    this.retries[i] = 0;
    this.backInLine[i] = 0;
    const s = a.body as { state: string; position: number | null; admissionToken?: string };
    if (typeof s.position === 'number' && this.sinceOpen() >= 0 && Number.isNaN(this.position[i]!)) this.position[i] = s.position;
    if (s.state === 'SOLD_OUT') {
      if (asTold) this.soldOutAsTold[i] = 1;
      this.soldOutWait[i] = a.waitMs;
      return this.soldOut(i, true);
    }
    if (s.admissionToken) {
      // Fans admitted, once each (a fan back in line after a refused hold reads ADMITTED again).
      if (this.wasAdmitted[i] === 0) {
        this.wasAdmitted[i] = 1;
        this.admitted++;
      }
      const t = this.sinceOpen();
      this.firstAdmitAt ??= t;
      this.lastAdmitAt = t;
      this.shoppers.set(i, { admissionToken: s.admissionToken, ...this.choose(i) });
      this.setPhase(i, Phase.HOLDING);
      // A moment to look at the seat map before holding.
      return this.schedule(i, this.eventWait(10));
    }
    this.schedule(i, this.pollDelay(i, a.retryAfterS));
  }

  private async rejoin(i: number) {
    this.queueToken[i] = undefined;
    this.setPhase(i, Phase.JOINING);
    this.schedule(i, 200);
  }

  /** The section and party size a fan asks for: bots the most they may, fans one to four (about tickets per order). */
  private choose(i: number): { section: string; quantity: number } {
    const secs = this.o.sections;
    // Better sections draw more fans: weight 1 / sqrt(quality rank).
    let total = 0;
    for (const s of secs) total += 1 / Math.sqrt(s.qualityRank);
    let r = this.random() * total;
    let section = secs[0]!.code;
    for (const s of secs) {
      r -= 1 / Math.sqrt(s.qualityRank);
      if (r <= 0) {
        section = s.code;
        break;
      }
    }
    if (this.isBot(i)) return { section, quantity: this.o.perAccountSeats };
    return { section, quantity: partySize(this.o.ticketsPerOrder, this.o.perAccountSeats, this.random()) };
  }

  /**
   * Before holding, a fan reads the seat map (cached by the product for a second or two) and asks for a section that
   * can seat the party, the party made smaller when none can; some fans, once picking is open, choose exact seats
   * from the section's seat list. Nothing left anywhere: back to polling, where LAST_CHANCE or SOLD_OUT says what next.
   */
  private async look(i: number, s: Shopper, h: Record<string, string>): Promise<boolean> {
    s.looked = true;
    s.seatIds = null;
    const m = await this.request('seat map', 'GET', `/events/${this.o.eventId}/seatmap`, h);
    if (m.status !== 200 || !Array.isArray(m.body?.sections)) return true;
    const open = (m.body.sections as { code: string; available: number }[]).filter((x) => x.available > 0);
    if (open.length === 0) return false;
    const fits = open.filter((x) => x.available >= s.quantity);
    if (fits.length === 0) s.quantity = Math.max(...open.map((x) => x.available));
    const pool = fits.length > 0 ? fits : open.filter((x) => x.available >= s.quantity);
    if (!pool.some((x) => x.code === s.section)) s.section = pool[Math.floor(this.random() * pool.length)]!.code;
    if (!this.isBot(i) && this.now >= this.o.seatPickingOpensAtMs && this.random() < this.o.pickers) {
      const l = await this.request('seat map', 'GET', `/events/${this.o.eventId}/sections/${s.section}/seats`, h);
      const free =
        l.status === 200 && Array.isArray(l.body?.seats)
          ? (l.body.seats as { id: number; available: boolean }[]).filter((x) => x.available)
          : [];
      if (free.length >= s.quantity) {
        const start = Math.floor(this.random() * (free.length - s.quantity + 1));
        s.seatIds = free.slice(start, start + s.quantity).map((x) => x.id);
      }
    }
    return true;
  }

  private async hold(i: number) {
    const s = this.shoppers.get(i);
    if (!s) return this.finish(i, Phase.GAVE_UP);
    const h = await this.headers(i);
    h['x-admission-token'] = s.admissionToken;
    if (!s.looked && !(await this.look(i, s, h))) return this.backToQueue(i);
    h['idempotency-key'] = s.idempotencyKey ??= randomUUID();
    if (s.holdSince === undefined) {
      s.holdSince = this.now;
      s.holdWaitMs = 0;
    }
    const a = await this.request(
      'hold',
      'POST',
      `/events/${this.o.eventId}/holds`,
      h,
      s.seatIds ? { seatIds: s.seatIds } : { section: s.section, quantity: s.quantity, ...(s.split ? { split: true } : {}) },
    );
    s.last = `hold ${a.key}`;
    s.holdWaitMs = (s.holdWaitMs ?? 0) + a.waitMs;
    // A retry (a 503, a 429, a reset) is the same hold to the fan: its clock keeps running.
    const retrying = a.status === 0 || a.status === 429 || a.status >= 500;
    if (a.status === 201) {
      this.retries[i] = 0;
      this.holdLatencies.push(this.now - s.holdSince);
      this.holdDriverLag.push(s.holdWaitMs ?? 0);
      s.holdSince = undefined;
      const hold = a.body as { holdId: string; seats: { seatId?: number; id?: number }[]; expiresAt: string; admissionToken: string };
      s.holdId = hold.holdId;
      s.admissionToken = hold.admissionToken;
      s.expiresAtMs = Date.parse(hold.expiresAt);
      s.seats = (hold.seats ?? []).map((x) => Number(x.seatId ?? x.id)).filter((x) => Number.isFinite(x));
      s.idempotencyKey = undefined;
      // The hold was made when the server says: its expiry less the TTL (the driver's send time may be long before).
      this.noteHeld(s.holdId, s.seats, s.expiresAtMs - this.o.holdTtlSeconds * 1000, s.expiresAtMs);
      const ttl = s.expiresAtMs - this.now;
      const u = this.random();
      if (!this.isBot(i) && u < this.o.abandon) {
        // Abandoned: the seats stay stranded until the hold expires.
        this.abandoned.push({ expiresAtMs: s.expiresAtMs, seats: s.quantity });
        return this.finish(i, Phase.GAVE_UP, 'left its hold unpaid (--abandon)');
      }
      this.setPhase(i, Phase.PAYING);
      if (!this.isBot(i) && u < this.o.abandon + this.o.slowPayers) {
        // A slow payer asks for the extension when payment starts, then takes most of the longer hold.
        s.slow = true;
        return this.schedule(i, Math.max(0, ttl * (0.5 + 0.3 * this.random())));
      }
      return this.schedule(i, Math.max(0, ttl * (0.1 + 0.3 * this.random())));
    }
    s.idempotencyKey = a.status === 0 || a.status >= 500 ? s.idempotencyKey : undefined;
    if (!retrying) s.holdSince = undefined;
    if (a.code === 'SINGLE_SEAT_LEFT') {
      // The pick would leave a seat alone: pick the seats offered instead (as many, beside it), else best available.
      const instead = a.body?.instead ?? [];
      s.seatIds = s.seatIds && instead.length === s.seatIds.length ? instead : null;
      return this.schedule(i, this.eventWait(1));
    }
    if (
      a.code === 'SECTION_NEARLY_FULL' ||
      a.code === 'SECTION_SOLD_OUT' ||
      a.code === 'SEATS_UNAVAILABLE' ||
      a.code === 'SEAT_PICKING_NOT_OPEN'
    ) {
      // Someone was quicker: take the first alternative offered, or look at the seat map again. Refused three times
      // in a row, the party takes a seat fewer (late in a sale the seats left are single holes in the rows, and a
      // party that will only sit together never buys them).
      const alt = a.body?.alternatives ?? [];
      // A party offered a split of itself takes it on its next try in the same section.
      if (!s.split && a.body?.split && a.body.split.length > 0) {
        s.split = true;
        s.seatIds = null;
        return this.schedule(i, this.eventWait(1));
      }
      s.seatIds = null;
      s.refused = (s.refused ?? 0) + 1;
      if (s.refused >= 3 && s.quantity > 1) {
        s.quantity--;
        s.refused = 0;
      }
      if (alt[0]) s.section = alt[0].section;
      else s.looked = false;
      return this.schedule(i, this.eventWait(2));
    }
    if (a.code === 'ONSALE_NOT_OPEN') return this.schedule(i, 300);
    if (a.status === 0 || a.status === 429 || a.status >= 500) return this.schedule(i, this.backoff(i, a));
    if (a.status === 401 || a.status === 403) return this.backToQueue(i);
    // The fan's limits (account, device, card) and anything else: this fan is done.
    this.finish(i, Phase.GAVE_UP, `hold ${a.key}`);
  }

  /** No seats for this fan now: back to polling, where LAST_CHANCE or SOLD_OUT will say what next. */
  private backToQueue(i: number) {
    this.shoppers.delete(i);
    if (!this.queueToken[i]) return this.finish(i, Phase.GAVE_UP);
    this.backInLine[i] = 1;
    this.setPhase(i, Phase.WAITING);
    this.schedule(i, this.pollDelay(i, 5));
  }

  private async pay(i: number) {
    const s = this.shoppers.get(i);
    if (!s?.holdId) return this.finish(i, Phase.GAVE_UP);
    const h = await this.headers(i);
    h['x-admission-token'] = s.admissionToken;
    if (s.slow && !s.extended) {
      s.extended = true;
      const e = await this.request('checkout', 'POST', `/holds/${s.holdId}/extend`, h);
      if (e.status === 200 && typeof e.body?.expiresAt === 'string') s.expiresAtMs = Date.parse(e.body.expiresAt);
      const left = (s.expiresAtMs ?? this.now) - this.now;
      return this.schedule(i, Math.max(0, left * (0.3 + 0.5 * this.random())));
    }
    // Drawn once a shopper: a checkout retried after a 503 or a reset carries the same Idempotency-Key and must carry the
    // same card, or the product rightly refuses it (400 IDEMPOTENCY_KEY_REUSED: 15 of 610 fans let in lost their
    // order to it in an 8,000-fan run, 14 answers at 200,000, when the draw was made again on each try).
    s.failing ??= !this.isBot(i) && this.random() < this.o.failingPayers / Math.max(1e-9, 1 - this.o.abandon);
    const number = s.failing && !s.declinedOnce ? '4000000000000002' : this.card(i);
    h['idempotency-key'] = s.idempotencyKey ??= randomUUID();
    const a = await this.request('checkout', 'POST', `/holds/${s.holdId}/checkout`, h, {
      payment: { instrument: { type: 'card', number } },
    });
    s.last = `checkout ${a.key}`;
    if (a.status === 200 && a.body?.orderId) {
      const orderId = a.body.orderId;
      const prior = this.ordersByHold.get(s.holdId);
      if (prior && prior !== orderId) this.duplicateOrdersSeen++;
      if (!prior) {
        this.ordersByHold.set(s.holdId, orderId);
        this.noteSold(s.seats ?? [], orderId);
        this.bought++;
        this.seatsBought += a.body.seatCount ?? 0;
      }
      return this.finish(i, Phase.BOUGHT);
    }
    if (a.status === 0 || a.status === 429 || a.status >= 500 || a.code === 'CHECKOUT_IN_PROGRESS') {
      // The same key again: a retry must never make a second order or charge.
      if (this.pastDeadline()) return this.finish(i, Phase.GAVE_UP, 'the run ended');
      return this.schedule(i, this.backoff(i, a));
    }
    s.idempotencyKey = undefined;
    if (a.status === 402 && !s.declinedOnce) {
      s.declinedOnce = true;
      return this.schedule(i, this.eventWait(20));
    }
    if (a.code === 'HOLD_LOST' && typeof a.body?.admissionToken === 'string') {
      s.admissionToken = a.body.admissionToken;
      s.holdId = undefined;
      this.setPhase(i, Phase.HOLDING);
      return this.schedule(i, 0);
    }
    if (a.code === 'HOLD_EXPIRED' || a.code === 'HOLD_NOT_ACTIVE' || a.status === 409 || a.status === 410) {
      // Too slow: back in line for whatever is left.
      return this.backToQueue(i);
    }
    this.finish(i, Phase.GAVE_UP, `checkout ${a.key}`);
  }

  private async soldOut(i: number, polling: boolean) {
    if (polling) this.soldOutAt[i] = this.now;
    // The fan follows the listing: the waitlist hands it seats that come back.
    const h = await this.headers(i);
    const a = await this.request('waitlist', 'PUT', `/listings/${this.o.listingId}/waitlist`, h, {
      criteria: { quantity: Math.min(2, this.o.perAccountSeats) },
    });
    if (a.status === 200 || a.status === 201) this.waitlistJoined++;
    this.finish(i, Phase.WAITLISTED);
  }

  private noteHeld(holdId: string, seats: number[], madeAtMs: number, untilMs: number) {
    for (const seat of seats) {
      const prior = this.seatHold.get(seat);
      // Held by another hold that was still live when this one was made: a candidate double hold, checked against
      // the database at the end (a hold lost to a crash was never real). A second's grace for rounding of the TTL.
      if (prior && prior.holdId !== holdId && prior.untilMs > madeAtMs + 1000 && !this.seatOrder.has(seat))
        this.holdConflicts.push({ seat, first: prior.holdId, second: holdId });
      this.seatHold.set(seat, { holdId, untilMs });
    }
  }

  private noteSold(seats: number[], orderId: string) {
    for (const seat of seats) {
      const prior = this.seatOrder.get(seat);
      if (prior && prior !== orderId) this.doubleSoldSeen++;
      this.seatOrder.set(seat, orderId);
    }
  }

  progress(): Progress {
    let shopping = 0;
    for (const i of this.shoppers.keys()) if (this.phase[i] === Phase.HOLDING || this.phase[i] === Phase.PAYING) shopping++;
    return {
      tMs: this.sinceOpen(),
      joined: this.joinedCount,
      waiting: this.waiting,
      admitted: this.admitted,
      shopping,
      bought: this.bought,
      seatsBought: this.seatsBought,
      done: this.finished,
      errors: this.errors,
      requests: this.requests,
      backlog: this.dueToArrive() - this.arrivedCount + (this.joinLine.length - this.joinLineHead),
      lines: Object.fromEntries(
        DRIVER_REQUEST_KINDS.map((k) => {
          const st = this.pools[k].stats;
          return [k, { queued: st.queued, running: st.running, connected: st.connected }];
        }),
      ) as Progress['lines'],
      joinsInFlight: this.joinsInFlight,
    };
  }

  /** Fans whose arrival time has come (a binary search over the arrival order). */
  private dueToArrive() {
    const elapsed = this.now - this.o.startAtMs;
    let lo = 0,
      hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.arrival[this.order[mid]!]! <= elapsed) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private sampleStranded() {
    const now = this.now;
    let seats = 0;
    for (const a of this.abandoned) if (a.expiresAtMs > now) seats += a.seats;
    this.strandedSeries.push([Math.round(this.sinceOpen(now)), seats]);
  }

  async run(): Promise<DriverResult> {
    // Fans in order of arrival, onto the wheel.
    const order = Array.from({ length: this.o.fans }, (_, i) => i).sort((a, b) => this.arrival[a]! - this.arrival[b]!);
    this.order = order;
    let next = 0;
    const done = new Promise<void>((r) => (this.resolveDone = r));
    this.loopDelay.enable();
    let lastSample = 0;
    let lastSecond = 0;
    const tick = () => {
      const now = this.now;
      const elapsed = now - this.o.startAtMs;
      // Past the deadline (and a grace for answers under way) nobody takes another step: the requests in flight are
      // let finish and the fans still in line are counted as unfinished, instead of waiting for each one's next poll.
      if (this.stopped || this.sinceOpen(now) > this.o.deadlineMs + 30_000) {
        if (this.inFlight === 0) this.resolveDone?.();
        return;
      }
      // Joins as the cap frees, first come first sent: the fans whose join came due again and the arrivals, by when each
      // came due.
      while (this.joinsInFlight < this.joinBacklogCap) {
        const lineDue = this.joinLineHead < this.joinLine.length ? this.joinLineDueAt[this.joinLineHead]! : Infinity;
        const arrivalDue = next < order.length ? this.arrival[order[next]!]! : Infinity;
        if (lineDue <= arrivalDue && lineDue <= elapsed) {
          this.step(this.joinLine[this.joinLineHead++]!);
          continue;
        }
        if (arrivalDue > elapsed) break;
        const i = order[next++]!;
        this.arrivedCount = next;
        this.arrivalLagMs = Math.max(this.arrivalLagMs, elapsed - this.arrival[i]!);
        this.step(i);
      }
      if (this.joinLineHead > 4096 && this.joinLineHead * 2 > this.joinLine.length) {
        this.joinLine.splice(0, this.joinLineHead);
        this.joinLineDueAt.splice(0, this.joinLineHead);
        this.joinLineHead = 0;
      }
      const upTo = Math.floor(elapsed / this.tickMs);
      for (; this.nextTick <= upTo; this.nextTick++) {
        const list = this.wheel.get(this.nextTick);
        if (!list) continue;
        this.wheel.delete(this.nextTick);
        for (const i of list) this.step(i);
      }
      if (now - lastSecond >= 1000) {
        lastSecond = now;
        this.pollsThisSecond = 0;
      }
      if (now - lastSample >= 1000 && now >= this.o.onsaleAtMs) {
        lastSample = now;
        this.sampleStranded();
      }
    };
    this.timer = setInterval(tick, this.tickMs);
    await done;
    clearInterval(this.timer);
    this.sampleStranded();
    this.loopDelay.disable();
    await Promise.all(
      Object.values(this.pools)
        .filter((p) => !p.destroyed)
        .map((p) => p.close()),
    );
    const ranked = { arrival: [] as number[], position: [] as number[] };
    for (let i = 0; i < this.o.fans; i++) {
      if (this.preOpen[i] === 1 && !Number.isNaN(this.position[i]!)) {
        ranked.arrival.push(this.joinedAt[i]!);
        ranked.position.push(this.position[i]!);
      }
    }
    const reads: number[] = [];
    const readsWait: number[] = [];
    const asTold: number[] = [];
    const asToldWait: number[] = [];
    const tracerReads: number[] = [];
    const tracerWait: number[] = [];
    for (let i = 0; i < this.o.fans; i++)
      if (!Number.isNaN(this.soldOutAt[i]!)) {
        reads.push(this.soldOutAt[i]! - this.o.onsaleAtMs);
        readsWait.push(this.soldOutWait[i]!);
        if (this.soldOutAsTold[i] === 1) {
          asTold.push(this.soldOutAt[i]! - this.o.onsaleAtMs);
          asToldWait.push(this.soldOutWait[i]!);
        }
        if (this.tracer[i] === 1) {
          tracerReads.push(this.soldOutAt[i]! - this.o.onsaleAtMs);
          tracerWait.push(this.soldOutWait[i]!);
        }
      }
    const bots = this.operator.reduce((a, o) => a + (o >= 0 ? 1 : 0), 0);
    const unfinishedBy: Record<string, number> = {};
    const names = ['arriving', 'joining', 'waiting', 'holding', 'paying'];
    for (let i = 0; i < this.o.fans; i++) {
      const p = this.phase[i]!;
      if (p >= Phase.BOUGHT) continue;
      const k = `${names[p]}${this.shoppers.get(i)?.last ? ` (last: ${this.shoppers.get(i)!.last})` : ''}`;
      unfinishedBy[k] = (unfinishedBy[k] ?? 0) + 1;
    }
    const admittedNotBought: Record<string, number> = {};
    for (let i = 0; i < this.o.fans; i++) {
      if (this.wasAdmitted[i] === 0) continue;
      const p = this.phase[i]!;
      if (p === Phase.BOUGHT) continue;
      const why =
        p === Phase.HOLDING || p === Phase.PAYING
          ? 'still holding or paying when the run ended'
          : p === Phase.WAITING || p === Phase.JOINING
            ? 'back in line when the run ended'
            : p === Phase.WAITLISTED
              ? 'sold out: on the waitlist'
              : (this.gaveUpWhy.get(i) ?? 'gave up');
      const k = `${this.isBot(i) ? 'bot' : 'fan'}: ${why}`;
      admittedNotBought[k] = (admittedNotBought[k] ?? 0) + 1;
    }
    return {
      humans: this.o.fans - bots,
      admittedNotBought: Object.fromEntries(Object.entries(admittedNotBought).sort((a, b) => b[1] - a[1])),
      bots,
      ranked: { arrival: Float64Array.from(ranked.arrival), position: Float64Array.from(ranked.position) },
      holdLatencies: Float64Array.from(this.holdLatencies),
      holdDriverLag: Float64Array.from(this.holdDriverLag),
      soldOutReadsAtMs: Float64Array.from(reads),
      soldOutDriverWait: Float64Array.from(readsWait),
      soldOutReadsAsToldAtMs: Float64Array.from(asTold),
      soldOutAsToldDriverWait: Float64Array.from(asToldWait),
      tracers: this.tracerCount,
      soldOutReadsTracerAtMs: Float64Array.from(tracerReads),
      soldOutTracerDriverWait: Float64Array.from(tracerWait),
      requestTimings: {
        ...(Object.fromEntries(
          DRIVER_REQUEST_KINDS.map((k) => [
            k,
            { product: this.timings[k].product.summary(), driverWait: this.timings[k].driverWait.summary() },
          ]),
        ) as Record<DriverRequestKind, RequestTimings>),
        'join after the open': { product: this.joinAfterOpen.product.summary(), driverWait: this.joinAfterOpen.driverWait.summary() },
        'join 200': { product: this.joinAccepted.product.summary(), driverWait: this.joinAccepted.driverWait.summary() },
      },
      connections: { ...this.poolSizes },
      admitted: this.admitted,
      positionExpired: { ...this.positionExpired },
      firstAdmitAtMs: this.firstAdmitAt,
      lastAdmitAtMs: this.lastAdmitAt,
      strandedSeats: this.strandedSeries,
      answers: this.answers,
      answersOfKind: Object.fromEntries(
        DRIVER_REQUEST_KINDS.flatMap((k) => [...this.answersOfKind[k].entries()].map(([key, n]) => [`${k} ${key}`, n] as const)).sort(
          (a, b) => b[1] - a[1],
        ),
      ),
      refusals: this.refusals.rows(),
      doubleSoldSeen: this.doubleSoldSeen,
      holdConflicts: this.holdConflicts,
      duplicateOrdersSeen: this.duplicateOrdersSeen,
      waitlistJoined: this.waitlistJoined,
      requests: this.requests,
      bought: this.bought,
      gaveUp: this.gaveUp,
      unfinished: this.o.fans - this.finished,
      unfinishedBy,
      eventLoopDelayP99Ms: Number.isFinite(this.loopDelay.percentile(99)) ? Math.round(this.loopDelay.percentile(99) / 1e6) : null,
      joined: this.joinedCount,
      arrivalLagMaxMs: Math.round(this.arrivalLagMs),
      neverArrived: this.o.fans - this.arrivedCount,
      answeredByKind: { ...this.answeredByKind },
      seatMapsFromEdgeCache: this.seatMapsFromEdgeCache,
      unansweredRequests: this.unanswered,
    };
  }
}

/** A tracer fan polls no more often than this (the per-account limit: 60 polls a minute). */
export const TRACER_MIN_POLL_MS = 1_100;

/**
 * Marks `want` tracer fans among `flags.length`, spread evenly over the crowd (arrivals are spread over it too), bots
 * left out; returns how many it marked (fewer when the crowd has fewer fans than that).
 */
export function pickTracers(flags: Uint8Array, want: number, isBot: (i: number) => boolean): number {
  const n = flags.length;
  if (!(want > 0) || n === 0) return 0;
  const stride = Math.max(1, Math.floor(n / want));
  let marked = 0;
  for (let start = 0; start < stride && marked < want; start++)
    for (let i = start; i < n && marked < want; i += stride)
      if (flags[i] === 0 && !isBot(i)) {
        flags[i] = 1;
        marked++;
      }
  return marked;
}
