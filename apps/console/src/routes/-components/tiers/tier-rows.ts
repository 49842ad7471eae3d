// The presale tiers as the event page and the war room show them: the rows' types and their words.
import type { RouterOutputs } from '@onsale/bff/root';
import { ACCESS_LABELS } from '../TiersEditor';

/** A tier as the BFF sends it (the event page's and the war room's are the same shape). */
export type TierRow = RouterOutputs['events']['byId']['tiers'][number];
/** A tier's queue figures, as the war-room snapshot carries them (the event page has none). */
export type TierQueue = NonNullable<RouterOutputs['warRoom']['snapshot']['tiers'][number]['queue']>;
/** A tier row, with its queue's figures on the war room. */
export type TierPanelRow = TierRow & { queue?: TierQueue | null };

export const PHASE_LOOK: Record<TierRow['phase'], { label: string; tone: string }> = {
  UPCOMING: { label: 'NOT OPEN', tone: '' },
  SELLING: { label: 'SELLING', tone: 'wr-badge-ok' },
  CLOSED: { label: 'CLOSED, ROLL DUE', tone: 'wr-badge-warn' },
  ROLLED: { label: 'ROLLED FORWARD', tone: 'wr-badge-done' },
};

export const accessText = (t: TierRow) =>
  t.access === 'CARD_BIN' && t.binRanges
    ? `${ACCESS_LABELS.CARD_BIN}: ${t.binRanges.map((r) => (r.from === r.to ? r.from : `${r.from}–${r.to}`)).join(', ')}`
    : ACCESS_LABELS[t.access];

export const OFFLINE_TITLE = 'Cannot reach the server: the tier controls are off until it answers again.';
