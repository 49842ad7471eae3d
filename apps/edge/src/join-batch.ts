// Joins sent to the origin many to a request, but only a backlog: the edge's own origin request was most of what a join
// through it cost (docs/benchmarks.md, "npm run bench -- joins"), while a join that waits for a batch pays that wait.
// A join goes to the origin alone (proxied, as with batching off) while fewer than `aloneBelow` joins are at the
// origin and none waits for a batch; a join arriving while that many are out waits in the backlog, which goes as one
// batch once it holds `maxBatch` joins or its oldest has waited `maxWaitMs`. So at a low rate a join pays nothing for
// batching, and at a high rate the origin gets batches. The origin runs each join of a batch through everything its
// join route runs and answers each as it would have alone (POST /edge/joins).
import {
  EDGE_JOINS_HEADER,
  EDGE_JOINS_PATH,
  EDGE_JOINS_STREAM,
  signEdgeJoins,
  type EdgeJoin,
  type EdgeJoinAnswer,
} from '@onsale/shared/queue/edge-joins';
import type { TokenKey } from '@onsale/shared/queue/edge';
import type { OriginBreaker } from './breaker.js';

/** A batch, or a join sent alone, unanswered this long past the origin timeout lost its sender's request (ms). */
const GIVE_UP_MARGIN_MS = 1000;
/** A join in a sent batch looks at its outcome after this long, then twice as long each time, up to MAX_TICK_MS (ms). */
const FIRST_TICK_MS = 2;
const MAX_TICK_MS = 16;
/**
 * How the origin's recent batch times are weighed: a join in a sent batch sleeps until its batch is due back instead
 * of looking every few ms; once past that, it looks as above.
 */
const ROUND_TRIP_WEIGHT = 0.2;
/** It wakes a little before (this share of the recent time), then looks as above. */
const EARLY = 0.9;
/** The longest such sleep (ms): a batch answered sooner than the recent ones is seen within this. */
const MAX_DUE_MS = 100;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What one join of a batch comes back with. */
export type JoinOutcome =
  /** The origin's answer to this join. */
  | { kind: 'answer'; answer: EdgeJoinAnswer }
  /** No answer (the origin failed, timed out, or the circuit is open): 503 ORIGIN_UNAVAILABLE, as a proxied join gets. */
  | { kind: 'unavailable'; retryAfterSeconds: number; how: 'hit' | 'miss' }
  /** The origin refused the batch itself (it has no batch route, or does not know the edge's key): send the join alone. */
  | { kind: 'alone' }
  /** Its request's deadline (JoinTicket.until) came first: the edge answers it 503 EDGE_FAULT, as any request unanswered then. */
  | { kind: 'late' };

const UNAVAILABLE: JoinOutcome = { kind: 'unavailable', retryAfterSeconds: 5, how: 'miss' };
const LATE: JoinOutcome = { kind: 'late' };

/**
 * A join waiting for its batch. Other requests only ever set plain fields here; the join's own request reads them on
 * its own timer (a timer's callback runs in the request that set it), so nothing of one request's is resumed, awaited
 * or read by another.
 */
interface Waiting {
  join: EdgeJoin;
  /** When it joined the backlog (ms). */
  since: number;
  /** The batch it is in, once one is sent. */
  batch: Batch | undefined;
  /** Its outcome, once its batch is answered. */
  outcome: JoinOutcome | undefined;
  /** Its request has been answered otherwise (its deadline) or is gone: it is not sent. */
  ticket: JoinTicket;
}

/** A join's request, as the batcher sees it: `gone` once the request has been answered without its join. */
export interface JoinTicket {
  gone: boolean;
  /**
   * Its request's deadline (the batcher's clock, ms), kept by the join's own looks instead of a timer of its own: a
   * join still without an outcome then is `gone` and comes back `late` (its waiting sleeps never pass it).
   */
  until?: number;
}

interface Batch {
  members: Waiting[];
  /** When it was sent (ms). */
  since: number;
  /** Its joins answered so far (the origin streams each join's answer as that join is done). */
  answered: number;
  /** Half its joins or more answered: its round trip is noted. */
  mostlyDone: boolean;
}

export interface EdgeJoinBatcherOptions {
  originUrl: string;
  key: () => Promise<TokenKey>;
  timeoutMs: number;
  breaker: OriginBreaker;
  /** Most joins in a batch. */
  maxBatch: number;
  /**
   * Joins at the origin (alone or in batches, not yet answered) below which a join arriving while none waits goes
   * alone; 0: every join waits for a batch.
   */
  aloneBelow: number;
  /** The longest a join of the backlog waits for its batch to fill before the batch is sent (ms). */
  maxWaitMs: number;
  /** How long after the origin refused a batch joins go alone again before batching is tried anew (ms). */
  refusedForMs?: number;
  /** The clock (ms). */
  now?: () => number;
  log?: (message: string) => void;
}

/**
 * Collects the backlog of joins into batches for the origin. workerd's I/O belongs to a request, and so does every
 * promise: one request resolving another's promise hands the continuation to that request, or drops it when that
 * request is over, and an object with I/O in it (a stream, a response) made in one request cannot be used by another.
 * So a batch is only ever sent by the request of one of its own joins (the one that fills the backlog to maxBatch, or
 * the first whose timer finds the backlog's oldest join due), which reads the answer in its own request; every join
 * learns its outcome as a plain value, on its own request's timer, and builds its answer in its own request. A batch
 * whose sender went away without an answer is given up after the origin timeout: its joins are answered 503 as a
 * failed batch's are. Joins keep their arrival order within a batch and batches leave in arrival order.
 */
export class EdgeJoinBatcher {
  /** The backlog: joins waiting for a batch (at most maxBatch). */
  private waiting: Waiting[] = [];
  /** Batches at the origin. */
  private out: Batch[] = [];
  /** Joins of sent batches not yet answered. */
  private batchedOut = 0;
  /** Joins sent alone and not yet answered, each with when it was sent (ms), in that order. */
  private aloneOut = new Map<object, number>();
  private refusedUntil = 0;
  private readonly now: () => number;
  /** The key once imported: awaited once, then used as a value. */
  private keyNow: TokenKey | undefined;
  /** The origin's recent time over a batch (ms; weighted), once one has been answered. */
  private roundTripMs: number | undefined;
  /** Joins sent alone and in batches, and batches sent (for tests and logs). */
  readonly counts = { alone: 0, batched: 0, batches: 0 };

  constructor(private readonly o: EdgeJoinBatcherOptions) {
    this.now = o.now ?? Date.now;
  }

  /** False for a while after the origin refused a batch: joins then go alone. */
  get active(): boolean {
    return this.refusedUntil === 0 || this.now() >= this.refusedUntil;
  }

  /** Joins at the origin now: sent alone, or in a batch, and not yet answered. */
  get inFlight(): number {
    const old = this.now() - this.o.timeoutMs - GIVE_UP_MARGIN_MS;
    // A join sent alone whose request never said it was answered (workerd cancelled it) is let go after its timeout.
    for (const [k, since] of this.aloneOut) {
      if (since >= old) break;
      this.aloneOut.delete(k);
    }
    return this.aloneOut.size + this.batchedOut;
  }

  /**
   * A join arriving now goes alone when nothing waits for a batch and fewer than `aloneBelow` joins are at the origin
   * (or while the origin refuses batches): its release, to be called once its answer is in (or its request is over).
   * Null: it waits for a batch (`join`).
   */
  alone(): (() => void) | null {
    if (this.active && (this.waiting.length > 0 || this.inFlight >= this.o.aloneBelow)) return null;
    const k = {};
    this.aloneOut.set(k, this.now());
    this.counts.alone++;
    return () => void this.aloneOut.delete(k);
  }

  /**
   * A join's outcome from a batch. `keepAlive` (the request's waitUntil) keeps a batch this join's request sends being
   * read past this join's own answer, for the other joins of the batch (each is answered as soon as its own answer is
   * in); without it the sender waits for the whole batch.
   */
  async join(join: EdgeJoin, ticket: JoinTicket = { gone: false }, keepAlive?: (p: Promise<unknown>) => void): Promise<JoinOutcome> {
    const w: Waiting = { join, since: this.now(), batch: undefined, outcome: undefined, ticket };
    this.waiting.push(w);
    let tick = FIRST_TICK_MS;
    const until = ticket.until;
    // A sleep, never past the request's deadline.
    const nap = until === undefined ? sleep : (ms: number) => sleep(Math.max(0, Math.min(ms, until - this.now())));
    for (;;) {
      if (w.outcome !== undefined) return w.outcome;
      this.giveUp();
      if (w.outcome !== undefined) return w.outcome;
      if (until !== undefined && this.now() >= until) {
        // Its request's deadline: answered by the edge without its join (not sent if it is still in the backlog).
        w.ticket.gone = true;
        if (w.batch === undefined) this.waiting = this.waiting.filter((m) => m !== w);
        return LATE;
      }
      if (w.batch === undefined && w.ticket.gone) {
        // Its request was answered by its deadline while it waited: it is not sent.
        this.waiting = this.waiting.filter((m) => m !== w);
        return UNAVAILABLE;
      }
      if (w.batch === undefined) {
        // In the backlog (which never holds more than maxBatch, so all of it, this join included, is one batch): sent
        // once full, or once its oldest join has waited maxWaitMs.
        const due = this.dueToSend();
        if (due > 0) {
          // The backlog's oldest join sends it when due (its own timer); a join behind it sleeps on through to when
          // that batch is due back from the origin, one wake instead of two: the first would only find the batch sent.
          // If the batch was not sent by then (the oldest's request went away), this join sends it on waking.
          await nap(this.waiting[0] === w ? due : due + this.dueAfterSend());
          continue;
        }
        const b = this.take();
        if (b.members.length === 0) continue;
        const sending = this.send(b);
        if (!keepAlive) {
          await sending;
          continue;
        }
        keepAlive(sending);
        continue;
      }
      const due = this.dueInMs(w.batch);
      if (due > FIRST_TICK_MS) {
        // Nothing to do before its batch is due back: one timer instead of a look every few ms.
        await nap(due);
        tick = FIRST_TICK_MS;
      } else {
        await nap(tick);
        tick = Math.min(tick * 2, MAX_TICK_MS);
      }
    }
  }

  /** How long until the backlog is sent (ms): 0 when it is full or its oldest join (still wanted) has waited enough. */
  private dueToSend(): number {
    while (this.waiting.length > 0 && this.waiting[0]!.ticket.gone) this.waiting.shift();
    if (this.waiting.length === 0 || this.waiting.length >= this.o.maxBatch) return 0;
    return Math.max(0, this.waiting[0]!.since + this.o.maxWaitMs - this.now());
  }

  /** The backlog as a batch, without the joins whose requests were answered meanwhile (their fans were told to come back). */
  private take(): Batch {
    const members = this.waiting.filter((m) => !m.ticket.gone);
    this.waiting = [];
    const b: Batch = { members, since: this.now(), answered: 0, mostlyDone: false };
    for (const m of members) m.batch = b;
    return b;
  }

  /** How long after it is sent a batch is due back from the origin, by its recent batch times (ms, at most MAX_DUE_MS). */
  private dueAfterSend(): number {
    if (this.roundTripMs === undefined) return 0;
    return Math.min(MAX_DUE_MS, Math.floor(EARLY * this.roundTripMs));
  }

  /** How long until a sent batch is due back from the origin, by the origin's recent batch times (at most MAX_DUE_MS). */
  private dueInMs(b: Batch): number {
    if (this.roundTripMs === undefined) return 0;
    return Math.min(MAX_DUE_MS, Math.max(0, Math.floor(b.since + EARLY * this.roundTripMs - this.now())));
  }

  /** Gives up batches whose sender's request went away without their answer. */
  private giveUp(): void {
    if (this.out.length === 0) return;
    const now = this.now();
    for (const b of [...this.out]) {
      if (now - b.since > this.o.timeoutMs + GIVE_UP_MARGIN_MS) {
        this.o.log?.(`onsale edge: a batch of ${b.members.length} joins went unanswered (its request is gone): answered 503`);
        this.finish(b);
      }
    }
  }

  /**
   * Gives each join of a batch still without one its outcome (`outcomes`' at its place, else 503 ORIGIN_UNAVAILABLE as
   * a failed batch's; each reads it on its own timer).
   */
  private finish(b: Batch, outcomes?: JoinOutcome[]): void {
    const i = this.out.indexOf(b);
    if (i < 0) return;
    this.out.splice(i, 1);
    this.batchedOut -= b.members.length - b.answered;
    b.members.forEach((m, k) => (m.outcome ??= outcomes?.[k] ?? UNAVAILABLE));
  }

  /** One join's answer from a streamed batch: that join's outcome now. */
  private answered(b: Batch, k: number, answer: EdgeJoinAnswer): void {
    const m = b.members[k];
    if (m === undefined || m.outcome !== undefined || !this.out.includes(b)) return;
    m.outcome = { kind: 'answer', answer };
    b.answered++;
    this.batchedOut--;
    if (!b.mostlyDone && b.answered * 2 >= b.members.length) {
      b.mostlyDone = true;
      this.noteRoundTrip(this.now() - b.since);
    }
  }

  private noteRoundTrip(took: number): void {
    this.roundTripMs = this.roundTripMs === undefined ? took : this.roundTripMs + ROUND_TRIP_WEIGHT * (took - this.roundTripMs);
  }

  /** Sends a batch from the request of one of its joins, gives every join its outcome. */
  private async send(b: Batch): Promise<void> {
    b.since = this.now();
    this.out.push(b);
    this.batchedOut += b.members.length;
    this.counts.batches++;
    this.counts.batched += b.members.length;
    let outcomes: JoinOutcome[];
    try {
      outcomes = await this.exchange(
        b.members.map((w) => w.join),
        (k, answer) => this.answered(b, k, answer),
      );
      if (outcomes[0]?.kind === 'answer' && !b.mostlyDone) this.noteRoundTrip(this.now() - b.since);
    } catch (e) {
      this.o.log?.(`onsale edge: a batch of joins failed: ${e instanceof Error ? e.message : String(e)}`);
      outcomes = b.members.map(() => UNAVAILABLE);
    }
    this.finish(b, outcomes);
  }

  /**
   * Sends a batch and reads its answers: streamed (EDGE_JOINS_STREAM, one line a join as each is done, each given to
   * `each` at once), or the whole batch's at its end (an origin that does not stream). A stream that ends or fails
   * before every join's line leaves those joins 503 ORIGIN_UNAVAILABLE, as a proxied join whose origin failed.
   */
  private async exchange(joins: EdgeJoin[], each: (k: number, answer: EdgeJoinAnswer) => void): Promise<JoinOutcome[]> {
    const { breaker } = this.o;
    const all = (o: JoinOutcome) => joins.map(() => o);
    const admitted = breaker.admit();
    if (!admitted.send) return all({ kind: 'unavailable', retryAfterSeconds: admitted.retryAfterSeconds, how: 'hit' });
    const body = JSON.stringify({ joins });
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new Error(`the origin took longer than ${this.o.timeoutMs} ms`)), this.o.timeoutMs);
    let status: number;
    let contentType: string;
    let retryAfter: string | null;
    let text: string;
    try {
      const key = this.keyNow ?? (this.keyNow = await this.o.key());
      const signature = await signEdgeJoins(key, body, Date.now());
      const res = await fetch(`${this.o.originUrl}${EDGE_JOINS_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: EDGE_JOINS_STREAM, [EDGE_JOINS_HEADER]: signature },
        body,
        signal: abort.signal,
      });
      status = res.status;
      contentType = res.headers.get('content-type') ?? '';
      retryAfter = res.headers.get('retry-after');
      if (status === 200 && contentType.startsWith(EDGE_JOINS_STREAM) && res.body) {
        const got = await readLines(res.body, joins.length, each);
        // Every join answered has its outcome already (given to `each`); those without one get 503 (finish).
        if (got < joins.length) {
          this.o.log?.(`onsale edge: POST ${EDGE_JOINS_PATH}: the origin's answers ended after ${got} of ${joins.length} joins`);
          breaker.failed(admitted.trial);
        } else breaker.succeeded(admitted.trial);
        return [];
      }
      text = await res.text();
    } catch (e) {
      this.o.log?.(
        `onsale edge: POST ${EDGE_JOINS_PATH} (${joins.length} joins) to the origin failed: ${e instanceof Error ? e.message : String(e)}`,
      );
      breaker.failed(admitted.trial);
      return all({ kind: 'unavailable', retryAfterSeconds: 5, how: 'miss' });
    } finally {
      clearTimeout(timer);
    }
    const error = originError(text, contentType);
    if (status === 200) {
      const answers = answersOf(text, joins.length);
      if (answers) {
        breaker.succeeded(admitted.trial);
        return answers.map((answer) => ({ kind: 'answer', answer }));
      }
    } else if (status >= 400 && status < 500 && error !== null) {
      // The origin has no batch route (an older store API) or does not take this edge's signature: the origin is
      // up, the joins go alone for a while (each then gets its own answer), and the edge says why once.
      breaker.succeeded(admitted.trial);
      if (this.active) this.o.log?.(`onsale edge: the origin refused a batch of joins (${status} ${error}): joins go alone for a while`);
      this.refusedUntil = Date.now() + (this.o.refusedForMs ?? 60_000);
      return all({ kind: 'alone' });
    } else if (status >= 500 && status <= 599 && error !== null) {
      // The store's own refusal of the whole batch (shed under load: 503 SERVICE_UNAVAILABLE with Retry-After), as
      // each of its joins would have been refused alone.
      breaker.succeeded(admitted.trial);
      const headers: Record<string, string> = { 'content-type': contentType, 'cache-control': 'no-store' };
      if (retryAfter !== null) headers['retry-after'] = retryAfter;
      return all({ kind: 'answer', answer: { status, headers, body: text } });
    }
    this.o.log?.(`onsale edge: POST ${EDGE_JOINS_PATH}: the origin answered ${status} without its batch's answers`);
    breaker.failed(admitted.trial);
    return all({ kind: 'unavailable', retryAfterSeconds: 5, how: 'miss' });
  }
}

/**
 * Reads a streamed batch answer (one JSON line a join, `{ i, status, headers, body }`), giving each well-formed line
 * for a join not yet answered to `each` as it comes; returns how many joins were answered. A line that is not one is
 * skipped (its join stays unanswered).
 */
async function readLines(body: ReadableStream<Uint8Array>, n: number, each: (k: number, answer: EdgeJoinAnswer) => void): Promise<number> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const seen = new Array<boolean>(n).fill(false);
  let got = 0;
  let rest = '';
  const line = (text: string) => {
    if (text === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return;
    }
    const { i, status, headers, body: b } = (parsed ?? {}) as Partial<EdgeJoinAnswer & { i: number }>;
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= n || seen[i]) return;
    if (typeof status !== 'number' || typeof b !== 'string' || typeof headers !== 'object' || headers === null) return;
    for (const v of Object.values(headers)) if (typeof v !== 'string') return;
    seen[i] = true;
    got++;
    each(i, { status, headers, body: b });
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    rest += decoder.decode(value, { stream: true });
    let nl = rest.indexOf('\n');
    while (nl >= 0) {
      line(rest.slice(0, nl));
      rest = rest.slice(nl + 1);
      nl = rest.indexOf('\n');
    }
  }
  line(rest + decoder.decode());
  return got;
}

/** The store API's error code in a JSON answer, or null when the answer is not the store API's error. */
export function originError(text: string, contentType: string): string | null {
  if (!/\bjson\b/i.test(contentType)) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    const code = typeof parsed === 'object' && parsed !== null ? (parsed as { error?: unknown }).error : undefined;
    return typeof code === 'string' ? code : null;
  } catch {
    return null;
  }
}

/** The batch's answers, one per join in order, or null when the body is not that. */
function answersOf(text: string, n: number): EdgeJoinAnswer[] | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const answers = (parsed as { answers?: unknown } | null)?.answers;
  if (!Array.isArray(answers) || answers.length !== n) return null;
  for (const a of answers as unknown[]) {
    const { status, headers, body } = (a ?? {}) as Partial<EdgeJoinAnswer>;
    if (typeof status !== 'number' || typeof body !== 'string' || typeof headers !== 'object' || headers === null) return null;
    for (const v of Object.values(headers)) if (typeof v !== 'string') return null;
  }
  return answers as EdgeJoinAnswer[];
}
