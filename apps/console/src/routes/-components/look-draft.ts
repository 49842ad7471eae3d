// The fans' page look as the event form types it, and back into the event file's `look`. Pure: no React, no I/O.
import { QUEUE_STATES } from '@onsale/shared/queue/copy';

type QueueState = (typeof QUEUE_STATES)[number];

export interface LookDraft {
  logoUrl: string;
  logoAlt: string;
  /** #rrggbb as the colour inputs give them; '' keeps the default. */
  brand: string;
  brandText: string;
  background: string;
  text: string;
  /** The words per state in Spanish ('' keeps the default Spanish words). */
  copyEs: Record<QueueState, string>;
}

export const emptyLook = (): LookDraft => ({
  logoUrl: '',
  logoAlt: '',
  brand: '',
  brandText: '',
  background: '',
  text: '',
  copyEs: { WAITING: '', PAUSED: '', ADMITTED: '', LAST_CHANCE: '', SOLD_OUT: '' },
});

const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

export function lookDraftOf(raw: unknown): LookDraft {
  const l = obj(raw);
  const c = obj(l.colors);
  const es = obj(obj(l.copy).es);
  return {
    logoUrl: text(l.logoUrl),
    logoAlt: text(l.logoAlt),
    brand: text(c.brand),
    brandText: text(c.brandText),
    background: text(c.background),
    text: text(c.text),
    copyEs: Object.fromEntries(QUEUE_STATES.map((s) => [s, text(es[s])])) as Record<QueueState, string>,
  };
}

/** The file's `look`, or undefined when nothing is set (the default look). */
export function lookOfDraft(d: LookDraft): Record<string, unknown> | undefined {
  const colors = Object.fromEntries(
    (['brand', 'brandText', 'background', 'text'] as const).filter((k) => d[k].trim() !== '').map((k) => [k, d[k].trim()]),
  );
  const es = Object.fromEntries(QUEUE_STATES.filter((s) => d.copyEs[s].trim() !== '').map((s) => [s, d.copyEs[s]]));
  const look = {
    ...(d.logoUrl.trim() ? { logoUrl: d.logoUrl.trim() } : {}),
    ...(d.logoAlt.trim() ? { logoAlt: d.logoAlt.trim() } : {}),
    ...(Object.keys(colors).length ? { colors } : {}),
    ...(Object.keys(es).length ? { copy: { es } } : {}),
  };
  return Object.keys(look).length ? look : undefined;
}
