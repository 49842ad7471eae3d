// The event form's ticket settings (issue 29) as typed, and their translation to and from the event file's
// `tickets` (ticketSettingsSchema in @onsale/shared/sale-setup/schema). Pure: no React, no I/O.
import { DEFAULT_TICKET_SETTINGS, type TicketSettings } from '@onsale/shared/sale-setup/schema';
import { instantOfWallTime, wallTimeOf } from '@onsale/shared/words';

export type DeliveryChoice = 'now' | 'at' | 'hoursBefore';

/** A yes/no setting as its select's value. */
type YesNo = 'true' | 'false';

/**
 * Each setting of the schema's `tickets` as its input holds it (text as typed; a yes/no as its select's value), plus
 * the delivery's choice and the ISO text `deliveryAt` came from. Derived from the schema: a setting added there is
 * a field here.
 */
export type TicketsDraft = { [K in keyof TicketSettings]-?: TicketSettings[K] extends boolean ? YesNo : string } & {
  /** When tickets are delivered: at once, at a time (`deliveryAt`, on the venue's clock), or hours before the show. */
  delivery: DeliveryChoice;
  deliveryAtIso: string | null;
};

export const emptyTicketsDraft = (): TicketsDraft => ({
  delivery: 'now',
  deliveryAt: '',
  deliveryAtIso: null,
  // What the form suggests once "hours before the show" is chosen (the file has no default: delivery is at once).
  deliveryHoursBeforeShow: '24',
  transferLimit: String(DEFAULT_TICKET_SETTINGS.transferLimit),
  resale: String(DEFAULT_TICKET_SETTINGS.resale) as YesNo,
  resaleFeeCapPercent: String(DEFAULT_TICKET_SETTINGS.resaleFeeCapPercent),
});

/** A number or text read from the file as typed; anything else (left out, or not a value) the default. */
const str = (v: unknown, fallback: string) => (typeof v === 'number' || typeof v === 'string' ? String(v) : fallback);

/** The file's `tickets` (or the BFF's read-back) as the inputs show it. */
export function ticketsDraftOf(raw: unknown, zone: string): TicketsDraft {
  const d = emptyTicketsDraft();
  if (!raw || typeof raw !== 'object') return d;
  const t = raw as Record<string, unknown>;
  const at = typeof t.deliveryAt === 'string' ? t.deliveryAt : null;
  return {
    delivery: at !== null ? 'at' : t.deliveryHoursBeforeShow !== undefined ? 'hoursBefore' : 'now',
    deliveryAt: at === null ? '' : wallTimeOf(at, zone) || at,
    deliveryAtIso: at,
    deliveryHoursBeforeShow: str(t.deliveryHoursBeforeShow, d.deliveryHoursBeforeShow),
    transferLimit: str(t.transferLimit, d.transferLimit),
    resale: t.resale === false ? 'false' : 'true',
    resaleFeeCapPercent: str(t.resaleFeeCapPercent, d.resaleFeeCapPercent),
  };
}

/**
 * The inputs as the file's `tickets`; `problems` gets "enter a number" at the field for text that is not one (the
 * schema says the rest: ranges, a delivery after the show).
 */
export function ticketsOfDraft(d: TicketsDraft, zone: string, problems: Record<string, string>): { [K in keyof TicketSettings]?: unknown } {
  const num = (path: string, v: string): number | undefined => {
    const t = v.trim();
    if (t === '') {
      problems[path] = 'enter a number';
      return undefined;
    }
    const n = Number(t);
    if (!Number.isFinite(n)) problems[path] = 'enter a number';
    return n;
  };
  const out: { [K in keyof TicketSettings]?: unknown } = {
    transferLimit: num('tickets.transferLimit', d.transferLimit),
    resale: d.resale !== 'false',
    resaleFeeCapPercent: num('tickets.resaleFeeCapPercent', d.resaleFeeCapPercent),
  };
  if (d.delivery === 'at') {
    const local = d.deliveryAt.trim();
    if (local === '') problems['tickets.deliveryAt'] = 'choose when tickets are delivered';
    else
      out.deliveryAt =
        d.deliveryAtIso !== null && wallTimeOf(d.deliveryAtIso, zone) === local
          ? d.deliveryAtIso
          : (instantOfWallTime(local, zone) ?? local);
  }
  if (d.delivery === 'hoursBefore') out.deliveryHoursBeforeShow = num('tickets.deliveryHoursBeforeShow', d.deliveryHoursBeforeShow);
  return out;
}
