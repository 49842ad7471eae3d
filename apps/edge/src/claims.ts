import { EDGE_REPORT_MAX_CLAIMS, signClaimsReport, type EdgeClaimsReport } from '@onsale/shared/queue/edge-state';
import type { TokenKey } from '@onsale/shared/queue/edge';
import type { WaitUntil } from './state-cache.js';

/**
 * Admission tokens this isolate issued, reported to the origin (`POST /edge/claims`, signed with the queue token
 * key) about once a second, so the admission controller counts admissions made at the edge as it counts its own.
 * A report that fails is kept for the next one (bounded); reports never hold up a fan's answer (waitUntil).
 */
export class ClaimsReporter {
  private pending: EdgeClaimsReport['claims'] = [];
  private flushing: Promise<void> | undefined;

  constructor(private readonly o: { originUrl: string; key: Promise<TokenKey>; delayMs?: number; timeoutMs: number }) {}

  add(queueId: string, accountId: string, waitUntil: WaitUntil): void {
    if (this.pending.length < EDGE_REPORT_MAX_CLAIMS) this.pending.push({ queueId, accountId });
    if (!this.flushing) {
      this.flushing = this.flushSoon().finally(() => (this.flushing = undefined));
    }
    waitUntil(this.flushing);
  }

  private async flushSoon(): Promise<void> {
    for (let attempt = 0; attempt < 3 && this.pending.length > 0; attempt++) {
      await new Promise((r) => setTimeout(r, this.o.delayMs ?? 1000));
      const batch = this.pending;
      this.pending = [];
      try {
        const report = await signClaimsReport(await this.o.key, batch, Date.now());
        const res = await fetch(`${this.o.originUrl}/edge/claims`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ report }),
          signal: AbortSignal.timeout(this.o.timeoutMs),
        });
        await res.body?.cancel();
        // 4xx: the origin refused the report as such (a secret that differs); sending it again would not help.
        if (res.status >= 500) throw new Error(`origin answered ${res.status}`);
      } catch {
        this.pending = [...batch, ...this.pending].slice(0, EDGE_REPORT_MAX_CLAIMS);
      }
    }
  }
}
