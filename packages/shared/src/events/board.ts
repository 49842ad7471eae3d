// The events board's rule: what state each event is in, in words an operator reads, and the order
// that puts what needs attention first. Pure: the console and the BFF use it alike.

/** An event's state on the board. */
export type BoardState = 'LIVE' | 'PAUSED' | 'OPENING_SOON' | 'SCHEDULED' | 'DRAFT' | 'SOLD_OUT' | 'ENDED';

/** How soon before its open an event counts as "opening in N min". */
export const OPENING_SOON_MS = 60 * 60 * 1000;

export interface BoardFacts {
  onsaleAt: Date | string;
  startsAt: Date | string;
  /** The fairness mode has a live sign-off (an unsigned event does not open). */
  signedOff: boolean;
  paused: boolean;
  soldOut: boolean;
}

const ms = (t: Date | string) => (t instanceof Date ? t.getTime() : Date.parse(t));

/**
 * The state: ENDED once the show has started; SOLD_OUT once sold out; before the open DRAFT while the fairness mode
 * is not signed off, OPENING_SOON within the hour, else SCHEDULED; after the open PAUSED while paused, DRAFT when it
 * could not open for want of a sign-off, else LIVE.
 */
export function boardState(f: BoardFacts, now: number): BoardState {
  if (now >= ms(f.startsAt)) return 'ENDED';
  if (f.soldOut) return 'SOLD_OUT';
  const opensIn = ms(f.onsaleAt) - now;
  if (opensIn > 0) return !f.signedOff ? 'DRAFT' : opensIn <= OPENING_SOON_MS ? 'OPENING_SOON' : 'SCHEDULED';
  if (f.paused) return 'PAUSED';
  return f.signedOff ? 'LIVE' : 'DRAFT';
}

/** The state in words: "Live", "Opening in 12 min", "Draft: fairness not signed off". */
export function boardStateWords(state: BoardState, onsaleAt: Date | string, now: number): string {
  switch (state) {
    case 'LIVE':
      return 'Live';
    case 'PAUSED':
      return 'Paused';
    case 'OPENING_SOON':
      return `Opening in ${Math.max(1, Math.ceil((ms(onsaleAt) - now) / 60_000))} min`;
    case 'SCHEDULED':
      return 'Scheduled';
    case 'DRAFT':
      return 'Draft: fairness not signed off';
    case 'SOLD_OUT':
      return 'Sold out';
    case 'ENDED':
      return 'Ended';
  }
}

const RANK: Record<BoardState, number> = { PAUSED: 0, LIVE: 1, OPENING_SOON: 2, SCHEDULED: 3, DRAFT: 4, SOLD_OUT: 5, ENDED: 6 };

/**
 * The board's order: paused and live first (paused on top: it needs someone), then what opens soonest, then drafts
 * by their planned open, then sold out and ended events, most recent first. Ties by name.
 */
export function compareBoard<T extends { state: BoardState; onsaleAt: Date | string; name: string }>(a: T, b: T): number {
  const r = RANK[a.state] - RANK[b.state];
  if (r !== 0) return r;
  const [ta, tb] = [ms(a.onsaleAt), ms(b.onsaleAt)];
  const late = a.state === 'SOLD_OUT' || a.state === 'ENDED';
  if (ta !== tb) return late ? tb - ta : ta - tb;
  return a.name.localeCompare(b.name);
}
