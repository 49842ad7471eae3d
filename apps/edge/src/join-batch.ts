// Joins sent to the origin many to a request: the edge's own origin request was most of what a join through it cost
// (docs/benchmarks.md, "npm run bench -- joins"). Joins arriving while the origin is busy with earlier ones wait
// for the next batch; a join arriving at an idle edge goes at once (a batch of one). The origin runs each join of a
// batch through everything its join route runs and answers each as it would have alone (POST /edge/joins).
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

/** An offered batch none of whose joins' requests has sent after this long is given up: they are gone (ms). */
const CLAIM_MS = 1000;
/** A batch sent and unanswered this long past the origin timeout lost its sender's request (ms). */
const GIVE_UP_MARGIN_MS = 1000;
/** A waiting join looks at its batch after this long, then twice as long each time, up to MAX_TICK_MS (ms). */
const FIRST_TICK_MS = 2;
const MAX_TICK_MS = 16;
/**
 * How the origin's recent batch times are weighed: a waiting join sleeps until the batch it waits on is due back (its
 * own, or the first out when it has none yet) instead of looking every few ms; once past that, it looks as above.
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
  | { kind: 'alone' };

const UNAVAILABLE: JoinOutcome = { kind: 'unavailable', retryAfterSeconds: 5, how: 'miss' };

/**
 * A join waiting for its batch. Other requests only ever set plain fields here; the join's own request reads them on
 * its own timer (a timer's callback runs in the request that set it), so nothing of one request's is resumed, awaited
 * or read by another.
 */
interface Waiting {
  join: EdgeJoin;
  /** The batch it is in, once one is formed. */
  batch: Batch | undefined;
  /** Its outcome, once its batch is answered. */
  outcome: JoinOutcome | undefined;
  /** Its request has been answered otherwise (its deadline) or is gone: it is not sent. */
  ticket: JoinTicket;
}

/** A join's request, as the batcher sees it: `gone` once the request has been answered without its join. */
export interface JoinTicket {
  gone: boolean;
}

interface Batch {
  members: Waiting[];
  /** Offered: waiting for one of its joins' requests to send it. Sent: at the origin. */
  state: 'offered' | 'sent';
  /** When it was offered or sent (ms). */
  since: number;
  /** Its joins answered so far (the origin streams each join's answer as that join is done). */
  answered: number;
  /**
   * Half its joins or more answered: it no longer holds one of the maxInFlight places (the origin has done most of
   * it; the rest are waiting there, for a pooled connection most likely), so the next batch may go.
   */
  mostlyDone: boolean;
}

export interface EdgeJoinBatcherOptions {
  originUrl: string;
  key: () => Promise<TokenKey>;
  timeoutMs: number;
  breaker: OriginBreaker;
  /** Most joins in a batch. */
  maxBatch: number;
  /** Batches at the origin at once; joins arriving while this many are out wait for the next. */
  maxInFlight: number;
  /** How long after the origin refused a batch joins go alone again before batching is tried anew (ms). */
  refusedForMs?: number;
  /** How long an offered batch waits for one of its joins' requests to send it before it is given up (ms). */
  claimMs?: number;
  /** The clock (ms). */
  now?: () => number;
  log?: (message: string) => void;
}

/**
 * Collects joins into batches for the origin. workerd's I/O belongs to a request, and so does every promise: one
 * request resolving another's promise hands the continuation to that request, or drops it when that request is over,
 * and an object with I/O in it (a stream, a response) made in one request cannot be used by another. So a batch is only
 * ever sent by the request of one of its own joins, which awaits the answer anyway and reads it whole; every join
 * learns its batch and its outcome as plain values, on its own request's timer (2 ms, then twice as long each time, at
 * most 16 ms), and builds its answer in its own request. A batch is sent by whichever of its joins' requests looks
 * first (at once, by the join that arrives while there is room); a batch none of them sent within claimMs is given up,
 * as is one whose sender went away without an answer after the origin timeout: their joins are answered 503 as a
 * failed batch's are. Joins keep their arrival order within a batch and batches leave in arrival order.
 */
export class EdgeJoinBatcher {
  private waiting: Waiting[] = [];
  /** Batches offered or at the origin (at most maxInFlight). */
  private out: Batch[] = [];
  private refusedUntil = 0;
  private readonly now: () => number;
  /** The key once imported: awaited once, then used as a value. */
  private keyNow: TokenKey | undefined;
  /** The origin's recent time over a batch (ms; weighted), once one has been answered. */
  private roundTripMs: number | undefined;

  constructor(private readonly o: EdgeJoinBatcherOptions) {
    this.now = o.now ?? Date.now;
  }

  /** False for a while after the origin refused a batch: joins then go alone. */
  get active(): boolean {
    return this.refusedUntil === 0 || this.now() >= this.refusedUntil;
  }

  /** Batches offered or at the origin now (for tests). */
  get batchesOut(): number {
    return this.out.length;
  }

  /**
   * A join's outcome. `keepAlive` (the request's waitUntil) keeps a batch this join's request sends being read past
   * this join's own answer, for the other joins of the batch (each is answered as soon as its own answer is in);
   * without it the sender waits for the whole batch.
   */
  async join(join: EdgeJoin, ticket: JoinTicket = { gone: false }, keepAlive?: (p: Promise<unknown>) => void): Promise<JoinOutcome> {
    const w: Waiting = { join, batch: undefined, outcome: undefined, ticket };
    this.waiting.push(w);
    this.pump();
    let tick = FIRST_TICK_MS;
    for (;;) {
      if (w.outcome !== undefined) return w.outcome;
      const b = w.batch;
      if (b !== undefined && b.state === 'offered') {
        const sending = this.send(b, w);
        if (!keepAlive) return sending;
        keepAlive(sending);
        continue;
      }
      const due = this.dueInMs(b);
      if (due > FIRST_TICK_MS) {
        // Nothing to do before the batch it waits on is due back: one timer instead of a look every few ms.
        await sleep(due);
        tick = FIRST_TICK_MS;
      } else {
        await sleep(tick);
        tick = Math.min(tick * 2, MAX_TICK_MS);
      }
      // Its own batch offered: it sends it (above) before anything here could give that batch up.
      const mine = w.batch;
      if (w.outcome === undefined && (mine === undefined || mine.state !== 'offered')) this.pump();
    }
  }

  /**
   * How long until the batch a join waits on is due back from the origin, by the origin's recent batch times: its own
   * once sent, else the first one out (its answer makes room for the next batch); 0 when unknown or already due. At
   * most MAX_DUE_MS.
   */
  private dueInMs(own: Batch | undefined): number {
    if (this.roundTripMs === undefined) return 0;
    let since = Infinity;
    if (own !== undefined) since = own.state === 'sent' ? own.since : Infinity;
    else for (const b of this.out) if (b.state === 'sent' && !b.mostlyDone && b.since < since) since = b.since;
    if (since === Infinity) return 0;
    return Math.min(MAX_DUE_MS, Math.max(0, Math.floor(since + EARLY * this.roundTripMs - this.now())));
  }

  /** Gives up batches whose joins' requests are gone, and offers new batches while there is room. */
  private pump(): void {
    const now = this.now();
    for (const b of [...this.out]) {
      if (b.state === 'sent' && now - b.since > this.o.timeoutMs + GIVE_UP_MARGIN_MS) {
        this.o.log?.(`onsale edge: a batch of ${b.members.length} joins went unanswered (its request is gone): answered 503`);
        this.finish(b);
      } else if (b.state === 'offered' && now - b.since > (this.o.claimMs ?? CLAIM_MS)) {
        this.finish(b);
      }
    }
    let places = 0;
    for (const b of this.out) if (!b.mostlyDone) places++;
    while (places < this.o.maxInFlight && this.waiting.length > 0) {
      const members: Waiting[] = [];
      while (members.length < this.o.maxBatch && this.waiting.length > 0) {
        const w = this.waiting.shift()!;
        if (!w.ticket.gone) members.push(w);
      }
      if (members.length === 0) break;
      const b: Batch = { members, state: 'offered', since: now, answered: 0, mostlyDone: false };
      for (const m of members) m.batch = b;
      this.out.push(b);
      places++;
    }
  }

  /**
   * Gives each join of a batch still without one its outcome (`outcomes`' at its place, else 503 ORIGIN_UNAVAILABLE as
   * a failed batch's; each reads it on its own timer), frees the batch's place.
   */
  private finish(b: Batch, outcomes?: JoinOutcome[]): void {
    const i = this.out.indexOf(b);
    if (i < 0) return;
    this.out.splice(i, 1);
    b.members.forEach((m, k) => (m.outcome ??= outcomes?.[k] ?? UNAVAILABLE));
    this.pump();
  }

  /** One join's answer from a streamed batch: that join's outcome now, and the batch's place once half are in. */
  private answered(b: Batch, k: number, answer: EdgeJoinAnswer): void {
    const m = b.members[k];
    if (m === undefined || m.outcome !== undefined) return;
    m.outcome = { kind: 'answer', answer };
    b.answered++;
    if (!b.mostlyDone && b.answered * 2 >= b.members.length) {
      b.mostlyDone = true;
      this.noteRoundTrip(this.now() - b.since);
      this.pump();
    }
  }

  private noteRoundTrip(took: number): void {
    this.roundTripMs = this.roundTripMs === undefined ? took : this.roundTripMs + ROUND_TRIP_WEIGHT * (took - this.roundTripMs);
  }

  /** Sends a batch from the request of one of its joins (`sender`), gives every join its outcome, returns the sender's. */
  private async send(b: Batch, sender: Waiting): Promise<JoinOutcome> {
    b.state = 'sent';
    b.since = this.now();
    // Joins whose requests were answered meanwhile are not sent (their fans were told to come back).
    const members = b.members.filter((m) => m === sender || !m.ticket.gone);
    b.members = members;
    let outcomes: JoinOutcome[];
    try {
      outcomes = await this.exchange(
        members.map((w) => w.join),
        (k, answer) => this.answered(b, k, answer),
      );
      if (outcomes[0]?.kind === 'answer' && !b.mostlyDone) this.noteRoundTrip(this.now() - b.since);
    } catch (e) {
      this.o.log?.(`onsale edge: a batch of joins failed: ${e instanceof Error ? e.message : String(e)}`);
      outcomes = members.map(() => UNAVAILABLE);
    }
    this.finish(b, outcomes);
    return sender.outcome ?? outcomes[members.indexOf(sender)]!;
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
