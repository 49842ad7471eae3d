import { fillableLengths } from './best-available.js';

/** Hold requests an event's mix is taken over (the latest ones). */
const WINDOW = 200;
/** A party size counts as one still coming when at least this share of the latest requests asked for it. */
const MIN_SHARE = 0.1;
/** Events whose mix a process keeps at once (the oldest is dropped past it). */
const MAX_EVENTS = 1000;

interface Mix {
  ring: Uint8Array;
  next: number;
  size: number;
  counts: Uint16Array;
  /** The party sizes that count, as a key, and the run lengths they fill. */
  key: string;
  fills: Uint8Array;
}

/**
 * The parties still coming to an event, as this process sees them: the sizes asked for in its latest hold requests
 * (best available and exact seats alike), each counted once it makes up a tenth of them. Best-available leaves
 * runs these sizes can fill (see SingleSeatRule): where everyone wants two, odd runs would each strand a seat.
 * The first requests of a sale count themselves, so the first pair's mix is "pairs" until others come.
 */
export class PartyMix {
  private readonly events = new Map<string, Mix>();
  /** fillableLengths by key: a handful of distinct mixes ever occur. */
  private readonly byKey = new Map<string, Uint8Array>();

  /** Counts a request for `quantity` seats and answers the run lengths the mix fills, this one included. */
  record(eventId: string, quantity: number): Uint8Array {
    let mix = this.events.get(eventId);
    if (!mix) {
      if (this.events.size >= MAX_EVENTS) this.events.delete(this.events.keys().next().value!);
      mix = { ring: new Uint8Array(WINDOW), next: 0, size: 0, counts: new Uint16Array(256), key: '', fills: new Uint8Array(0) };
      this.events.set(eventId, mix);
    }
    const q = Math.max(1, Math.min(255, Math.round(quantity)));
    if (mix.size === WINDOW) mix.counts[mix.ring[mix.next]!]!--;
    else mix.size++;
    mix.ring[mix.next] = q;
    mix.next = (mix.next + 1) % WINDOW;
    mix.counts[q]!++;
    const sizes: number[] = [];
    const floor = Math.max(1, mix.size * MIN_SHARE);
    for (let s = 1; s < mix.counts.length; s++) if (mix.counts[s]! >= floor) sizes.push(s);
    const key = sizes.join(',');
    if (key !== mix.key) {
      let fills = this.byKey.get(key);
      if (!fills) this.byKey.set(key, (fills = fillableLengths(sizes)));
      mix.key = key;
      mix.fills = fills;
    }
    return mix.fills;
  }
}
