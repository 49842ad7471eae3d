import type { Alert } from '@onsale/shared/warroom/schema';
import { formatMoney } from '@onsale/shared/words';
import { formatCount } from '../format';
import { formatRate, formatTime, STATE_LOOK, type WarRoomSnapshot } from './parts';

/**
 * The state of the sale in one line, with who paused it and why when it is paused: the war room's one PAUSED notice
 * (the pause alert and the "why nobody is let in" line are not repeated beside it).
 */
export function StateBanner({ snapshot: s }: { snapshot: WarRoomSnapshot }) {
  const look = STATE_LOOK[s.state];
  return (
    <div
      className={`wr-state wr-state-${look.tone}`}
      data-testid="wr-state-banner"
      data-state={s.state}
      role={look.tone === 'alarm' ? 'alert' : undefined}
    >
      <span className="wr-state-label" data-testid="wr-state">
        {look.label}
      </span>
      <span className="wr-state-fan">
        Fans read <strong data-testid="wr-fan-state">{s.fanState}</strong>: {look.fan}.
      </span>
      {s.queue.paused && (
        <span className="wr-state-who" data-testid="wr-paused-by">
          Paused by {s.queue.pausedBy} at {s.queue.pausedAt ? formatTime(s.queue.pausedAt) : '?'}: “{s.queue.pausedReason}”. Fans keep their
          places; resume when the cause is dealt with.
        </span>
      )}
    </div>
  );
}

/** The alerts the page lists: the event's own pause is the state banner's, not a second notice. */
export function listedAlerts(s: WarRoomSnapshot): Alert[] {
  return s.alerts.filter((a) => !(a.code === 'QUEUE_PAUSED' && a.scope === ''));
}

function Figure({
  label,
  value,
  note,
  testId,
  tone,
}: {
  label: string;
  value: string;
  note: string;
  testId: string;
  tone?: 'alarm' | 'warn';
}) {
  return (
    <div className={`wr-headline-figure${tone ? ` wr-headline-${tone}` : ''}`}>
      <span className="wr-headline-label">{label}</span>
      <span className="wr-headline-value" data-testid={testId}>
        {value}
      </span>
      <span className="wr-headline-note">{note}</span>
    </div>
  );
}

/**
 * What an operator looks at first, at any width and before any chart: fans waiting, let in a minute, seats sold,
 * the money taken (in the event's currency) and the alerts firing.
 */
export function Headline({ snapshot: s }: { snapshot: WarRoomSnapshot }) {
  const plan = s.admission.plan;
  const money = (cents: number) => formatMoney(cents, s.sales.currency);
  const critical = s.alerts.filter((a) => a.severity === 'critical').length;
  const warning = s.alerts.length - critical;
  return (
    <section className="wr-headline" aria-label="The sale at a glance" data-testid="wr-headline">
      <Figure
        label="Waiting"
        value={formatCount(s.queue.waiting)}
        note={`of ${formatCount(s.queue.joined)} who joined`}
        testId="wr-head-waiting"
      />
      <Figure
        label="Let in a minute"
        value={formatCount(s.admission.admittedLastMinute)}
        note={plan ? `plan ${formatRate(plan.admitsPerMinute)} a minute` : 'no plan'}
        testId="wr-head-admitted"
      />
      <Figure
        label="Sold"
        value={formatCount(s.inventory.sold)}
        note={`of ${formatCount(s.inventory.capacity)} seats · ${formatCount(s.inventory.held)} held`}
        testId="wr-head-sold"
      />
      <Figure
        label="Gross sales"
        value={money(s.sales.grossCents)}
        note={`${formatCount(s.sales.orders)} order${s.sales.orders === 1 ? '' : 's'}${s.sales.averageOrderCents === null ? '' : ` · average ${money(s.sales.averageOrderCents)}`} · ${money(s.sales.grossLastMinuteCents)} last minute`}
        testId="wr-revenue"
      />
      <Figure
        label="Alerts"
        value={s.alerts.length === 0 ? 'None' : formatCount(s.alerts.length)}
        note={s.alerts.length === 0 ? 'nothing needs you now' : `${formatCount(critical)} act now · ${formatCount(warning)} look now`}
        testId="wr-head-alerts"
        tone={critical > 0 ? 'alarm' : warning > 0 ? 'warn' : undefined}
      />
    </section>
  );
}
