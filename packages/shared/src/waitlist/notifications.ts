import type { Db } from '../db/connect.js';
import type { NotificationKind } from '../notify/notify.schema.js';
import type { ClaimTokens } from './claim-token.js';
import type { OfferStatus } from './waitlist.table.js';
import { findInboxRows, findNotificationRows, markNotificationsRead, type NotificationRow as Row } from './notifications.repository.js';

/** A notification as every channel shows it (the inbox, a webhook body, a future e-mail). */
export interface NotificationView {
  id: number;
  accountId: string;
  kind: NotificationKind;
  createdAt: Date;
  readAt: Date | null;
  listingId: string;
  listingName: string;
  eventId: string | null;
  eventName: string | null;
  startsAt: Date | null;
  message: string;
  /** What came back: per section, price, how many seats and the longest run of adjacent seats. */
  release: {
    availabilityId: number;
    /** The event's currency (ISO 4217): `priceCents` are its minor units. */
    currency: string;
    sections: { section: string; priceLevel: string; priceCents: number; seats: number; longestRun: number }[];
  } | null;
  /** OFFER: seats reserved for this fan until expiresAt. BROADCAST: a claim on the release, first come first served. */
  claim: {
    offerId: string | null;
    status: OfferStatus | 'OPEN';
    quantity: number | null;
    expiresAt: Date;
    claimToken: string | null;
  } | null;
  /**
   * A registration lottery's outcome (LOTTERY_WON, LOTTERY_NOT_DRAWN): a winner's rank and 0-based cohort with its
   * purchase window (the invitation code itself is at `links.lottery`); otherwise null.
   */
  lottery: { won: boolean; rank: number | null; cohort: number | null; windowOpensAt: Date | null; windowClosesAt: Date | null } | null;
  /** `lottery`: the fan's registration, where a winner's invitation code is (GET, signed in). */
  links: { claim: string | null; decline: string | null; event: string | null; waitlist: string; lottery: string | null };
}

/** Renders notifications by id (in id order: FIFO within a release), with their claim tokens derived, not stored. */
export async function renderNotifications(db: Db, tokens: ClaimTokens, ids: number[]): Promise<NotificationView[]> {
  if (ids.length === 0) return [];
  const rows = await findNotificationRows(db, ids);
  return rows.map((r) => toView(r, tokens));
}

/** A fan's inbox, newest first (fan-out on read: the rows were written once, at notification time). */
export async function inbox(
  db: Db,
  tokens: ClaimTokens,
  accountId: string,
  opts: { beforeId?: number; limit?: number } = {},
): Promise<NotificationView[]> {
  const rows = await findInboxRows(db, accountId, opts);
  return rows.map((r) => toView(r, tokens));
}

/** Marks a fan's notifications read, up to and including `upToId`. Returns how many changed. */
export async function markRead(db: Db, accountId: string, upToId: number): Promise<number> {
  return markNotificationsRead(db, accountId, upToId);
}

function toView(r: Row, tokens: ClaimTokens): NotificationView {
  const release = r.availability_id
    ? {
        availabilityId: Number(r.availability_id),
        currency: r.currency ?? 'USD',
        sections: (r.sections ?? []).map((s) => ({
          section: s.section,
          priceLevel: s.priceLevel,
          priceCents: s.priceCents,
          seats: s.seatIds.length,
          longestRun: s.longestRun,
        })),
      }
    : null;
  let claim: NotificationView['claim'] = null;
  if (r.kind === 'OFFER' && r.offer_id && r.offer_expires_at) {
    const open = r.offer_status === 'OPEN' && r.offer_expires_at.getTime() > Date.now();
    claim = {
      offerId: r.offer_id,
      status: r.offer_status!,
      quantity: r.offer_quantity,
      expiresAt: r.offer_expires_at,
      claimToken: open
        ? tokens.sign({ kind: 'offer', offerId: r.offer_id, accountId: r.account_id, exp: Math.floor(r.offer_expires_at.getTime() / 1000) })
        : null,
    };
  } else if (r.kind === 'BROADCAST' && r.av_created_at) {
    const expiresAt = new Date(r.av_created_at.getTime() + r.offer_ttl_seconds * 1000);
    claim = {
      offerId: null,
      status: 'OPEN',
      quantity: null,
      expiresAt,
      claimToken: tokens.sign({
        kind: 'broadcast',
        availabilityId: Number(r.availability_id),
        accountId: r.account_id,
        exp: Math.floor(expiresAt.getTime() / 1000),
      }),
    };
  }
  const what = r.event_name ? `${r.event_name}` : r.listing_name;
  const lotteryKind = r.kind === 'LOTTERY_WON' || r.kind === 'LOTTERY_NOT_DRAWN';
  const lottery: NotificationView['lottery'] = lotteryKind
    ? {
        won: r.kind === 'LOTTERY_WON',
        rank: r.lottery_rank,
        cohort: r.lottery_cohort,
        windowOpensAt: r.window_opens_at,
        windowClosesAt: r.window_closes_at,
      }
    : null;
  const message = messageOf(r, what);
  return {
    id: Number(r.id),
    accountId: r.account_id,
    kind: r.kind,
    createdAt: r.created_at,
    readAt: r.read_at,
    listingId: r.listing_id,
    listingName: r.listing_name,
    eventId: r.event_id,
    eventName: r.event_name,
    startsAt: r.starts_at,
    message,
    release,
    claim,
    lottery,
    links: {
      claim: claim?.claimToken ? '/waitlist/claims' : null,
      decline: r.kind === 'OFFER' && claim?.claimToken ? `/waitlist/offers/${r.offer_id}/decline` : null,
      event: r.event_id ? `/events/${r.event_id}` : null,
      waitlist: `/listings/${r.listing_id}/waitlist`,
      lottery: lotteryKind ? `/events/${r.event_id}/lottery/registration` : null,
    },
  };
}

/** The words every channel shows. */
function messageOf(r: Row, what: string): string {
  switch (r.kind) {
    case 'OFFER':
      return `Seats for ${what} are held for you until ${r.offer_expires_at?.toISOString()}: claim them or decline so the next fan can.`;
    case 'BROADCAST':
      return `Seats came back for ${what}. Everyone on the waitlist who matches has been told; the first to claim gets them.`;
    case 'ON_SALE':
      return `Seats matching your waitlist request are on sale again for ${what}.`;
    case 'OFFER_EXPIRED':
      return `Your offer for ${what} has lapsed; the seats went to the next fan. You are still on the waitlist.`;
    case 'LOTTERY_WON':
      return `You won the registration lottery for ${what}: you may buy in purchase window ${(r.lottery_cohort ?? 0) + 1} (cohort ${r.lottery_cohort}), from ${r.window_opens_at?.toISOString()} until ${r.window_closes_at?.toISOString()}. Your invitation code is with your registration.`;
    case 'LOTTERY_NOT_DRAWN':
      return `You were not drawn in the registration lottery for ${what}. You are on its waitlist and will be told if seats come back.`;
  }
}
