import { EDGE_REPORT_MAX_AGE_MS, EDGE_REPORT_MAX_CLAIMS, signClaimsReport, type EdgeClaimsReport } from '@onsale/shared/queue/edge-state';
import type { TokenKey } from '@onsale/shared/queue/edge';
import type { WaitUntil } from './state-cache.js';

/**
 * How many admissions an isolate keeps to report at most (twenty full reports): a bound on its memory through an
 * origin outage, far above what a wave of admissions reaches while the origin answers within seconds. Past it an
 * admission is not reported (counted in `dropped`).
 */
export const EDGE_PENDING_MAX_CLAIMS = 20 * EDGE_REPORT_MAX_CLAIMS;

/** The longest pause between two attempts at a report the origin did not take (doubling from `delayMs`). */
const MAX_BACKOFF_STEPS = 3;

type Claims = EdgeClaimsReport['claims'];

/**
 * Admission tokens this isolate issued, reported to the origin (`POST /edge/claims`, signed with the queue token
 * key) about once a second, so the admission controller counts admissions made at the edge as it counts its own
 * (issue 28: a fan the edge let in and the origin never heard of is not counted inside, and the window lets more in).
 *
 * - A report the origin did not take (a 5xx, 408 or 429, a timeout, no connection) is sent again, the same signed
 *   report (its id: the origin counts it once, should an attempt that timed out have arrived), re-signed only as it
 *   nears its age limit, after 1, 2, 4, then 8 s, for as long as it takes. Only a 4xx other than those (the origin
 *   refuses the report as such: a secret that differs) drops it: sending it again would not help.
 * - A report carries at most EDGE_REPORT_MAX_CLAIMS; more pending are sent in as many reports, one after the other.
 * - Reports never hold up a fan's answer (waitUntil).
 */
export class ClaimsReporter {
  private pending: Claims = [];
  private flushing: Promise<void> | undefined;
  /** When the flush last made progress (epoch ms): a flush the runtime stopped (its waitUntil cut) is replaced. */
  private beatAt = 0;
  /** Admissions not reported: past EDGE_PENDING_MAX_CLAIMS, or refused by the origin as such. */
  dropped = 0;

  constructor(private readonly o: { originUrl: string; key: Promise<TokenKey>; delayMs?: number; timeoutMs: number }) {}

  add(queueId: string, accountId: string, waitUntil: WaitUntil): void {
    if (this.pending.length < EDGE_PENDING_MAX_CLAIMS) this.pending.push({ queueId, accountId });
    else this.dropped++;
    const stalled = Date.now() - this.beatAt > 2 * (this.delayMs() * 2 ** MAX_BACKOFF_STEPS + this.o.timeoutMs);
    if (!this.flushing || stalled) {
      this.beatAt = Date.now();
      const flushing = this.flush().finally(() => {
        if (this.flushing === flushing) this.flushing = undefined;
      });
      this.flushing = flushing;
    }
    waitUntil(this.flushing);
  }

  /** What is still to report (for tests and metrics). */
  get pendingCount(): number {
    return this.pending.length;
  }

  private delayMs(): number {
    return this.o.delayMs ?? 1000;
  }

  private async flush(): Promise<void> {
    await sleep(this.delayMs());
    let report: { claims: Claims; signed: string; at: number } | undefined;
    let failures = 0;
    while (report || this.pending.length > 0) {
      this.beatAt = Date.now();
      report ??= { claims: this.pending.splice(0, EDGE_REPORT_MAX_CLAIMS), signed: '', at: 0 };
      const now = Date.now();
      if (now - report.at > EDGE_REPORT_MAX_AGE_MS / 2)
        report = { ...report, signed: await signClaimsReport(await this.o.key, report.claims, now), at: now };
      const outcome = await this.send(report.signed);
      if (outcome === 'retry') {
        await sleep(this.delayMs() * 2 ** Math.min(failures++, MAX_BACKOFF_STEPS));
        continue;
      }
      if (outcome === 'refused') this.dropped += report.claims.length;
      report = undefined;
      failures = 0;
      // A full report's worth pending: the next goes at once; otherwise the next beat gathers what comes meanwhile.
      if (this.pending.length < EDGE_REPORT_MAX_CLAIMS) await sleep(this.delayMs());
    }
  }

  private async send(report: string): Promise<'taken' | 'retry' | 'refused'> {
    try {
      const res = await fetch(`${this.o.originUrl}/edge/claims`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ report }),
        signal: AbortSignal.timeout(this.o.timeoutMs),
      });
      await res.body?.cancel();
      if (res.ok) return 'taken';
      return res.status >= 500 || res.status === 408 || res.status === 429 ? 'retry' : 'refused';
    } catch {
      return 'retry';
    }
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
