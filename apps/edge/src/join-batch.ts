// Joins sent to the origin many to a request: the edge's own origin request was most of what a join through it cost
// (docs/benchmarks.md, "npm run bench -- joins"). Joins arriving while the origin is busy with earlier ones wait
// for the next batch; a join arriving at an idle edge goes at once (a batch of one). The origin runs each join of a
// batch through everything its join route runs and answers each as it would have alone (POST /edge/joins).
import { EDGE_JOINS_HEADER, EDGE_JOINS_PATH, signEdgeJoins, type EdgeJoin, type EdgeJoinAnswer } from '@onsale/shared/queue/edge-joins';
import type { TokenKey } from '@onsale/shared/queue/edge';
import type { OriginBreaker } from './breaker.js';

/** What one join of a batch comes back with. */
export type JoinOutcome =
  /** The origin's answer to this join. */
  | { kind: 'answer'; answer: EdgeJoinAnswer }
  /** No answer (the origin failed, timed out, or the circuit is open): 503 ORIGIN_UNAVAILABLE, as a proxied join gets. */
  | { kind: 'unavailable'; retryAfterSeconds: number; how: 'hit' | 'miss' }
  /** The origin refused the batch itself (it has no batch route, or does not know the edge's key): send the join alone. */
  | { kind: 'alone' };

interface Waiting {
  join: EdgeJoin;
  settle: (turn: Turn) => void;
}
/** A waiting join's turn: it leads a batch (sends it from its own request), or its batch's leader brings its outcome. */
type Turn = { lead: Waiting[] } | { outcome: JoinOutcome };

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
  log?: (message: string) => void;
}

/**
 * Collects joins into batches for the origin. A batch is sent by the request of its first join (the worker's I/O
 * belongs to a request), which awaits the whole batch anyway; the others wait for their outcome. Joins keep their
 * arrival order within a batch and batches leave in arrival order.
 */
export class EdgeJoinBatcher {
  private waiting: Waiting[] = [];
  private inFlight = 0;
  private refusedUntil = 0;

  constructor(private readonly o: EdgeJoinBatcherOptions) {}

  /** False for a while after the origin refused a batch: joins then go alone. */
  get active(): boolean {
    return this.refusedUntil === 0 || Date.now() >= this.refusedUntil;
  }

  async join(join: EdgeJoin): Promise<JoinOutcome> {
    const turn = await new Promise<Turn>((settle) => {
      this.waiting.push({ join, settle });
      this.pump();
    });
    if ('outcome' in turn) return turn.outcome;
    return this.send(turn.lead);
  }

  /** Starts batches while fewer than maxInFlight are out: the first join of each is woken to send it. */
  private pump(): void {
    while (this.inFlight < this.o.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.o.maxBatch);
      this.inFlight++;
      batch[0]!.settle({ lead: batch });
    }
  }

  /** Sends a batch (its leader's own join first), gives every other join its outcome, returns the leader's. */
  private async send(batch: Waiting[]): Promise<JoinOutcome> {
    let outcomes: JoinOutcome[];
    try {
      outcomes = await this.exchange(batch.map((w) => w.join));
    } catch (e) {
      this.o.log?.(`onsale edge: a batch of joins failed: ${e instanceof Error ? e.message : String(e)}`);
      outcomes = batch.map(() => ({ kind: 'unavailable', retryAfterSeconds: 5, how: 'miss' }));
    } finally {
      this.inFlight--;
    }
    for (let i = 1; i < batch.length; i++) batch[i]!.settle({ outcome: outcomes[i]! });
    this.pump();
    return outcomes[0]!;
  }

  private async exchange(joins: EdgeJoin[]): Promise<JoinOutcome[]> {
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
      const signature = await signEdgeJoins(await this.o.key(), body, Date.now());
      const res = await fetch(`${this.o.originUrl}${EDGE_JOINS_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [EDGE_JOINS_HEADER]: signature },
        body,
        signal: abort.signal,
      });
      status = res.status;
      contentType = res.headers.get('content-type') ?? '';
      retryAfter = res.headers.get('retry-after');
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
