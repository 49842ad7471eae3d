import type { Db, Trx } from '../db/connect.js';
import { auditSummary, verifyQueueAudit, type AuditCheck, type AuditSummaryJson, type PublishedSummaryJson } from './audit.js';

// The console's fairness audit page: the publishable summary and the public verification (audit.ts, as the CLI's
// audit:summary and audit:verify use them), plus the position distribution of the pre-open cohort.

/** One bar of the histogram: positions `from`..`to`, split by when their holders joined. */
export interface PositionBucket {
  from: number;
  to: number;
  /** Holders who joined in the first half of the pre-open cohort (by join order). */
  earlyJoiners: number;
  /** Holders who joined in the second half. */
  lateJoiners: number;
}

/**
 * Where the pre-open cohort ended up. Under a fair draw joining early gives no advantage, so early and late
 * joiners spread evenly over every bucket and each tenth of the join order has a mean position near (n+1)/2.
 */
export interface PositionHistogram {
  cohortSize: number;
  accounts: number;
  buckets: PositionBucket[];
  meanPositionByJoinDecile: { decile: number; accounts: number; meanPosition: number }[];
  /** (n + 1) / 2: the mean position every decile should be near. */
  expectedMeanPosition: number;
}

/**
 * The position distribution of a cohort of `cohortSize` from each account's join index and recomputed position.
 * Pure. At most `bucketCount` buckets of equal width (the last may be narrower).
 */
export function positionHistogram(
  positions: { joinIndex: number; position: number }[],
  cohortSize: number,
  bucketCount = 20,
): PositionHistogram {
  const n = Math.max(0, cohortSize);
  const width = Math.max(1, Math.ceil(n / Math.max(1, bucketCount)));
  const buckets: PositionBucket[] = [];
  for (let from = 1; from <= n; from += width) buckets.push({ from, to: Math.min(n, from + width - 1), earlyJoiners: 0, lateJoiners: 0 });
  const byJoin = [...positions].sort((a, b) => a.joinIndex - b.joinIndex);
  const half = Math.ceil(byJoin.length / 2);
  const deciles = Array.from({ length: 10 }, () => ({ sum: 0, count: 0 }));
  byJoin.forEach((p, rank) => {
    const bucket = buckets[Math.floor((p.position - 1) / width)];
    if (bucket) {
      if (rank < half) bucket.earlyJoiners++;
      else bucket.lateJoiners++;
    }
    const d = deciles[Math.min(9, Math.floor((rank * 10) / byJoin.length))]!;
    d.sum += p.position;
    d.count++;
  });
  return {
    cohortSize: n,
    accounts: byJoin.length,
    buckets,
    meanPositionByJoinDecile: deciles
      .map((d, i) => ({ decile: i + 1, accounts: d.count, meanPosition: d.count === 0 ? 0 : Math.round((d.sum / d.count) * 10) / 10 }))
      .filter((d) => d.accounts > 0),
    expectedMeanPosition: (n + 1) / 2,
  };
}

/** Everything the fairness audit page shows about one event. */
export interface FairnessAuditReport {
  /** The operator's complete summary (the CLI's `audit:summary --operator`): names, reasons, configuration details. */
  summary: AuditSummaryJson;
  markdown: string;
  /** The publishable summary (the CLI's audit:summary): nothing private. */
  published: { json: PublishedSummaryJson; markdown: string };
  /** The public verification (the CLI's audit:verify): every check, with why it passed or failed. */
  verification: { ok: boolean; checks: AuditCheck[]; unheldPositions: number };
  /** Null until the seed is revealed and the cohort sealed (positions cannot be recomputed before). */
  histogram: PositionHistogram | null;
}

/** The fairness audit of an event. EVENT_NOT_FOUND for an unknown one. */
export async function fairnessAuditReport(db: Db | Trx, eventId: string): Promise<FairnessAuditReport> {
  const { json, markdown, published } = await auditSummary(db, eventId);
  const verified = await verifyQueueAudit(db, eventId);
  const revealed = json.fairness.seed !== null && verified.cohortSize !== null;
  return {
    summary: json,
    markdown,
    published,
    verification: { ok: verified.ok, checks: verified.checks, unheldPositions: verified.unheldPositions },
    histogram: revealed ? positionHistogram(verified.positions, verified.cohortSize ?? 0) : null,
  };
}
