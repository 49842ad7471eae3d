import type { Db, Trx } from '../db/connect.js';
import { getEvent } from '../events/events.service.js';
import { conflict } from '../errors.js';
import { verifyCommitment } from '../queue/fairness.js';
import { runDraw, targetRequestedSeats, type DrawResult } from './draw.js';
import * as repo from './lottery.repository.js';

// The lottery's public audit: re-deriving the winners from the published data alone (the revealed seed and the
// published registration list) and comparing them with the winners the draw recorded.

/** Everything published about a lottery once drawn (GET /events/:id/lottery, all pages). */
export interface PublishedLottery {
  eventId: string;
  seedCommitment: string;
  seed: string | null;
  drawnAt: Date | null;
  onsaleAtMs: number;
  seatsOffered: number;
  expectedConversion: number;
  cohorts: number;
  cohortMinutes: number;
  /** The target the draw recorded (null before the draw). */
  targetRequestedSeats: number | null;
  /** Pseudonymous accounts; rank and cohort are set for the recorded winners. */
  registrations: { account: string; sequence: number; quantity: number; rank: number | null; cohort: number | null }[];
}

export interface LotteryAuditCheck {
  name: 'seed_revealed' | 'commitment' | 'registration_list' | 'sizing' | 'winners' | 'cohorts';
  ok: boolean;
  detail: string;
}

export interface LotteryAuditResult {
  ok: boolean;
  checks: LotteryAuditCheck[];
  registrations: number;
  /** The recomputed winners (empty before the draw or when the list cannot be drawn). */
  winners: { account: string; rank: number; cohort: number; quantity: number }[];
}

/** The published data of an event's lottery, read from the database (every page of the list). */
export async function publishedLottery(db: Db | Trx, eventId: string): Promise<PublishedLottery> {
  const event = await getEvent(db, eventId);
  const lottery = await repo.findLottery(db, event.id);
  if (!lottery)
    throw conflict('NOT_A_LOTTERY_EVENT', `event ${event.id} has no registration lottery`, { fairnessMode: event.fairnessMode });
  const drawn = lottery.drawn_at !== null;
  return {
    eventId: event.id,
    seedCommitment: lottery.seed_commitment,
    seed: drawn ? lottery.seed_hex : null,
    drawnAt: lottery.drawn_at,
    onsaleAtMs: event.onsaleAt.getTime(),
    seatsOffered: lottery.seats_offered ?? event.capacity,
    expectedConversion: lottery.expected_conversion,
    cohorts: lottery.cohorts,
    cohortMinutes: lottery.cohort_minutes,
    targetRequestedSeats: lottery.target_requested_seats,
    registrations: await repo.findPublishedRegistrations(db, event.id, null),
  };
}

/**
 * Verifies a published lottery from its data alone (no database): the revealed seed hashes to the commitment; the
 * registration list is dense (sequences 0..n-1), one per account; the recorded target is floor(seats /
 * conversion); the winners recomputed by runDraw are exactly the recorded winners, with the same ranks; and each
 * recorded cohort is the recomputed one.
 */
export async function verifyPublishedLottery(p: PublishedLottery): Promise<LotteryAuditResult> {
  const checks: LotteryAuditCheck[] = [];
  const done = (winners: LotteryAuditResult['winners'] = []): LotteryAuditResult => ({
    ok: checks.every((c) => c.ok),
    checks,
    registrations: p.registrations.length,
    winners,
  });
  if (p.seed === null) {
    checks.push({ name: 'seed_revealed', ok: false, detail: 'the lottery has not been drawn yet (the seed is revealed by the draw)' });
    return done();
  }
  checks.push({ name: 'seed_revealed', ok: true, detail: `seed revealed by the draw${p.drawnAt ? ` at ${p.drawnAt.toISOString()}` : ''}` });
  const committed = await verifyCommitment(p.seed, p.seedCommitment);
  checks.push({
    name: 'commitment',
    ok: committed,
    detail: committed
      ? 'SHA-256 of the revealed seed equals the commitment published before registration opened'
      : `SHA-256 of the revealed seed does not equal the published commitment ${p.seedCommitment}`,
  });

  let result: DrawResult;
  try {
    result = await runDraw({
      seedHex: p.seed,
      registrations: p.registrations,
      seatsOffered: p.seatsOffered,
      expectedConversion: p.expectedConversion,
      cohorts: p.cohorts,
      cohortMinutes: p.cohortMinutes,
      onsaleAtMs: p.onsaleAtMs,
    });
  } catch (e) {
    checks.push({ name: 'registration_list', ok: false, detail: `the registration list cannot be drawn: ${(e as Error).message}` });
    return done();
  }
  checks.push({
    name: 'registration_list',
    ok: true,
    detail: `${p.registrations.length} registrations, sequences 0..${p.registrations.length - 1} with no gaps, one per account`,
  });

  const target = targetRequestedSeats(p.seatsOffered, p.expectedConversion);
  const sized = p.targetRequestedSeats === target;
  checks.push({
    name: 'sizing',
    ok: sized,
    detail: sized
      ? `target floor(${p.seatsOffered} seats / ${p.expectedConversion}) = ${target} requested seats; ${result.invitedSeats} invited`
      : `the recorded target ${p.targetRequestedSeats} is not floor(${p.seatsOffered} / ${p.expectedConversion}) = ${target}`,
  });

  const recorded = new Map(p.registrations.filter((r) => r.rank !== null).map((r) => [r.account, r]));
  const mismatched: string[] = [];
  for (const w of result.winners) {
    const r = recorded.get(w.account);
    if (!r) mismatched.push(`${w.account.slice(0, 12)}… (rank ${w.rank}) should have won`);
    else if (r.rank !== w.rank) mismatched.push(`${w.account.slice(0, 12)}… recorded rank ${r.rank}, recomputed ${w.rank}`);
  }
  const recomputed = new Set(result.winners.map((w) => w.account));
  for (const r of recorded.values())
    if (!recomputed.has(r.account)) mismatched.push(`${r.account.slice(0, 12)}… (rank ${r.rank}) won but should not have`);
  checks.push({
    name: 'winners',
    ok: mismatched.length === 0,
    detail:
      mismatched.length === 0
        ? `the ${result.winners.length} recorded winners are exactly the recomputed winners, in the same draw order`
        : `${mismatched.length} difference(s): ${mismatched.slice(0, 5).join('; ')}${mismatched.length > 5 ? '; ...' : ''}`,
  });

  const wrongCohort = result.winners.filter((w) => {
    const r = recorded.get(w.account);
    return r !== undefined && r.cohort !== w.cohort;
  }).length;
  checks.push({
    name: 'cohorts',
    ok: wrongCohort === 0,
    detail:
      wrongCohort === 0
        ? `every winner is in the recomputed cohort (${p.cohorts} cohorts of ${p.cohortMinutes} min from the on-sale)`
        : `${wrongCohort} winner(s) in the wrong cohort`,
  });
  return done(result.winners.map((w) => ({ account: w.account, rank: w.rank, cohort: w.cohort, quantity: w.quantity })));
}

/** Re-derives an event's lottery winners from its public data and compares them with the recorded winners. */
export async function verifyLotteryAudit(db: Db | Trx, eventId: string): Promise<LotteryAuditResult> {
  return verifyPublishedLottery(await publishedLottery(db, eventId));
}
