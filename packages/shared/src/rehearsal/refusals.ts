// Every answer fans got that was not a 2xx, counted by the kind of request and by why: the error code, and for a 503
// the rule that answered it (the store API's `reason`: overload_event_loop, overload_pool, request_budget, database,
// database_busy; the edge's own 503s name themselves in their code). A report that says only "30,978 503s" cannot
// tell a shed hold from a shed join, nor the event loop's rule from the request budget's.

/** One row: how many answers of this kind of request were this status and code, for this reason. */
export interface RefusalCount {
  /** The kind of request (`join`, `status`, `seat map`, `hold`, `checkout`, `waitlist`). */
  kind: string;
  /** `503 SERVICE_UNAVAILABLE`, `409 SEATS_UNAVAILABLE`, `network UND_ERR_SOCKET`. */
  answer: string;
  /** For a 503: the rule that answered it (its body's `reason`, or `none given`); otherwise null. */
  reason: string | null;
  count: number;
}

/** The reason a 503's body gives (`reason`), `none given` when it gives none; null for any other answer. */
export function refusalReasonOf(status: number, body: unknown): string | null {
  if (status !== 503) return null;
  const reason = (body as { reason?: unknown } | null)?.reason;
  return typeof reason === 'string' && reason.length > 0 && reason.length <= 64 ? reason : 'none given';
}

/** Counts non-2xx answers (and requests that got none) by kind, answer and reason; cheap enough for every answer. */
export class RefusalCounter {
  private readonly counts = new Map<string, number>();

  /** Counts one answer; a 2xx (or 1xx/3xx) is not a refusal and is not counted. */
  count(kind: string, status: number, answer: string, body: unknown): void {
    if (status >= 200 && status < 400) return;
    const reason = refusalReasonOf(status, body);
    const key = `${kind}\u0000${answer}\u0000${reason ?? ''}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  /** The rows, most first (ties by kind, then answer). */
  rows(): RefusalCount[] {
    return [...this.counts.entries()]
      .map(([key, count]) => {
        const [kind, answer, reason] = key.split('\u0000') as [string, string, string];
        return { kind, answer, reason: reason === '' ? null : reason, count };
      })
      .sort((a, b) => b.count - a.count || a.kind.localeCompare(b.kind) || a.answer.localeCompare(b.answer));
  }
}

/** The 503s among the rows, summed by kind of request and reason: `{ hold: { overload_event_loop: 812 } }`. */
export function unavailableByKind(rows: readonly RefusalCount[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const r of rows) {
    if (!r.answer.startsWith('503 ')) continue;
    const byReason = (out[r.kind] ??= {});
    const reason = r.reason ?? 'none given';
    byReason[reason] = (byReason[reason] ?? 0) + r.count;
  }
  return out;
}
