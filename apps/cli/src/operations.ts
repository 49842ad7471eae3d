import { DomainError } from '@onsale/shared';
import {
  auditSummary,
  pauseQueue,
  publishedTierCohort,
  resumeQueue,
  setRateOverride,
  verifyEventQueues,
  verifyPublishedCohort,
  type QueueControlState,
} from '@onsale/shared/admission';
import { withDatabase, type Io } from './commands.js';
import { CliError, UsageError } from './errors.js';

// War-room commands: pause, resume and the rate override (the same domain functions the console calls), and
// the public fairness audit.

const json = (v: unknown) => JSON.stringify(v, null, 2);
const show = (s: QueueControlState) => json(s);

export async function queuePause(
  databaseUrl: string | undefined,
  eventId: string,
  opts: { reason: string; actor: string; tier?: string; publicNote?: string },
  io: Io,
): Promise<void> {
  io.out(show(await withDatabase(databaseUrl, (db) => pauseQueue(db, eventId, opts))));
}

export async function queueResume(
  databaseUrl: string | undefined,
  eventId: string,
  opts: { actor: string; reason?: string; tier?: string },
  io: Io,
): Promise<void> {
  io.out(show(await withDatabase(databaseUrl, (db) => resumeQueue(db, eventId, opts))));
}

/** `<perMinute|off>` as the domain wants it: a whole number, or null for off. Anything else is a bad command line. */
export function parseRate(raw: string): number | null {
  if (raw.toLowerCase() === 'off') return null;
  if (!/^\d+$/.test(raw))
    throw new UsageError(`queue:rate: <perMinute> must be a whole number of admits per minute or "off"; got ${JSON.stringify(raw)}`);
  return Number(raw);
}

export async function queueRate(
  databaseUrl: string | undefined,
  eventId: string,
  perMinute: number | null,
  opts: { actor: string; reason?: string; tier?: string },
  io: Io,
): Promise<void> {
  try {
    io.out(show(await withDatabase(databaseUrl, (db) => setRateOverride(db, eventId, perMinute, opts))));
  } catch (e) {
    // A rate the domain refuses is a bad command line: name the argument.
    if (e instanceof DomainError && e.code === 'INVALID_RATE_OVERRIDE') throw new UsageError(`queue:rate: <perMinute>: ${e.message}`);
    throw e;
  }
}

/**
 * Recomputes every pre-open position from the published data (revealed seed, commitment, cohort size, join
 * list) and prints each check; a failed check is `error AUDIT_FAILED` and exit status 1.
 */
export async function auditVerify(databaseUrl: string | undefined, eventId: string, io: Io, opts: { tier?: string } = {}): Promise<void> {
  const audit = await withDatabase(databaseUrl, async (db) => {
    // A registration lottery is audited by re-deriving its draw (see lottery.ts).
    const { isLotteryEvent, verifyLotteryAudit } = await import('@onsale/shared/lottery');
    if (await isLotteryEvent(db, eventId)) return { kind: 'lottery' as const, result: await verifyLotteryAudit(db, eventId) };
    // Every queue of the event: its own (the general sale) and each presale tier's; or the one tier asked for.
    const queues =
      opts.tier === undefined
        ? await verifyEventQueues(db, eventId)
        : [{ tier: opts.tier, result: await verifyPublishedCohort(await publishedTierCohort(db, eventId, opts.tier)) }];
    return { kind: 'queue' as const, queues };
  });
  if (audit.kind === 'lottery') return (await import('./lottery.js')).printLotteryAudit(eventId, audit.result, io);
  const failed: string[] = [];
  let total = 0;
  for (const { tier, result } of audit.queues) {
    const which = tier === null ? `event ${eventId}` : `presale tier ${tier} of event ${eventId}`;
    io.out(`fairness audit of ${which}: pre-open cohort of ${result.cohortSize ?? 'unknown size'}, ${result.positions.length} accounts`);
    const width = Math.max(...result.checks.map((c) => c.name.length));
    for (const c of result.checks) io.out(`  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.name.padEnd(width)}  ${c.detail}`);
    failed.push(...result.checks.filter((c) => !c.ok).map((c) => (tier === null ? c.name : `${tier}:${c.name}`)));
    total += result.checks.length;
  }
  if (failed.length > 0) throw new CliError('AUDIT_FAILED', `${failed.length} of ${total} checks failed: ${failed.join(', ')}`);
  const queues = audit.queues.length === 1 ? '' : ` in ${audit.queues.length} queues`;
  io.out(`verified: all ${total} checks passed${queues}; every pre-open position was re-derived from the published data`);
}

export const SUMMARY_FORMATS = ['markdown', 'json'] as const;
export type SummaryFormat = (typeof SUMMARY_FORMATS)[number];

/** The publishable summary (nothing private), or with `operator` the complete export (who, why, configuration details). */
export async function auditSummaryCommand(
  databaseUrl: string | undefined,
  eventId: string,
  format: SummaryFormat,
  io: Io,
  opts: { operator?: boolean } = {},
): Promise<void> {
  const summary = await withDatabase(databaseUrl, (db) => auditSummary(db, eventId));
  const chosen = opts.operator ? summary : summary.published;
  io.out(format === 'json' ? json(chosen.json) : chosen.markdown);
}
