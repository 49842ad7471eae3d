import type { Db, Trx } from '../db/connect.js';
import { notFound } from '../errors.js';
import { getInventoryCounts } from '../inventory/inventory.service.js';
import { cohortPositions, fairnessDescription, verifyCommitment, type FairnessMode } from '../queue/fairness.js';
import { formatDuration, formatInstant } from '../words/time.js';
import { SETTING_WORDS } from '../words/audit.js';
import * as repo from './audit.repository.js';

// The public fairness audit (rules 1 and 10 in docs/architecture.md): re-deriving every pre-open position from the
// published data alone, and the publishable summary of an on-sale.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One account of the published pre-open join list. */
export interface PublishedJoin {
  /** SHA-256 hex of `<event id><account id>`: a fan can find themselves, nobody else can be named. */
  account: string;
  joinIndex: number;
}

/** Everything the fairness audit needs, all of it public once the seed is revealed. */
export interface PublishedCohort {
  eventId: string;
  fairnessMode: string;
  seedCommitment: string;
  /** Null until the reveal at the open. */
  seed: string | null;
  seedRevealedAt: Date | null;
  /** Null until the cohort is sealed at the open. */
  cohortSize: number | null;
  joins: PublishedJoin[];
}

export interface AuditCheck {
  name: 'seed_revealed' | 'commitment' | 'cohort_sealed' | 'join_list' | 'permutation' | 'positions';
  ok: boolean;
  detail: string;
}

export interface QueueAuditResult {
  ok: boolean;
  checks: AuditCheck[];
  /** Every published account's recomputed position, by join index. Empty when the seed is not revealed yet. */
  positions: { account: string; joinIndex: number; position: number }[];
  cohortSize: number | null;
  /** Positions of the cohort that belong to no published account (a repeated join uses up a join number). */
  unheldPositions: number;
}

async function eventExists(db: Db | Trx, eventId: string): Promise<repo.PublicQueueRow> {
  const row = UUID.test(eventId) ? await repo.findPublicQueue(db, eventId) : undefined;
  if (!row) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
  return row;
}

/** The published pre-open join list: account pseudonyms with their join indexes, by join index. */
export async function publishedJoinList(db: Db | Trx, eventId: string): Promise<PublishedJoin[]> {
  await eventExists(db, eventId);
  return (await repo.findPreopenJoins(db, eventId)).map((r) => ({ account: r.account, joinIndex: r.join_index }));
}

/** The public data of an event's fairness audit: commitment, seed (once revealed), cohort size and join list. */
export async function publishedCohort(db: Db | Trx, eventId: string): Promise<PublishedCohort> {
  const q = await eventExists(db, eventId);
  return {
    eventId,
    fairnessMode: q.fairness_mode,
    seedCommitment: q.seed_commitment,
    seed: q.seed,
    seedRevealedAt: q.seed_revealed_at,
    cohortSize: q.cohort_size,
    joins: (await repo.findPreopenJoins(db, eventId)).map((r) => ({ account: r.account, joinIndex: r.join_index })),
  };
}

/**
 * Verifies a published cohort from its data alone (no database): the revealed seed hashes to the commitment
 * published before the open; the cohort is sealed; every published join index is a distinct integer inside the
 * cohort and no account appears twice; the keyed permutation of join indexes 0..n-1 gives each position 1..n
 * exactly once; so every account holds a distinct position. Returns each account's recomputed position.
 */
export async function verifyPublishedCohort(c: PublishedCohort): Promise<QueueAuditResult> {
  const checks: AuditCheck[] = [];
  const done = (positions: QueueAuditResult['positions'] = [], unheldPositions = 0): QueueAuditResult => ({
    ok: checks.every((k) => k.ok),
    checks,
    positions,
    cohortSize: c.cohortSize,
    unheldPositions,
  });

  if (c.seed === null) {
    checks.push({ name: 'seed_revealed', ok: false, detail: 'the seed has not been revealed yet (it is published at the open)' });
    return done();
  }
  checks.push({
    name: 'seed_revealed',
    ok: true,
    detail: `seed revealed${c.seedRevealedAt ? ` at ${c.seedRevealedAt.toISOString()}` : ''}`,
  });
  const committed = await verifyCommitment(c.seed, c.seedCommitment);
  checks.push({
    name: 'commitment',
    ok: committed,
    detail: committed
      ? 'SHA-256 of the revealed seed equals the commitment published before the open'
      : `SHA-256 of the revealed seed does not equal the published commitment ${c.seedCommitment}`,
  });
  if (c.cohortSize === null) {
    checks.push({ name: 'cohort_sealed', ok: false, detail: 'the pre-open cohort has not been sealed' });
    return done();
  }
  const n = c.cohortSize;
  checks.push({ name: 'cohort_sealed', ok: true, detail: `pre-open cohort of ${n} join numbers` });

  const seenIndex = new Set<number>();
  const seenAccount = new Set<string>();
  const problems: string[] = [];
  for (const j of c.joins) {
    if (!Number.isInteger(j.joinIndex) || j.joinIndex < 0 || j.joinIndex >= n)
      problems.push(`join index ${j.joinIndex} is outside 0..${n - 1}`);
    else if (seenIndex.has(j.joinIndex)) problems.push(`join index ${j.joinIndex} appears twice`);
    if (seenAccount.has(j.account)) problems.push(`account ${j.account} appears twice`);
    seenIndex.add(j.joinIndex);
    seenAccount.add(j.account);
  }
  checks.push({
    name: 'join_list',
    ok: problems.length === 0,
    detail:
      problems.length === 0
        ? `${c.joins.length} accounts, one join number each, all inside the cohort`
        : `${problems.length} problem(s): ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? '; ...' : ''}`,
  });

  let slots: Uint32Array;
  try {
    slots = n === 0 ? new Uint32Array(0) : await cohortPositions(c.seed, n);
  } catch (e) {
    checks.push({ name: 'permutation', ok: false, detail: `cannot compute the permutation: ${(e as Error).message}` });
    return done();
  }
  const used = new Uint8Array(n);
  let repeated = 0;
  for (const s of slots) {
    if (s >= n || used[s]) repeated++;
    else used[s] = 1;
  }
  checks.push({
    name: 'permutation',
    ok: repeated === 0,
    detail:
      repeated === 0
        ? `join numbers 0..${Math.max(0, n - 1)} map to positions 1..${n}, each exactly once`
        : `${repeated} positions are given twice or fall outside 1..${n}`,
  });

  const positions = c.joins
    .filter((j) => Number.isInteger(j.joinIndex) && j.joinIndex >= 0 && j.joinIndex < n)
    .map((j) => ({ account: j.account, joinIndex: j.joinIndex, position: slots[j.joinIndex]! + 1 }))
    .sort((a, b) => a.joinIndex - b.joinIndex);
  const distinct = new Set(positions.map((p) => p.position)).size;
  const unheld = n - distinct;
  const allPlaced = positions.length === c.joins.length && distinct === positions.length;
  checks.push({
    name: 'positions',
    ok: allPlaced,
    detail: allPlaced
      ? `every account holds a distinct position in 1..${n}` +
        (unheld > 0
          ? `; ${unheld} position(s) belong to join numbers no account holds (a repeated join uses up a number)`
          : '; every position is held exactly once')
      : `${c.joins.length - distinct} account(s) share a position or have none`,
  });
  return done(positions, unheld);
}

/**
 * Recomputes every pre-open position of the event from its public data only (the revealed seed, the
 * published commitment, the cohort size and the published join list) and checks them; see verifyPublishedCohort.
 * EVENT_NOT_FOUND for an unknown event.
 */
export async function verifyQueueAudit(db: Db | Trx, eventId: string): Promise<QueueAuditResult> {
  return verifyPublishedCohort(await publishedCohort(db, eventId));
}

/**
 * The public data of a presale tier's own queue (its commitment, seed, cohort and join list, pseudonyms keyed by
 * the tier's queue id), as publishedCohort gives the event's. EVENT_NOT_FOUND / TIER_NOT_FOUND (field `tier`).
 */
export async function publishedTierCohort(db: Db | Trx, eventId: string, tier: string): Promise<PublishedCohort> {
  await eventExists(db, eventId);
  const q = await repo.findPublicTierQueue(db, eventId, tier);
  if (!q) throw notFound('TIER_NOT_FOUND', `event ${eventId} has no presale tier ${tier}`, 'tier');
  return {
    eventId: q.event_id,
    fairnessMode: q.fairness_mode,
    seedCommitment: q.seed_commitment,
    seed: q.seed,
    seedRevealedAt: q.seed_revealed_at,
    cohortSize: q.cohort_size,
    joins: (await repo.findPreopenJoins(db, q.event_id)).map((r) => ({ account: r.account, joinIndex: r.join_index })),
  };
}

/**
 * Every queue of an event audited from its public data: the event's own (the general sale) and each presale
 * tier's, each with its own seed and cohort (a tier whose queue has not opened yet fails `seed_revealed`).
 */
export async function verifyEventQueues(db: Db | Trx, eventId: string): Promise<{ tier: string | null; result: QueueAuditResult }[]> {
  const out = [{ tier: null as string | null, result: await verifyQueueAudit(db, eventId) }];
  for (const tier of await repo.findPresaleTiers(db, eventId))
    out.push({ tier, result: await verifyPublishedCohort(await publishedTierCohort(db, eventId, tier)) });
  return out;
}

/** The publishable summary of an on-sale, as data. Times are ISO 8601 (UTC). */
export interface AuditSummaryJson {
  eventId: string;
  eventName: string;
  venueName: string;
  onsaleAt: string;
  startsAt: string;
  generatedAt: string;
  fairness: {
    mode: string;
    description: string;
    seedCommitment: string;
    seed: string | null;
    seedRevealedAt: string | null;
    cohortSize: number | null;
    sealedAt: string | null;
    howToVerify: string;
  };
  admissions: {
    admittedThrough: number;
    totalPositionsAdvanced: number;
    totalAdmissionTokensIssued: number;
    perMinute: { minute: string; positionsAdvanced: number; admissionTokensIssued: number; ratePerMin: number }[];
  };
  pauses: {
    pausedAt: string;
    pausedBy: string;
    reason: string;
    /** What the operator chose to tell the public about this pause (null: nothing). */
    publicNote: string | null;
    resumedAt: string | null;
    resumedBy: string | null;
    pausedSeconds: number | null;
    reasonUpdates?: { at: string; by: string; reason: string }[];
  }[];
  rateOverrides: { at: string; by: string; perMinute: number | null; previousPerMinute: number | null; reason: string | null }[];
  configurationChanges: { at: string; by: string; action: string; details: Record<string, unknown> }[];
  soldOutAt: string | null;
  inventory: { capacity: number; available: number; held: number; sold: number };
  /** The venue's time zone (the Markdown names its times in it). */
  timeZone: string;
}

/**
 * The publishable summary: what the public may read about an on-sale. Everything a fan needs to check the fairness
 * (mode, commitment, seed, cohort, admissions per minute, when the queue stopped and for how long, the sell-out), and
 * nothing private: no operator names or e-mails, no internal reasons, no configuration details; a pause carries only
 * the note its operator wrote for the public.
 */
export interface PublishedSummaryJson {
  eventId: string;
  eventName: string;
  venueName: string;
  timeZone: string;
  onsaleAt: string;
  startsAt: string;
  generatedAt: string;
  fairness: AuditSummaryJson['fairness'];
  admissions: AuditSummaryJson['admissions'];
  pauses: { pausedAt: string; resumedAt: string | null; pausedSeconds: number | null; note: string | null }[];
  rateChanges: { at: string; perMinute: number | null }[];
  /** What changed, in words (which settings), never who or the values. */
  configurationChanges: { at: string; change: string }[];
  soldOutAt: string | null;
  inventory: AuditSummaryJson['inventory'];
}

const CHANGE_WORDS: Record<string, string> = {
  'event.created': 'Event created',
  'event.fairness_signed_off': 'Fairness mode signed off by the promoter',
  'event.fairness_signoff_superseded': 'Fairness sign-off withdrawn (the mode changed)',
  'event.organisation_assigned': 'Promoter assigned',
};

/** The operator's complete summary with everything private taken out (see PublishedSummaryJson). Pure. */
export function publishedSummary(s: AuditSummaryJson): PublishedSummaryJson {
  return {
    eventId: s.eventId,
    eventName: s.eventName,
    venueName: s.venueName,
    timeZone: s.timeZone,
    onsaleAt: s.onsaleAt,
    startsAt: s.startsAt,
    generatedAt: s.generatedAt,
    fairness: s.fairness,
    admissions: s.admissions,
    pauses: s.pauses.map((p) => ({ pausedAt: p.pausedAt, resumedAt: p.resumedAt, pausedSeconds: p.pausedSeconds, note: p.publicNote })),
    rateChanges: s.rateOverrides.map((o) => ({ at: o.at, perMinute: o.perMinute })),
    configurationChanges: s.configurationChanges.map((c) => ({ at: c.at, change: changeWords(c.action, c.details) })),
    soldOutAt: s.soldOutAt,
    inventory: s.inventory,
  };
}

function changeWords(action: string, details: Record<string, unknown>): string {
  if (action === 'event.updated' && Array.isArray(details.changes)) {
    const settings = (details.changes as { setting?: string }[]).map((c) => SETTING_WORDS[c.setting ?? ''] ?? c.setting ?? 'a setting');
    return `Configuration changed: ${settings.join(', ')}`;
  }
  return CHANGE_WORDS[action] ?? 'Configuration changed';
}

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/**
 * A publishable summary of the event's on-sale: the fairness mode in plain words, the seed commitment, its
 * reveal and the seed, the cohort size, admissions per minute, every pause (who, why, when, for how long), every
 * rate override, configuration changes, and the sell-out time; as JSON and as Markdown.
 */
export async function auditSummary(
  db: Db | Trx,
  eventId: string,
): Promise<{ json: AuditSummaryJson; markdown: string; published: { json: PublishedSummaryJson; markdown: string } }> {
  const q = await eventExists(db, eventId);
  const [minutes, entries, counts] = await Promise.all([
    repo.findAdmissionMinutes(db, eventId),
    repo.findAuditEntries(db, eventId, ['queue.paused', 'queue.resumed', 'queue.rate_override'], ['event.']),
    getInventoryCounts(db, eventId, q.capacity),
  ]);

  const pauses: AuditSummaryJson['pauses'] = [];
  const rateOverrides: AuditSummaryJson['rateOverrides'] = [];
  const configurationChanges: AuditSummaryJson['configurationChanges'] = [];
  let open: AuditSummaryJson['pauses'][number] | undefined;
  for (const a of entries) {
    const d = a.details ?? {};
    if (a.action === 'queue.paused') {
      const reason = str(d.reason) ?? '';
      if (open) {
        (open.reasonUpdates ??= []).push({ at: a.at.toISOString(), by: a.actor, reason });
        if (str(d.publicNote)) open.publicNote = str(d.publicNote);
      } else
        pauses.push(
          (open = {
            pausedAt: a.at.toISOString(),
            pausedBy: a.actor,
            reason,
            publicNote: str(d.publicNote),
            resumedAt: null,
            resumedBy: null,
            pausedSeconds: null,
          }),
        );
    } else if (a.action === 'queue.resumed') {
      if (open) {
        open.resumedAt = a.at.toISOString();
        open.resumedBy = a.actor;
        open.pausedSeconds = Math.round((a.at.getTime() - Date.parse(open.pausedAt)) / 1000);
        open = undefined;
      }
    } else if (a.action === 'queue.rate_override') {
      rateOverrides.push({
        at: a.at.toISOString(),
        by: a.actor,
        perMinute: num(d.perMinute),
        previousPerMinute: num(d.previousPerMinute),
        reason: str(d.reason),
      });
    } else {
      configurationChanges.push({ at: a.at.toISOString(), by: a.actor, action: a.action, details: d });
    }
  }

  const mode = q.fairness_mode as FairnessMode;
  const json: AuditSummaryJson = {
    eventId,
    eventName: q.name,
    venueName: q.venue_name,
    onsaleAt: q.onsale_at.toISOString(),
    startsAt: q.starts_at.toISOString(),
    generatedAt: new Date().toISOString(),
    fairness: {
      mode,
      description: fairnessDescription(mode),
      seedCommitment: q.seed_commitment,
      seed: q.seed,
      seedRevealedAt: iso(q.seed_revealed_at),
      cohortSize: q.cohort_size,
      sealedAt: iso(q.sealed_at),
      howToVerify: `npm run onsale -- audit:verify ${eventId} (or follow the published verification recipe by hand)`,
    },
    admissions: {
      admittedThrough: Number(q.admitted_through),
      totalPositionsAdvanced: minutes.reduce((a, m) => a + m.watermark_advanced, 0),
      totalAdmissionTokensIssued: minutes.reduce((a, m) => a + m.admission_tokens_issued, 0),
      perMinute: minutes.map((m) => ({
        minute: m.minute.toISOString(),
        positionsAdvanced: m.watermark_advanced,
        admissionTokensIssued: m.admission_tokens_issued,
        ratePerMin: m.rate_per_min,
      })),
    },
    pauses,
    rateOverrides,
    configurationChanges,
    soldOutAt: iso(q.sold_out_at),
    inventory: { capacity: counts.capacity, available: counts.available, held: counts.held, sold: counts.sold },
    timeZone: q.time_zone,
  };
  const published = publishedSummary(json);
  return { json, markdown: summaryMarkdown(json), published: { json: published, markdown: publishedMarkdown(published) } };
}

/** A table cell: no line breaks, pipes escaped. */
const cell = (v: unknown): string => {
  if (v === null || v === undefined || v === '') return '-';
  const text =
    typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' ? String(v) : JSON.stringify(v);
  return text.replace(/\s+/g, ' ').replace(/\|/g, '\\|');
};
const table = (head: string[], rows: unknown[][]): string =>
  [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');

function summaryMarkdown(s: AuditSummaryJson): string {
  const f = s.fairness;
  const out: string[] = [
    `# On-sale summary: ${s.eventName}`,
    '',
    `${s.venueName}. On sale from ${s.onsaleAt}; the event starts ${s.startsAt}. Event id \`${s.eventId}\`. Generated ${s.generatedAt}.`,
    '',
    '## How the queue was ordered',
    '',
    `Mode: \`${f.mode}\`.`,
    '',
    f.description,
    '',
    table(
      ['', ''],
      [
        ['Seed commitment (published before the open)', `\`${f.seedCommitment}\``],
        ['Seed', f.seed ? `\`${f.seed}\`` : 'not revealed yet (published at the open)'],
        ['Seed revealed at', f.seedRevealedAt],
        ['Pre-open cohort sealed at', f.sealedAt],
        ['Pre-open cohort size', f.cohortSize],
      ],
    ),
    '',
    `To check every position: ${f.howToVerify}.`,
    '',
    '## Admissions per minute',
    '',
    `Admitted through position ${s.admissions.admittedThrough}: ${s.admissions.totalPositionsAdvanced} positions advanced, ${s.admissions.totalAdmissionTokensIssued} admission tokens issued.`,
    '',
  ];
  out.push(
    s.admissions.perMinute.length === 0
      ? 'No admissions yet.'
      : table(
          ['Minute (UTC)', 'Positions advanced', 'Admission tokens issued', 'Rate (admits/min)'],
          s.admissions.perMinute.map((m) => [m.minute, m.positionsAdvanced, m.admissionTokensIssued, Math.round(m.ratePerMin * 10) / 10]),
        ),
    '',
    '## Pauses',
    '',
    s.pauses.length === 0
      ? 'The queue was never paused.'
      : table(
          ['Paused at', 'By', 'Reason', 'Resumed at', 'By', 'Paused for (s)'],
          s.pauses.map((p) => [
            p.pausedAt,
            p.pausedBy,
            [p.reason, ...(p.reasonUpdates ?? []).map((u) => `${u.at} ${u.by}: ${u.reason}`)].join('; then '),
            p.resumedAt ?? 'still paused',
            p.resumedBy,
            p.pausedSeconds,
          ]),
        ),
    '',
    '## Admission rate overrides',
    '',
    s.rateOverrides.length === 0
      ? 'The admission rate was never overridden; it followed the plan.'
      : table(
          ['At', 'By', 'Rate (admits/min)', 'Previous', 'Reason'],
          s.rateOverrides.map((o) => [o.at, o.by, o.perMinute ?? 'off (back to the plan)', o.previousPerMinute ?? 'plan', o.reason]),
        ),
    '',
    '## Configuration changes',
    '',
    s.configurationChanges.length === 0
      ? 'None recorded.'
      : table(
          ['At', 'By', 'Change'],
          s.configurationChanges.map((c) => [c.at, c.by, c.action]),
        ),
    '',
    '## Sell-out',
    '',
    s.soldOutAt
      ? `Sold out at ${s.soldOutAt} (no seat available and none held).`
      : `Not sold out: ${s.inventory.available} available, ${s.inventory.held} held, ${s.inventory.sold} sold of ${s.inventory.capacity}.`,
    '',
  );
  return out.join('\n');
}

/** The publishable summary as Markdown: times in the venue's zone, named; nothing private (see PublishedSummaryJson). */
export function publishedMarkdown(s: PublishedSummaryJson): string {
  const f = s.fairness;
  const at = (t: string | null) => (t ? formatInstant(t, s.timeZone) : '-');
  const out: string[] = [
    `# On-sale summary: ${s.eventName}`,
    '',
    `${s.venueName}. On sale from ${at(s.onsaleAt)}; the show starts ${at(s.startsAt)}. Times are the venue's (${s.timeZone}). Generated ${at(s.generatedAt)}.`,
    '',
    '## How the queue was ordered',
    '',
    f.description,
    '',
    table(
      ['', ''],
      [
        ['Seed commitment (published before the open)', `\`${f.seedCommitment}\``],
        ['Seed', f.seed ? `\`${f.seed}\`` : 'not revealed yet (published at the open)'],
        ['Seed revealed at', at(f.seedRevealedAt)],
        ['Pre-open cohort sealed at', at(f.sealedAt)],
        ['Pre-open cohort size', f.cohortSize],
      ],
    ),
    '',
    `Anyone can check every position: ${f.howToVerify}.`,
    '',
    '## Admissions per minute',
    '',
    `Admitted through position ${s.admissions.admittedThrough}: ${s.admissions.totalPositionsAdvanced} positions advanced, ${s.admissions.totalAdmissionTokensIssued} admission tokens issued.`,
    '',
    s.admissions.perMinute.length === 0
      ? 'No admissions yet.'
      : table(
          [`Minute (${s.timeZone})`, 'Positions advanced', 'Admission tokens issued', 'Rate (admits/min)'],
          s.admissions.perMinute.map((m) => [
            at(m.minute),
            m.positionsAdvanced,
            m.admissionTokensIssued,
            Math.round(m.ratePerMin * 10) / 10,
          ]),
        ),
    '',
    '## When the queue stopped',
    '',
    s.pauses.length === 0
      ? 'The queue was never paused.'
      : table(
          ['Paused at', 'Resumed at', 'For', 'Note'],
          s.pauses.map((p) => [
            at(p.pausedAt),
            p.resumedAt ? at(p.resumedAt) : 'still paused',
            p.pausedSeconds === null ? '-' : formatDuration(p.pausedSeconds),
            p.note,
          ]),
        ),
    '',
    '## Admission rate changes',
    '',
    s.rateChanges.length === 0
      ? 'The admission rate followed the plan throughout.'
      : table(
          ['At', 'Rate (admits/min)'],
          s.rateChanges.map((r) => [at(r.at), r.perMinute ?? 'back to the plan']),
        ),
    '',
    '## Configuration changes',
    '',
    s.configurationChanges.length === 0
      ? 'None recorded.'
      : table(
          ['At', 'Change'],
          s.configurationChanges.map((c) => [at(c.at), c.change]),
        ),
    '',
    '## Sell-out',
    '',
    s.soldOutAt
      ? `Sold out at ${at(s.soldOutAt)} (no seat available and none held).`
      : `Not sold out: ${s.inventory.available} available, ${s.inventory.held} held, ${s.inventory.sold} sold of ${s.inventory.capacity}.`,
    '',
  ];
  return out.join('\n');
}
