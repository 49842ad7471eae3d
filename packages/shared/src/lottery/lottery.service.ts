import type { Db, Trx } from '../db/connect.js';
import { DomainError, conflict, invalid, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import { getEvent, type OnsaleEvent } from '../events/events.service.js';
import { insertAudit } from '../audit/index.js';
import { findLiveSignoff } from '../events/signoff.service.js';
import { DEVICE_ID_RULE, directAdmissionClaims, hashDevice, isDeviceId, signToken, type TokenKey } from '../queue/edge.js';
import { commitSeed, fairnessDescription, generateSeed } from '../queue/fairness.js';
import { insertJoins, type JoinItem } from '../waitlist/waitlist.service.js';
import { deliverToChannels, inboxChannel, webhookChannel, type NotificationChannel } from '../notify/channel.js';
import { cohortWindow, LOTTERY_VERIFICATION_RECIPE, runDraw, targetRequestedSeats } from './draw.js';
import { InvitationError, peekInvitation, signInvitation, verifyInvitation, type InvitationClaims } from './invitation.js';
import type { LotterySettings } from '../events/lottery.schema.js';
import * as repo from './lottery.repository.js';

// Registration + lottery (fairness mode REGISTRATION_LOTTERY): a registration window, one registration per
// account; a draw under the seed committed at the event's creation; winners buy in staggered cohorts with signed
// invitation codes; everyone else goes to the listing's waitlist. Functions that write take the caller's
// transaction.

/** Published registration list pages. */
export const MAX_REGISTRATION_PAGE = 10_000;

/** A fan's registration as they see it. */
export interface LotteryRegistration {
  eventId: string;
  /** Dense 0-based number in registration order (the draw permutes these; it confers no advantage). */
  sequence: number;
  quantity: number;
  registeredAt: Date;
}

/** A fan's lottery state: registered and waiting for the draw, a winner with an invitation, or not drawn. */
export type MyLottery =
  | { state: 'REGISTERED'; registration: LotteryRegistration; drawAfter: Date }
  | {
      state: 'WON';
      registration: LotteryRegistration;
      invitation: { code: string; rank: number; cohort: number; windowOpensAt: Date; windowClosesAt: Date; redeem: string };
    }
  | { state: 'NOT_DRAWN'; registration: LotteryRegistration; waitlist: { listingId: string; join: string } };

interface LotteryOf {
  event: OnsaleEvent;
  lottery: repo.LotteryRow;
}

function notALottery(event: OnsaleEvent): DomainError {
  return conflict('NOT_A_LOTTERY_EVENT', `event ${event.id} sells through its ${event.fairnessMode} queue, not a registration lottery`, {
    fairnessMode: event.fairnessMode,
    queue: `/events/${event.id}/queue`,
  });
}

/** The event and its lottery (locked when `lock`), or EVENT_NOT_FOUND / NOT_A_LOTTERY_EVENT. */
async function lotteryOf(db: Db | Trx, eventId: string, lock = false): Promise<LotteryOf> {
  const event = await getEvent(db, eventId);
  if (event.fairnessMode !== 'REGISTRATION_LOTTERY') throw notALottery(event);
  const lottery = lock ? await repo.lockLottery(db as Trx, event.id) : await repo.findLottery(db, event.id);
  if (!lottery) throw conflict('LOTTERY_NOT_CONFIGURED', `event ${event.id} is a registration lottery but has no lottery settings`);
  return { event, lottery };
}

const toRegistration = (r: repo.RegistrationRow): LotteryRegistration => ({
  eventId: r.event_id,
  sequence: r.sequence,
  quantity: r.quantity,
  registeredAt: r.registered_at,
});

/** Whether the event has a registration lottery (false for an unknown or malformed id). */
export async function isLotteryEvent(db: Db | Trx, eventId: string): Promise<boolean> {
  return isUuid(eventId) && (await repo.findLottery(db, eventId)) !== undefined;
}

/**
 * Gives a new REGISTRATION_LOTTERY event its lottery: the settings and the event's seed, whose SHA-256 commitment
 * is public from now on (the seed itself is revealed by the draw). The seed is the one initQueue drew for the
 * event, so /fairness and /lottery publish one commitment (a lottery event's queue takes no joins, so the seed
 * orders nothing else; the controller's reveal at the open comes after registration has closed). Audited. Runs in
 * createEvent's transaction, after initQueue.
 */
export async function createLottery(
  trx: Trx,
  eventId: string,
  settings: LotterySettings,
  actor = 'system',
): Promise<{ seedCommitment: string }> {
  const queueSeed = await repo.findQueueSeed(trx, eventId);
  const seed = queueSeed?.seed_hex ?? generateSeed();
  const seedCommitment = queueSeed?.seed_commitment ?? (await commitSeed(seed));
  await repo.insertLottery(trx, {
    event_id: eventId,
    registration_opens_at: settings.registrationOpensAt,
    registration_closes_at: settings.registrationClosesAt,
    expected_conversion: settings.expectedConversion,
    cohorts: settings.cohorts,
    cohort_minutes: settings.cohortMinutes,
    seed_hex: seed,
    seed_commitment: seedCommitment,
  });
  await insertAudit(trx, {
    actor,
    action: 'lottery.seed_committed',
    eventId,
    details: { seedCommitment, registrationOpensAt: settings.registrationOpensAt, registrationClosesAt: settings.registrationClosesAt },
  });
  return { seedCommitment };
}

/** A lottery's settings as the event file writes them (what the console's edit form reads back). */
export function lotterySettingsOf(row: repo.LotteryRow): LotterySettings {
  return {
    registrationOpensAt: row.registration_opens_at.toISOString(),
    registrationClosesAt: row.registration_closes_at.toISOString(),
    expectedConversion: row.expected_conversion,
    cohorts: row.cohorts,
    cohortMinutes: row.cohort_minutes,
  };
}

/**
 * Brings an event's lottery in line with an edit of its event file, in the edit's transaction (the change rules
 * have allowed it: nobody has registered and nothing is drawn). Settings and no lottery: one is created with the
 * event's seed and commitment, as at creation (audited `lottery.seed_committed`); settings and a lottery: its
 * settings change, the seed and commitment stay; no settings (the event leaves REGISTRATION_LOTTERY): the lottery
 * is removed. The edit's own audit entry (`event.updated`) carries the change.
 */
export async function alignLottery(
  trx: Trx,
  eventId: string,
  settings: LotterySettings | undefined,
  actor: string,
): Promise<'created' | 'updated' | 'removed' | 'unchanged'> {
  const current = await repo.lockLottery(trx, eventId);
  if (settings && !current) {
    await createLottery(trx, eventId, settings, actor);
    return 'created';
  }
  if (!current) return 'unchanged';
  if (current.drawn_at !== null || current.registration_count > 0)
    throw conflict(
      current.drawn_at !== null ? 'LOTTERY_DRAWN' : 'REGISTRATION_OPENED',
      'fans have registered for this lottery: its settings can no longer change',
      { field: 'lottery' },
    );
  if (!settings) {
    await repo.deleteLottery(trx, eventId);
    return 'removed';
  }
  await repo.updateLotterySettings(trx, eventId, settings);
  return 'updated';
}

/**
 * Registers an account for an event's lottery, or returns its registration (one per account: a repeat is the same
 * registration, `created` false; a repeat with another quantity changes the quantity while the window is open,
 * keeping the sequence). Registrations take the lottery row's lock, so sequence numbers are dense and a
 * registration never lands after the draw. Refusals write nothing: NOT_A_LOTTERY_EVENT, QUANTITY_ABOVE_LIMIT
 * (field quantity), REGISTRATION_NOT_OPEN, REGISTRATION_CLOSED.
 */
export async function registerForLottery(
  trx: Trx,
  input: { eventId: string; accountId: string; quantity: number; now: Date },
): Promise<{ registration: LotteryRegistration; created: boolean }> {
  const { event, lottery } = await lotteryOf(trx, input.eventId, true);
  if (!Number.isInteger(input.quantity) || input.quantity < 1)
    throw invalid('INVALID_QUANTITY', 'quantity must be a whole number of at least 1', 'quantity');
  if (input.quantity > event.perAccountSeatLimit)
    throw invalid('QUANTITY_ABOVE_LIMIT', `at most ${event.perAccountSeatLimit} seats per account for this event`, 'quantity', {
      limit: event.perAccountSeatLimit,
    });
  const now = input.now.getTime();
  if (lottery.drawn_at !== null || now >= lottery.registration_closes_at.getTime())
    throw conflict('REGISTRATION_CLOSED', `registration closed at ${lottery.registration_closes_at.toISOString()}`, {
      closesAt: lottery.registration_closes_at.toISOString(),
      lottery: `/events/${event.id}/lottery`,
    });
  if (now < lottery.registration_opens_at.getTime())
    throw conflict('REGISTRATION_NOT_OPEN', `registration opens at ${lottery.registration_opens_at.toISOString()}`, {
      opensAt: lottery.registration_opens_at.toISOString(),
    });
  const existing = await repo.findRegistration(trx, event.id, input.accountId);
  if (existing) {
    const row =
      existing.quantity === input.quantity
        ? existing
        : await repo.updateRegistrationQuantity(trx, event.id, input.accountId, input.quantity, input.now);
    return { registration: toRegistration(row), created: false };
  }
  const row = await repo.insertRegistration(trx, event.id, input.accountId, lottery.registration_count, input.quantity, input.now);
  return { registration: toRegistration(row), created: true };
}

function invitationClaims(w: repo.WinnerRow): InvitationClaims {
  return {
    kind: 'invitation',
    eventId: w.event_id,
    accountId: w.account_id,
    rank: w.rank,
    cohort: w.cohort,
    // Whole seconds inside the recorded window: the code is never valid where the window is not.
    nbf: Math.ceil(w.window_opens_at.getTime() / 1000),
    exp: Math.floor(w.window_closes_at.getTime() / 1000),
  };
}

/** A fan's own lottery state (NOT_REGISTERED 404 when they have not registered). A winner's code is re-derived, never stored. */
export async function myLottery(db: Db, tokenKey: TokenKey, eventId: string, accountId: string): Promise<MyLottery> {
  const { event, lottery } = await lotteryOf(db, eventId);
  const reg = await repo.findRegistration(db, event.id, accountId);
  if (!reg) throw notFound('NOT_REGISTERED', 'this account has not registered for this lottery', 'id');
  const registration = toRegistration(reg);
  if (lottery.drawn_at === null) return { state: 'REGISTERED', registration, drawAfter: lottery.registration_closes_at };
  const w = await repo.findWinner(db, event.id, accountId);
  if (!w)
    return { state: 'NOT_DRAWN', registration, waitlist: { listingId: event.listingId, join: `/listings/${event.listingId}/waitlist` } };
  return {
    state: 'WON',
    registration,
    invitation: {
      code: await signInvitation(tokenKey, invitationClaims(w)),
      rank: w.rank,
      cohort: w.cohort,
      windowOpensAt: w.window_opens_at,
      windowClosesAt: w.window_closes_at,
      redeem: `/events/${event.id}/lottery/admission`,
    },
  };
}

/**
 * Redeems a winner's invitation code for an admission token (the waiting room's own, bound to the account and
 * this device), within the cohort's window only. The token lives ADMISSION_TOKEN_TTL_SECONDS or until the window
 * closes, whichever is sooner; redeeming again in the window gives a fresh one. Writes nothing. Refusals name the
 * field `invitationCode`: INVITATION_MALFORMED 400, INVITATION_FORGED / WRONG_EVENT / WRONG_ACCOUNT /
 * REVOKED 403, INVITATION_NOT_YET_VALID 409 (with opensAt), INVITATION_EXPIRED 410.
 */
export async function redeemInvitation(
  db: Db,
  tokenKey: TokenKey,
  input: { eventId: string; accountId: string; deviceId: string; invitationCode: string; now: number },
): Promise<{ admissionToken: string; expiresAt: Date; position: number; cohort: number; windowClosesAt: Date }> {
  if (!isDeviceId(input.deviceId)) throw invalid('INVALID_DEVICE_ID', DEVICE_ID_RULE, 'x-device-id');
  const { event } = await lotteryOf(db, input.eventId);
  let claims: InvitationClaims;
  try {
    claims = await verifyInvitation(tokenKey, input.invitationCode, { eventId: event.id, accountId: input.accountId, now: input.now });
  } catch (e) {
    if (!(e instanceof InvitationError)) throw e;
    const window = e.code === 'INVITATION_NOT_YET_VALID' || e.code === 'INVITATION_EXPIRED' ? windowOf(input.invitationCode) : {};
    throw new DomainError(e.kind, e.code, e.message, { field: 'invitationCode', ...window });
  }
  const w = await repo.findWinner(db, event.id, input.accountId);
  if (!w || w.rank !== claims.rank || w.cohort !== claims.cohort)
    throw new DomainError('forbidden', 'INVITATION_REVOKED', 'the invitation code does not match a winner of this draw', {
      field: 'invitationCode',
    });
  const admission = directAdmissionClaims({
    eventId: event.id,
    accountId: input.accountId,
    deviceHash: await hashDevice(input.deviceId, input.accountId),
    position: claims.rank,
    nowMs: input.now,
    notAfterSeconds: claims.exp,
  });
  return {
    admissionToken: await signToken(tokenKey, admission),
    expiresAt: new Date(admission.exp * 1000),
    position: claims.rank,
    cohort: claims.cohort,
    windowClosesAt: new Date(claims.exp * 1000),
  };
}

/** The window of a code whose signature held (only called then): for the refusal's opensAt / closesAt. */
function windowOf(code: string): { opensAt?: string; closesAt?: string } {
  const c = peekInvitation(code);
  return c ? { opensAt: new Date(c.nbf * 1000).toISOString(), closesAt: new Date(c.exp * 1000).toISOString() } : {};
}

/** What the draw did (or, run again, what it had done). */
export interface DrawSummary {
  eventId: string;
  /** True when the draw had already run: nothing was written this time. */
  alreadyDrawn: boolean;
  drawnAt: Date;
  drawnBy: string;
  seed: string;
  seedCommitment: string;
  registrations: number;
  seatsOffered: number;
  expectedConversion: number;
  targetRequestedSeats: number;
  invitedSeats: number;
  winners: number;
  nonWinners: number;
  cohorts: { cohort: number; winners: number; seats: number; opensAt: Date; closesAt: Date }[];
}

async function recordedDraw(db: Db | Trx, event: OnsaleEvent, lottery: repo.LotteryRow, alreadyDrawn: boolean): Promise<DrawSummary> {
  const cohorts = await repo.winnersPerCohort(db, event.id);
  return {
    eventId: event.id,
    alreadyDrawn,
    drawnAt: lottery.drawn_at!,
    drawnBy: lottery.drawn_by!,
    seed: lottery.seed_hex,
    seedCommitment: lottery.seed_commitment,
    registrations: lottery.registration_count,
    seatsOffered: lottery.seats_offered!,
    expectedConversion: lottery.expected_conversion,
    targetRequestedSeats: lottery.target_requested_seats!,
    invitedSeats: lottery.invited_seats!,
    winners: lottery.winners_count!,
    nonWinners: lottery.registration_count - lottery.winners_count!,
    cohorts: cohorts.map((c) => ({
      cohort: c.cohort,
      winners: c.winners,
      seats: c.seats,
      opensAt: c.window_opens_at,
      closesAt: c.window_closes_at,
    })),
  };
}

/** Notifications handed to the delivery channels per call, as the waitlist's fan-out hands them. */
const NOTIFY_CHUNK = 500;

/**
 * Runs the draw in the caller's transaction: reveals the seed, writes the winners with their cohorts (runDraw over
 * the registration list), puts every non-winner on the listing's waitlist for this performance with their
 * requested quantity (a fan already on it keeps their own entry and place), tells every registered fan
 * (LOTTERY_WON with their cohort and purchase window, LOTTERY_NOT_DRAWN with the waitlist) through the
 * notification channels (by default the inbox and the operator's webhooks, whose deliveries are jobs enqueued in
 * this transaction), and audits it. Idempotent: once drawn, it returns the recorded draw and writes nothing
 * (`alreadyDrawn`). DRAW_TOO_EARLY before registration closes; FAIRNESS_NOT_SIGNED_OFF (conflict, field
 * `fairnessMode`) while the event's fairness mode has no live sign-off.
 */
export async function drawLottery(
  trx: Trx,
  eventId: string,
  opts: { actor: string; now?: Date; channels?: readonly NotificationChannel[] },
): Promise<DrawSummary> {
  const { event, lottery } = await lotteryOf(trx, eventId, true);
  if (lottery.drawn_at !== null) return recordedDraw(trx, event, lottery, true);
  const now = opts.now ?? new Date();
  if (now.getTime() < lottery.registration_closes_at.getTime())
    throw conflict(
      'DRAW_TOO_EARLY',
      `registration is open until ${lottery.registration_closes_at.toISOString()}; the draw runs after it closes`,
      {
        closesAt: lottery.registration_closes_at.toISOString(),
      },
    );
  // The draw is the lottery's open: an event whose fairness mode is not signed off does not open.
  const signOff = await findLiveSignoff(trx, event.id);
  if (!signOff || signOff.fairness_mode !== event.fairnessMode)
    throw conflict(
      'FAIRNESS_NOT_SIGNED_OFF',
      "the fairness mode of this event has not been signed off, so the draw cannot run: a promoter or an admin signs it off on the event's Configuration page first",
      { field: 'fairnessMode' },
    );
  const registrations = await repo.findRegistrations(trx, event.id);
  const result = await runDraw({
    seedHex: lottery.seed_hex,
    registrations: registrations.map((r) => ({ account: r.account_id, sequence: r.sequence, quantity: r.quantity })),
    seatsOffered: event.capacity,
    expectedConversion: lottery.expected_conversion,
    cohorts: lottery.cohorts,
    cohortMinutes: lottery.cohort_minutes,
    onsaleAtMs: event.onsaleAt.getTime(),
  });
  await repo.insertWinners(
    trx,
    event.id,
    result.winners.map((w) => ({
      account_id: w.account,
      rank: w.rank,
      sequence: w.sequence,
      quantity: w.quantity,
      cohort: w.cohort,
      window_opens_at: new Date(w.windowOpensAtMs),
      window_closes_at: new Date(w.windowClosesAtMs),
    })),
  );
  await repo.markDrawn(trx, event.id, {
    drawnAt: now,
    drawnBy: opts.actor,
    seatsOffered: event.capacity,
    targetRequestedSeats: result.targetRequestedSeats,
    winnersCount: result.winners.length,
    invitedSeats: result.invitedSeats,
  });

  // Non-winners to the waitlist of this performance, with their quantity.
  const date = event.startsAt.toISOString().slice(0, 10);
  const ttlSeconds = await repo.listingTtlSeconds(trx, event.listingId);
  let waitlisted = 0;
  let alreadyWaitlisted = 0;
  const CHUNK = 5000;
  for (let i = 0; i < result.nonWinners.length; i += CHUNK) {
    const part = result.nonWinners.slice(i, i + CHUNK);
    const present = await repo.accountsOnWaitlist(
      trx,
      event.listingId,
      part.map((r) => r.account),
    );
    const items: JoinItem[] = part
      .filter((r) => !present.has(r.account))
      .map((r) => ({
        listingId: event.listingId,
        accountId: r.account,
        ttlSeconds,
        criteria: { dateFrom: date, dateTo: date, maxPriceCents: null, quantity: r.quantity, sections: null, priceLevels: null },
      }));
    if (items.length > 0) await insertJoins(trx, items);
    waitlisted += items.length;
    alreadyWaitlisted += present.size;
  }

  // Everyone registered hears the outcome, in this transaction: a rolled-back draw tells nobody.
  const notificationIds = await repo.insertLotteryNotifications(trx, event.id, event.listingId);
  const channels = opts.channels ?? [inboxChannel(), webhookChannel()];
  for (let i = 0; i < notificationIds.length; i += NOTIFY_CHUNK)
    await deliverToChannels(trx, channels, {
      listingId: event.listingId,
      availabilityId: null,
      notificationIds: notificationIds.slice(i, i + NOTIFY_CHUNK),
    });

  await insertAudit(trx, {
    actor: opts.actor,
    action: 'lottery.drawn',
    eventId: event.id,
    details: {
      seed: lottery.seed_hex,
      seedCommitment: lottery.seed_commitment,
      registrations: registrations.length,
      seatsOffered: event.capacity,
      expectedConversion: lottery.expected_conversion,
      targetRequestedSeats: result.targetRequestedSeats,
      invitedSeats: result.invitedSeats,
      winners: result.winners.length,
      waitlisted,
      alreadyWaitlisted,
      notified: notificationIds.length,
    },
  });
  const drawn = (await repo.findLottery(trx, event.id))!;
  return recordedDraw(trx, event, drawn, false);
}

/** The public facts of an event's lottery (GET /events/:id/lottery): everything the audit needs, the list in pages. */
export interface LotteryFacts {
  eventId: string;
  mode: 'REGISTRATION_LOTTERY';
  description: string;
  onsaleAt: Date;
  registrationOpensAt: Date;
  registrationClosesAt: Date;
  expectedConversion: number;
  cohorts: number;
  cohortMinutes: number;
  seatsOffered: number;
  targetRequestedSeats: number;
  seedCommitment: string;
  /** Null until the draw. */
  seed: string | null;
  drawnAt: Date | null;
  registrationCount: number;
  winnersCount: number | null;
  invitedSeats: number | null;
  cohortWindows: { cohort: number; opensAt: Date; closesAt: Date }[];
  /** The published registration list (from sequence `from`): after the draw each carries its rank and cohort if it won. */
  registrations: { account: string; sequence: number; quantity: number; won: boolean | null; rank: number | null; cohort: number | null }[];
  /** The next page's `from`, or null at the end. */
  nextFrom: number | null;
  verificationRecipe: string;
}

export async function lotteryFacts(db: Db, eventId: string, page: { from?: number; limit?: number } = {}): Promise<LotteryFacts> {
  const { event, lottery } = await lotteryOf(db, eventId);
  const from = page.from ?? 0;
  const limit = Math.min(page.limit ?? 1000, MAX_REGISTRATION_PAGE);
  const rows = await repo.findPublishedRegistrations(db, event.id, { from, limit: limit + 1 });
  const drawn = lottery.drawn_at !== null;
  return {
    eventId: event.id,
    mode: 'REGISTRATION_LOTTERY',
    description: fairnessDescription('REGISTRATION_LOTTERY'),
    ...publicSettings(event, lottery),
    drawnAt: lottery.drawn_at,
    registrationCount: lottery.registration_count,
    winnersCount: lottery.winners_count,
    invitedSeats: lottery.invited_seats,
    cohortWindows: Array.from({ length: lottery.cohorts }, (_, k) => {
      const w = cohortWindow(event.onsaleAt.getTime(), lottery.cohort_minutes, k);
      return { cohort: k, opensAt: new Date(w.opensAtMs), closesAt: new Date(w.closesAtMs) };
    }),
    registrations: rows.slice(0, limit).map((r) => ({
      account: r.account,
      sequence: r.sequence,
      quantity: r.quantity,
      won: drawn ? r.rank !== null : null,
      rank: r.rank,
      cohort: r.cohort,
    })),
    nextFrom: rows.length > limit ? rows[limit]!.sequence : null,
    verificationRecipe: LOTTERY_VERIFICATION_RECIPE,
  };
}

/** A lottery's public settings and sizing, with the seed once drawn (the public facts and the console share them). */
function publicSettings(event: OnsaleEvent, lottery: Awaited<ReturnType<typeof lotteryOf>>['lottery']) {
  return {
    onsaleAt: event.onsaleAt,
    registrationOpensAt: lottery.registration_opens_at,
    registrationClosesAt: lottery.registration_closes_at,
    expectedConversion: lottery.expected_conversion,
    cohorts: lottery.cohorts,
    cohortMinutes: lottery.cohort_minutes,
    seatsOffered: lottery.seats_offered ?? event.capacity,
    targetRequestedSeats: lottery.target_requested_seats ?? targetRequestedSeats(event.capacity, lottery.expected_conversion),
    seedCommitment: lottery.seed_commitment,
    seed: lottery.drawn_at !== null ? lottery.seed_hex : null,
  };
}

/** The console's lottery summary: settings, counts and, once drawn, the draw per cohort. */
export async function lotterySummary(db: Db | Trx, eventId: string) {
  const { event, lottery } = await lotteryOf(db, eventId);
  return {
    eventId: event.id,
    listingId: event.listingId,
    name: event.name,
    ...publicSettings(event, lottery),
    registrationCount: lottery.registration_count,
    draw: lottery.drawn_at !== null ? await recordedDraw(db, event, lottery, true) : null,
  };
}

// What other domains may use of this domain's repository (eslint-rules/onsale.js, onsale/domain-borders).
export { findLottery, lockLottery, type LotteryRow } from './lottery.repository.js';
