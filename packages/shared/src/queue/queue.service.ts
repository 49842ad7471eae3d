import type { Db } from '../db/connect.js';
import { DomainError, invalid, notFound } from '../errors.js';
import type { EventCache } from '../allocations/event-cache.js';
import { admissionClaimsFor, DEVICE_ID_RULE, isDeviceId, signToken, type QueueTokenClaims, type TokenKey } from './edge.js';
import {
  answerStatusNow,
  openClaimsReport,
  placeMovedAway,
  EDGE_REPORT_MAX_AGE_MS,
  POSITION_MOVED_MESSAGE,
  type EdgeEventState,
  type StatusAnswer,
} from './edge-state.js';
import { BoundedCache, CachedTokenVerifier } from './token-cache.js';
import type { Metrics } from '../metrics/index.js';
import { fairnessDescription, VERIFICATION_RECIPE } from './fairness.js';
import { findEntry, moveEntryToDevice, requeueEntry, type JoinRow } from './queue.repository.js';
import { JoinBatcher } from './join-batcher.js';
import type { PublicQueueInfo, WatermarkStore } from './watermark-store.js';
import { AWAITING_SIGNOFF_MESSAGES } from '../events/signoff.service.js';
import { DEFAULT_FAN_LANGUAGE, type FanLanguage } from './copy.js';
import { admitWithAccessCode, assertTierJoinable, tierToJoin } from '../allocations/allocations.service.js';
import { assertNotBlocked } from '../events/blocks.js';

/** How often one place in line may move to another of its account's devices in one queue. */
export const MAX_PLACE_MOVES = 5;

/** What a join may name beyond the event: a presale tier (default: the general sale) and its access code. */
export interface JoinOptions {
  tier?: string;
  accessCode?: string;
  /** The language of the answer's words (the fan's Accept-Language); default English. */
  language?: FanLanguage;
}

/** A status with its words; when sold out, where to join the listing's waitlist (seats that come back go there). */
export type StatusWithCopy = StatusAnswer;

/** A status poll's answer: the status, and an admission token once admitted. */
export type StatusPoll = StatusWithCopy & { admissionToken?: string };

export interface JoinResult extends StatusWithCopy {
  queueToken: string;
  joinIndex: number;
  cohort: 'PREOPEN' | 'FIFO';
  created: boolean;
}

/**
 * The waiting room's origin side: joins (one position per account), status polls answered from memory, and
 * admission tokens. The status rule itself is the edge module's `computeStatus`, so an edge answers the same.
 */
export class QueueService {
  private readonly tokens: CachedTokenVerifier;
  private readonly joins: JoinBatcher;
  constructor(
    private readonly deps: {
      db: Db;
      events: EventCache;
      watermarks: WatermarkStore;
      tokenKey: TokenKey;
      verifier?: CachedTokenVerifier;
      metrics?: Metrics;
      now?: () => number;
    },
  ) {
    this.tokens = deps.verifier ?? new CachedTokenVerifier(deps.tokenKey);
    this.joins = new JoinBatcher(deps.db);
  }

  private now() {
    return (this.deps.now ?? Date.now)();
  }

  async join(accountId: string, eventId: string, deviceId: string, opts: JoinOptions = {}): Promise<JoinResult> {
    const language = opts.language ?? DEFAULT_FAN_LANGUAGE;
    if (!isDeviceId(deviceId)) throw invalid('INVALID_DEVICE_ID', DEVICE_ID_RULE, 'x-device-id');
    const { event, tiers, blockedAccounts } = await this.deps.events.get(eventId);
    assertNotBlocked(blockedAccounts, accountId);
    if (this.now() >= event.startsAt.getTime())
      throw new DomainError('conflict', 'EVENT_CLOSED', 'this event has started; its queue is closed');
    // A registration lottery has no open queue: fans register, and winners come in with their invitation codes.
    if (event.fairnessMode === 'REGISTRATION_LOTTERY')
      throw new DomainError(
        'conflict',
        'LOTTERY_REGISTRATION_REQUIRED',
        'this event sells through a registration lottery: register for the draw; winners buy with their invitation',
        {
          registration: `/events/${eventId}/lottery/registrations`,
          lottery: `/events/${eventId}/lottery`,
        },
      );
    // A presale tier has a queue of its own (its id); the general sale uses the event's.
    const tier = tierToJoin(tiers, opts.tier);
    const presale = tier && !tier.general ? tier : null;
    if (presale) assertTierJoinable(presale, this.now());
    if (tier) await admitWithAccessCode(this.deps.db, this.deps.tokenKey, tier, accountId, opts.accessCode, this.now());
    const queueId = presale?.id ?? eventId;
    const fairnessMode = tier?.fairnessMode ?? event.fairnessMode;
    const deviceHash = this.tokens.deviceHashNow(deviceId, accountId);
    const joined = await this.joins.join(queueId, accountId, deviceHash, fairnessMode === 'RANDOMIZED_PREOPEN_THEN_FIFO');
    if (!joined) throw new DomainError('unavailable', 'JOIN_RACE', 'please retry', { retryAfterSeconds: 1 });
    if (joined.created) this.deps.metrics?.queueJoined.inc({ event: eventId });
    // One place per account, on the device the fan last joined from: a join from another device takes the place there.
    const row = joined.device_hash === deviceHash ? joined : await this.movePlace(queueId, accountId, deviceHash, joined);
    const nowS = Math.floor(this.now() / 1000);
    // iat is when the fan took this place: a position cannot expire before its fan joined.
    const claimsFor = (joinIndex: number, cohort: 'PREOPEN' | 'FIFO', joinedAt: Date): QueueTokenClaims => ({
      kind: 'queue',
      eventId,
      accountId,
      deviceHash,
      joinIndex,
      cohort,
      ...(presale ? { queueId } : {}),
      ...(row.device_moves > 0 ? { moves: row.device_moves } : {}),
      iat: Math.min(nowS, Math.floor(joinedAt.getTime() / 1000)),
      exp: Math.max(nowS + 3600, Math.floor(event.startsAt.getTime() / 1000)),
    });
    let claims = claimsFor(row.join_index, row.cohort, row.joined_at);
    // The queue's facts are in memory once anyone polled or joined it: no promise then.
    const now = this.statusOfNow(claims, language);
    let { status } = now instanceof Promise ? await now : now;
    if (status.expired) {
      // Their turn came and went unused: a new place at the back of the line.
      const again = await requeueEntry(this.deps.db, queueId, accountId);
      if (!again) throw new DomainError('unavailable', 'JOIN_RACE', 'please retry', { retryAfterSeconds: 1 });
      claims = claimsFor(again.join_index, again.cohort, again.joined_at);
      ({ status } = await this.statusOf(claims, language));
    }
    const queueToken = await signToken(this.deps.tokenKey, claims);
    return { ...status, queueToken, joinIndex: claims.joinIndex, cohort: claims.cohort, created: joined.created };
  }

  /**
   * Moves an account's place to the device it now joins from (the place itself is kept: join index, cohort, when it
   * was taken). Of two devices taking it at once, one wins and the other tries again from the winner's. At most
   * MAX_PLACE_MOVES moves per place: past that, 409 PLACE_MOVE_LIMIT (a place that keeps hopping is not a fan
   * changing phones). This process learns of the move at once; others and the edges on their next refresh.
   */
  private async movePlace(queueId: string, accountId: string, deviceHash: string, current: JoinRow): Promise<JoinRow> {
    let row: JoinRow | undefined = current;
    // Each lost attempt is another device's move, and a place moves at most MAX_PLACE_MOVES times: this ends.
    for (let attempt = 0; attempt <= MAX_PLACE_MOVES && row; attempt++) {
      if (row.device_hash === deviceHash) return row;
      if (row.device_moves >= MAX_PLACE_MOVES)
        throw new DomainError(
          'conflict',
          'PLACE_MOVE_LIMIT',
          `this place in line has moved between devices ${MAX_PLACE_MOVES} times; continue on the device that has it`,
          { field: 'x-device-id', maxMoves: MAX_PLACE_MOVES },
        );
      const moved = await moveEntryToDevice(this.deps.db, queueId, accountId, row.device_hash, deviceHash, MAX_PLACE_MOVES);
      if (moved) {
        this.deps.watermarks.noteMove(queueId, moved.join_index, moved.device_moves);
        return moved;
      }
      row = await findEntry(this.deps.db, queueId, accountId);
    }
    throw new DomainError('unavailable', 'JOIN_RACE', 'please retry', { retryAfterSeconds: 1 });
  }

  /** A status poll: verifies the queue token and answers from memory; issues an admission token when admitted. */
  async status(
    eventId: string,
    queueToken: string,
    accountId: string,
    deviceId: string,
    language: FanLanguage = DEFAULT_FAN_LANGUAGE,
  ): Promise<StatusWithCopy & { admissionToken?: string }> {
    return this.statusNow(eventId, queueToken, accountId, deviceId, language);
  }

  /**
   * status without a promise for the common poll (a token verified before, the event's watermark in memory, no
   * admission token to sign): the hottest route answers it in one turn. Throws rather than rejects.
   */
  statusNow(
    eventId: string,
    queueToken: string,
    accountId: string,
    deviceId: string,
    language: FanLanguage = DEFAULT_FAN_LANGUAGE,
  ): StatusPoll | Promise<StatusPoll> {
    const claims = this.tokens.verifyQueueNow(queueToken, eventId, accountId, deviceId, this.now());
    if (claims instanceof Promise) return claims.then((c) => this.pollWith(eventId, queueToken, accountId, c, language));
    return this.pollWith(eventId, queueToken, accountId, claims, language);
  }

  private pollWith(
    eventId: string,
    queueToken: string,
    accountId: string,
    claims: QueueTokenClaims,
    language: FanLanguage,
  ): StatusPoll | Promise<StatusPoll> {
    const answered = this.statusOfNow(claims, language);
    if (answered instanceof Promise) return answered.then((a) => this.finishPoll(eventId, queueToken, accountId, claims, a));
    return this.finishPoll(eventId, queueToken, accountId, claims, answered);
  }

  private finishPoll(
    eventId: string,
    queueToken: string,
    accountId: string,
    claims: QueueTokenClaims,
    { status, info }: { status: StatusWithCopy; info: PublicQueueInfo },
  ): StatusPoll | Promise<StatusPoll> {
    if (status.expired)
      throw new DomainError(
        'gone',
        'POSITION_EXPIRED',
        'your turn came and passed unused; join the queue again for a new place at the back',
        {
          field: 'x-queue-token',
        },
      );
    const queueId = claims.queueId ?? eventId;
    if (status.state === 'SOLD_OUT') this.observeSoldOut(queueId, queueToken);
    if (!status.admit) return status;
    const admission = admissionClaimsFor(claims, status.position!, this.now(), info.tier ?? undefined);
    this.deps.watermarks.countClaim(queueId, accountId);
    return signToken(this.deps.tokenKey, admission).then((admissionToken) => ({ ...status, admissionToken }));
  }

  private readonly toldSoldOut = new BoundedCache<string, true>(200_000);
  private observeSoldOut(eventId: string, queueToken: string) {
    if (this.toldSoldOut.get(queueToken)) return;
    this.toldSoldOut.set(queueToken, true);
    const at = this.deps.watermarks.peek(eventId)?.soldOutAt;
    if (at) this.deps.metrics?.soldoutPropagation.observe(Math.max(0, this.now() - at) / 1000);
  }

  private async statusOf(
    claims: QueueTokenClaims,
    language: FanLanguage = DEFAULT_FAN_LANGUAGE,
  ): Promise<{ status: StatusWithCopy; info: PublicQueueInfo }> {
    return this.statusOfNow(claims, language);
  }

  /** The status and the queue's facts, without a promise when the queue's watermark is in memory (it is, once polled). */
  private statusOfNow(
    claims: QueueTokenClaims,
    language: FanLanguage,
  ): { status: StatusWithCopy; info: PublicQueueInfo } | Promise<{ status: StatusWithCopy; info: PublicQueueInfo }> {
    const queueId = claims.queueId ?? claims.eventId;
    const info = this.deps.watermarks.peek(queueId);
    if (info) return this.statusWith(claims, info, language);
    return this.deps.watermarks.get(queueId).then((loaded) => this.statusWith(claims, loaded, language));
  }

  private statusWith(
    claims: QueueTokenClaims,
    info: PublicQueueInfo | undefined,
    language: FanLanguage,
  ): { status: StatusWithCopy; info: PublicQueueInfo } | Promise<{ status: StatusWithCopy; info: PublicQueueInfo }> {
    if (!info || info.ownerEventId !== claims.eventId) throw notFound('EVENT_NOT_FOUND', `no event ${claims.eventId}`, 'id');
    if (placeMovedAway(claims, info))
      throw new DomainError('conflict', 'POSITION_MOVED', POSITION_MOVED_MESSAGE, { field: 'x-queue-token' });
    const answered = answerStatusNow(claims, info, this.now(), {}, language);
    if (answered instanceof Promise) return answered.then((status) => this.withSignOff(status, info, language));
    return this.withSignOff(answered, info, language);
  }

  private withSignOff(status: StatusWithCopy, info: PublicQueueInfo, language: FanLanguage) {
    // An event whose fairness mode is not signed off says so while fans wait (the origin's words; an edge shows the state's).
    if (info.awaitingSignOff && status.state === 'WAITING') status.message = AWAITING_SIGNOFF_MESSAGES[language];
    return { status, info };
  }

  /**
   * What an edge needs to answer this event's status polls and watermark reads on its own (GET
   * /events/:id/edge-state): every queue of the event, from memory as the status route reads them.
   */
  async edgeState(eventId: string): Promise<EdgeEventState> {
    const { tiers } = await this.deps.events.get(eventId);
    const queueIds = tiers.length > 0 ? tiers.map((t) => t.queueId) : [eventId];
    const queues: EdgeEventState['queues'] = [];
    for (const queueId of queueIds) {
      const info = await this.deps.watermarks.get(queueId);
      if (!info || info.ownerEventId !== eventId) continue;
      queues.push({
        queueId,
        watermark: info.watermark,
        copy: info.copy,
        copyByLanguage: info.copyByLanguage,
        listingId: info.listingId,
        tier: info.tier,
        tierName: info.tierName,
        closesAt: info.closesAt,
        ...(info.moves && info.moves.length > 0 ? { moves: info.moves } : {}),
      });
    }
    if (!queues.some((q) => q.queueId === eventId)) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'id');
    return {
      eventId,
      tiers: tiers.map((t) => ({ code: t.code, queueId: t.queueId, general: t.general })),
      queues,
      generatedAt: this.now(),
    };
  }

  private readonly edgeReports = new BoundedCache<string, number>(10_000);
  /**
   * Admission tokens an edge issued (a report signed with the queue token key): counted as the status route counts
   * its own, so the admission controller sees every admission. Each report counts once (by its id, in this process;
   * a report is refused once older than EDGE_REPORT_MAX_AGE_MS). Returns how many claims were counted.
   */
  async recordEdgeClaims(signed: string): Promise<number> {
    const report = await openClaimsReport(this.deps.tokenKey, signed, this.now());
    const seen = this.edgeReports.get(report.id);
    if (seen !== undefined && this.now() - seen < 2 * EDGE_REPORT_MAX_AGE_MS) return 0;
    this.edgeReports.set(report.id, this.now());
    for (const c of report.claims) this.deps.watermarks.countClaim(c.queueId, c.accountId);
    return report.claims.length;
  }

  /** The queue a tier sells through (the event's own without a tier, or for the general sale). */
  private async queueOf(eventId: string, tierCode: string | undefined) {
    const cached = await this.deps.events.get(eventId);
    const tier = tierToJoin(cached.tiers, tierCode);
    const presale = tier && !tier.general ? tier : null;
    const info = await this.deps.watermarks.get(presale?.id ?? eventId);
    if (!info) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'id');
    return { event: cached.event, tiers: cached.tiers, tier, presale, info };
  }

  /**
   * The public fairness facts of an event's queue (a presale tier's with `tierCode`): mode, plain words, the
   * commitment, and the seed once revealed; and the event's presale tiers, each with its window, access rule and queue.
   */
  async fairness(eventId: string, tierCode?: string) {
    const { event, tiers, tier, presale, info } = await this.queueOf(eventId, tierCode);
    const mode = tier?.fairnessMode ?? event.fairnessMode;
    return {
      eventId,
      ...(tier ? { tier: tier.code } : {}),
      mode,
      description: fairnessDescription(mode),
      onsaleAt: (presale?.opensAt ?? event.onsaleAt).toISOString(),
      seedCommitment: info.seedCommitment,
      seed: info.watermark.seedHex,
      cohortSize: info.watermark.cohortSize,
      verificationRecipe: VERIFICATION_RECIPE,
      ...(tiers.length > 0
        ? {
            tiers: tiers.map((t) => ({
              code: t.code,
              name: t.name,
              general: t.general,
              queueId: t.queueId,
              access: t.access,
              fairnessMode: t.fairnessMode,
              opensAt: t.opensAt.toISOString(),
              closesAt: t.closesAt?.toISOString() ?? null,
              rollsForwardAt: t.rollsForwardAt?.toISOString() ?? null,
              rollsInto: t.rollsInto,
            })),
          }
        : {}),
    };
  }

  async watermark(eventId: string, tierCode?: string) {
    return (await this.queueOf(eventId, tierCode)).info.watermark;
  }
}
