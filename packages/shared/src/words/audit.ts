// Audit-log entries, actors and waitlist causes in words, for the console (and its CSV export). Browser-safe.
import { formatDuration, formatInstant } from './time.js';
import { formatMoney } from './money.js';

/**
 * Who an audit actor id is, in words: `console:ana@x.io` -> "ana@x.io", `cli:root` -> "root (command line)",
 * `admission-controller:…` -> "the admission controller", `system` -> "the system".
 */
export function actorWords(actor: string): string {
  if (actor.startsWith('console:')) return actor.slice('console:'.length);
  if (actor.startsWith('cli:')) return `${actor.slice('cli:'.length)} (command line)`;
  if (actor.startsWith('admission-controller')) return 'the admission controller';
  if (actor === 'allocations-job') return 'the tier roll-forward job';
  if (actor === 'system') return 'the system';
  return actor;
}

/** What an audit action is, in words ("queue.paused" -> "Paused admissions"). */
export const ACTION_WORDS: Record<string, string> = {
  'event.created': 'Created the event',
  'event.updated': 'Changed the configuration',
  'event.organisation_assigned': 'Gave the event to an organisation',
  'event.fairness_signed_off': 'Signed off the fairness mode',
  'event.fairness_signoff_superseded': 'Withdrew a fairness sign-off',
  'queue.paused': 'Paused admissions',
  'queue.resumed': 'Resumed admissions',
  'queue.rate_override': 'Set the admission rate',
  'queue.sealed': 'Sealed the pre-open cohort and revealed the seed',
  'queue.sold_out': 'Sold out',
  'order.cancel': 'Cancelled an order',
  'order.refund': 'Refunded an order',
  'ticket.listed': 'A fan listed a ticket for resale',
  'ticket.resold': 'A ticket was resold',
  'inventory.add': 'Added seats',
  'review.cancel_cluster': 'Cancelled a cluster of linked orders',
  'allocation.rolled': 'Rolled a presale tier forward',
  'allocation.codes_issued': 'Issued access codes',
  'lottery.seed_committed': 'Committed the lottery seed',
  'lottery.drawn': 'Ran the lottery draw',
  'listing.waitlist': 'Changed the waitlist settings',
  'console_user.created': 'Created a console user',
  'console_user.disabled': 'Disabled a console user',
  'console_user.enabled': 'Enabled a console user',
  'console_user.role_changed': "Changed a console user's role",
  'console_user.password_reset': "Reset a console user's password",
  'console_user.password_changed': 'Changed their own password',
  'console_user.signed_out_everywhere': 'Signed a console user out everywhere',
  'account.blocked': 'Blocked a fan account from the event',
  'account.unblocked': 'Lifted a fan account block',
  'hold.released': "Released a fan's hold",
  'webhook.added': 'Added a webhook endpoint',
  'webhook.disabled': 'Disabled a webhook endpoint',
  'webhook.enabled': 'Enabled a webhook endpoint',
  'webhook.redelivered': 'Redelivered a webhook',
  'queue.control_scheduled': 'Scheduled a queue control',
  'queue.schedule_cancelled': 'Cancelled a scheduled queue control',
  'event.queue_copy_changed': 'Changed the words waiting fans read',
  'alerts.receiver_added': 'Added an alert receiver',
  'alerts.receiver_enabled': 'Turned an alert receiver on',
  'alerts.receiver_disabled': 'Turned an alert receiver off',
};

/** The queue states fans read, in words (for the audit of the words they read). */
const QUEUE_STATE_WORDS: Record<string, string> = {
  WAITING: 'waiting in line',
  PAUSED: 'line paused',
  ADMITTED: 'their turn',
  LAST_CHANCE: 'every seat held',
  SOLD_OUT: 'sold out',
};
const LANGUAGE_WORDS: Record<string, string> = { en: 'English', es: 'Spanish' };

/** A scheduled queue control's action in words ("Pause admissions", "Set the rate to 45/min"). */
function scheduledWords(d: Record<string, unknown>): string {
  const action = str(d.action);
  const per = num(d.perMinute);
  const what =
    action === 'PAUSE'
      ? 'Pause admissions'
      : action === 'RESUME'
        ? 'Resume admissions'
        : per === null
          ? "Follow the plan's rate again"
          : `Set the rate to ${per.toLocaleString('en-US')}/min`;
  return d.tier ? `${what} (presale tier ${str(d.tier)})` : what;
}

export function actionWords(action: string): string {
  return ACTION_WORDS[action] ?? action.replace(/[._]/g, ' ');
}

/** Why seats came back to a waitlist, in words. */
export const CAUSE_WORDS: Record<string, string> = {
  HOLD_RELEASED: 'a fan released their hold',
  HOLD_EXPIRED: 'a hold ran out',
  ORDER_CANCELLED: 'an order was cancelled',
  INVENTORY_ADDED: 'seats were added',
  ALLOCATION_ROLLED: 'a presale tier rolled forward',
  OFFER_RETURNED: 'an offer was declined or ran out',
};

export const causeWords = (cause: string) => CAUSE_WORDS[cause] ?? cause.toLowerCase().replace(/_/g, ' ');

/** Configuration settings in words (the event file's paths). */
export const SETTING_WORDS: Record<string, string> = {
  name: 'name',
  venueName: 'venue',
  timeZone: 'time zone',
  currency: 'currency',
  startsAt: 'show start',
  onsaleAt: 'on-sale time',
  seatPickingOpensAfterMinutes: 'seat picking delay',
  fairnessMode: 'fairness mode',
  noSingleSeats: 'no single seats',
  'tickets.deliveryAt': 'ticket delivery time',
  'tickets.deliveryHoursBeforeShow': 'ticket delivery hours before the show',
  'tickets.transferLimit': 'ticket transfer limit',
  'tickets.resale': 'face-value resale',
  'tickets.resaleFeeCapPercent': 'resale fee cap',
  'limits.perAccountSeats': 'seats per account',
  'limits.perInstrumentSeats': 'seats per card',
  'limits.perDeviceSeats': 'seats per device',
  'holds.ttlSeconds': 'hold length',
  'holds.extensionSeconds': 'hold extension',
  'pacing.targetSaleMinutes': 'target sale duration',
  'pacing.ticketsPerOrder': 'tickets per order',
  'pacing.checkoutMinutes': 'checkout minutes',
  'pacing.paymentTps': 'payment TPS',
  'pacing.overbookFactor': 'overbooking factor',
  queueCopy: 'queue messages',
  priceLevels: 'prices',
  sections: 'sections',
  allocations: 'presale tiers',
  lottery: 'lottery settings',
};

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** A value from an audit entry in words: instants in the zone, lists joined, objects as "k: v". */
export function valueWords(v: unknown, timeZone = 'UTC'): string {
  if (v === null || v === undefined) return 'none';
  if (typeof v === 'string') return ISO.test(v) ? formatInstant(v, timeZone) : v;
  if (typeof v === 'number') return v.toLocaleString('en-US');
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (Array.isArray(v)) return v.length === 0 ? 'none' : v.map((x) => valueWords(x, timeZone)).join('; ');
  const entries = Object.entries(v as Record<string, unknown>);
  return entries.length === 0 ? 'none' : entries.map(([k, x]) => `${k} ${valueWords(x, timeZone)}`).join(', ');
}

const str = (v: unknown) => (typeof v === 'string' ? v : null);
const num = (v: unknown) => (typeof v === 'number' ? v : null);

/** Amounts in the details (minor units, keys ending in `Cents`) by what they are, in words. */
const MONEY_KEY_WORDS: Record<string, string> = {
  amountCents: 'amount',
  priceCents: 'price',
  capCents: 'most allowed',
  faceValueCents: 'face value',
  maxPriceCents: 'most they pay',
  refundedCents: 'refunded',
};

/**
 * An amount kept in minor units, in the event's currency for the reader's locale ("£25.00"); without a currency
 * (an entry about no event) the bare number, said to be in minor units, never a guessed currency.
 */
function moneyWords(minorUnits: number, currency: string | null | undefined): string {
  return currency ? formatMoney(minorUnits, currency) : `${minorUnits.toLocaleString('en-US')} (minor units)`;
}

/** A price level as the configuration's change record keeps it ("A Floor 2500": code, name, cents) in money. */
function priceLevelWords(v: unknown, currency: string | null | undefined): unknown {
  if (!Array.isArray(v)) return v;
  return (v as unknown[]).map((x) => {
    const m = typeof x === 'string' ? /^(.*) (-?\d+)$/.exec(x) : null;
    return m ? `${m[1]} ${moneyWords(Number(m[2]), currency)}` : x;
  });
}

/**
 * An audit entry's details as a sentence or two for a person ("Reason: doors delayed. Paused for 4 min."), with
 * the action's own words where it has some and "key: value" for the rest. Internal ids are left out. Times read in
 * the event's time zone, amounts (kept in minor units) in the event's currency for the reader's locale.
 */
export function auditDetailsWords(action: string, details: Record<string, unknown>, timeZone = 'UTC', currency?: string | null): string {
  const d = details ?? {};
  const parts: string[] = [];
  const reason = str(d.reason);
  switch (action) {
    case 'queue.paused':
      if (reason) parts.push(`Reason: ${reason}`);
      if (str(d.publicNote)) parts.push(`Note to the public: ${str(d.publicNote)}`);
      if (d.tier) parts.push(`Presale tier ${str(d.tier)} only`);
      break;
    case 'queue.resumed': {
      if (reason) parts.push(`Reason: ${reason}`);
      const s = num(d.pausedSeconds);
      if (s !== null) parts.push(`Paused for ${formatDuration(s)}${str(d.pauseReason) ? ` (${str(d.pauseReason)})` : ''}`);
      break;
    }
    case 'queue.rate_override': {
      const to = num(d.perMinute);
      const from = num(d.previousPerMinute);
      parts.push(to === null ? 'Back to the plan' : `${to.toLocaleString('en-US')} admits/min`);
      parts.push(`before: ${from === null ? 'the plan' : `${from.toLocaleString('en-US')}/min`}`);
      if (reason) parts.push(`Reason: ${reason}`);
      break;
    }
    case 'event.updated': {
      const changes = Array.isArray(d.changes) ? (d.changes as { setting?: string; from?: unknown; to?: unknown }[]) : [];
      for (const c of changes) {
        const [from, to] =
          c.setting === 'priceLevels' ? [priceLevelWords(c.from, currency), priceLevelWords(c.to, currency)] : [c.from, c.to];
        parts.push(`${SETTING_WORDS[c.setting ?? ''] ?? c.setting}: ${valueWords(from, timeZone)} → ${valueWords(to, timeZone)}`);
      }
      break;
    }
    case 'order.cancel':
      if (reason) parts.push(`Reason: ${reason}`);
      parts.push(`${valueWords(num(d.seats) ?? 0)} seat(s) back${num(d.units) ? `, ${num(d.units)} GA unit(s)` : ''}`);
      if (num(d.amountCents) !== null) parts.push(`Order of ${moneyWords(num(d.amountCents)!, currency)}`);
      break;
    case 'order.refund':
      parts.push(`${moneyWords(num(d.amountCents) ?? 0, currency)} refunded`);
      if (str(d.paymentReference)) parts.push(`Payment ${str(d.paymentReference)}`);
      if (reason) parts.push(`Reason: ${reason}`);
      break;
    case 'console_user.role_changed':
      parts.push(`${str(d.email)}: ${str(d.from)} → ${str(d.to)}${str(d.organisation) ? ` of ${str(d.organisation)}` : ''}`);
      break;
    case 'queue.control_scheduled':
    case 'queue.schedule_cancelled':
      parts.push(
        `${scheduledWords(d)} at ${valueWords(d.runAt, timeZone)}${action === 'queue.schedule_cancelled' ? ': will not run' : ''}`,
      );
      if (reason) parts.push(`Reason: ${reason}`);
      break;
    case 'event.queue_copy_changed': {
      if (reason) parts.push(`Reason: ${reason}`);
      const changes = Array.isArray(d.changes)
        ? (d.changes as { language?: string; state?: string; before?: unknown; after?: unknown }[])
        : [];
      for (const c of changes)
        parts.push(
          `${QUEUE_STATE_WORDS[c.state ?? ''] ?? c.state} (${LANGUAGE_WORDS[c.language ?? ''] ?? c.language}): “${valueWords(c.before)}” → “${valueWords(c.after)}”`,
        );
      break;
    }
    case 'alerts.receiver_added':
      parts.push(`${str(d.url)}, ${d.minSeverity === 'critical' ? 'critical alerts only' : 'every alert'}`);
      break;
    case 'alerts.receiver_enabled':
    case 'alerts.receiver_disabled':
      parts.push(String(str(d.url)));
      break;
    case 'account.blocked':
    case 'account.unblocked':
      parts.push(`Account ${str(d.accountId)}`);
      if (reason) parts.push(`Reason: ${reason}`);
      break;
    default:
      for (const [k, v] of Object.entries(d)) {
        if (/Id$|^id$|seedCommitment|description/.test(k) && k !== 'accountId') continue;
        if (k.endsWith('Cents') && typeof v === 'number')
          parts.push(`${MONEY_KEY_WORDS[k] ?? k.slice(0, -'Cents'.length)}: ${moneyWords(v, currency)}`);
        else parts.push(`${k === 'reason' ? 'Reason' : k}: ${valueWords(v, timeZone)}`);
      }
  }
  const line = parts.join('. ');
  return line.length > 600 ? `${line.slice(0, 600)}…` : line;
}
