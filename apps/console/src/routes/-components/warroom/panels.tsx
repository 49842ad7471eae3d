import { formatCount } from '../format';
import { formatPct, formatRate, formatTime, Metric, Panel, type WarRoomSnapshot } from './parts';

/**
 * The war room's figures under the first screen, grouped as an operator reads them. Labels are plain words; the
 * technical term each stands for (as in the docs and the metrics) is in the label's tooltip.
 */
export function FigurePanels({ snapshot: s }: { snapshot: WarRoomSnapshot }) {
  const plan = s.admission.plan;
  return (
    <div className="wr-grid">
      <Panel title="Queue" testId="wr-queue">
        <Metric label="Joined" value={formatCount(s.queue.joined)} testId="wr-joined" note="places given out" />
        <Metric label="Waiting" value={formatCount(s.queue.waiting)} testId="wr-waiting" note="not let in yet" />
        <Metric
          label="Let in up to place"
          term="Watermark (admitted-through): every place at or below it is let in"
          value={formatCount(s.queue.admittedThrough)}
          testId="wr-watermark"
          note={`moves ${formatRate(s.queue.publishedRatePerMin)} places a minute`}
        />
        <Metric
          label="Let in a minute"
          value={formatCount(s.admission.admittedLastMinute)}
          testId="wr-admitted-per-min"
          note={
            <>
              plan <span data-testid="wr-plan-per-min">{plan ? formatRate(plan.admitsPerMinute) : '—'}</span> · now{' '}
              {formatRate(s.admission.controllerRatePerMin)} a minute
              {s.queue.rateOverridePerMin !== null && <> · set by an operator to {formatCount(s.queue.rateOverridePerMin)}</>} · this minute{' '}
              {formatCount(s.admission.admittedThisMinute)}
            </>
          }
          alerts={s.alerts}
          metric="admittedPerMin"
        />
      </Panel>

      <Panel title="Seats" testId="wr-inventory">
        <Metric label="Available" value={formatCount(s.inventory.available)} testId="wr-available" alerts={s.alerts} metric="inventory" />
        <Metric
          label="Held"
          value={formatCount(s.inventory.held)}
          testId="wr-held"
          note={`a hold lasts ${Math.round(s.inventory.holdTtlSeconds / 60)} min`}
        />
        <Metric label="Sold" value={formatCount(s.inventory.sold)} testId="wr-sold" note={`of ${formatCount(s.inventory.capacity)}`} />
        <Metric
          label="Seats unaccounted for"
          term="Inventory invariant drift: available + held + sold − capacity, which must stay 0"
          value={formatCount(s.inventory.drift)}
          testId="wr-drift"
          note={`${s.inventory.drift === 0 ? 'the counts add up' : 'the counts do not add up'}${s.inventory.orderDrift !== null ? ` · sold seats without an order: ${formatCount(s.inventory.orderDrift)}` : ''}`}
          alerts={s.alerts}
          metric="drift"
        />
      </Panel>

      <Panel title="Store health" testId="wr-store">
        <Metric
          label="Holds per fan let in"
          value={s.holds.perAdmittedFan === null ? '—' : s.holds.perAdmittedFan.toFixed(2)}
          testId="wr-holds-per-fan"
          note={`${formatCount(s.holds.createdLastMinute)} holds / ${formatCount(s.admission.admittedLastMinute)} let in last minute; at most 1.2`}
          alerts={s.alerts}
          metric="holdsPerAdmitted"
        />
        <Metric
          label="Holds lost"
          term="Holds commit without waiting for the disk (HOLD_COMMIT=async): a database crash can lose one just answered"
          value={formatCount(s.holds.lost)}
          testId="wr-holds-lost"
          note={`lost in a database crash; those fans were asked to hold again · ${formatCount(s.holds.lostLast5Minutes)} in 5 min`}
        />
        <Metric
          label="Slowest holds"
          term="Hold latency p99: the time the slowest 1% of holds took"
          value={s.holdLatency.p99Ms === null ? '—' : `${formatCount(Math.round(s.holdLatency.p99Ms))} ms`}
          testId="wr-hold-p99"
          note={
            s.store.configured
              ? `every event on this platform, last ${s.holdLatency.windowSeconds} s, ${formatCount(s.holdLatency.observed)} holds; target under 500 ms${s.store.reachable < s.store.instances ? ` · ${s.store.instances - s.store.reachable} store server(s) not answering` : ''}`
              : 'not measured: the BFF was started without STORE_API_URL'
          }
          alerts={s.alerts}
          metric="holdLatencyP99"
        />
        <Metric
          label="Payment failures"
          value={s.checkout.errorRate === null ? '—' : formatPct(s.checkout.errorRate)}
          testId="wr-checkout-errors"
          note={
            <>
              {formatCount(s.checkout.failed2m)} of {formatCount(s.checkout.attempts2m)} checkouts in 2 min failed at the payment provider
              or timed out · <span data-testid="wr-checkout-declined">{formatCount(s.checkout.declined2m)}</span> cards declined by their
              banks (not counted)
            </>
          }
          alerts={s.alerts}
          metric="checkoutErrorRate"
        />
        <Metric
          label="Payments a second"
          term="Payment TPS: payment attempts per second, against the rate contracted with the payment provider"
          value={formatRate(s.payment.attemptsPerSecond)}
          testId="wr-payment-tps"
          note={
            <>
              limit {formatCount(s.payment.ceilingTps)} a second, agreed with the payment provider
              <meter
                min={0}
                max={s.payment.ceilingTps}
                low={s.payment.ceilingTps * 0.7}
                high={s.payment.ceilingTps * 0.9}
                optimum={0}
                value={Math.min(s.payment.attemptsPerSecond, s.payment.ceilingTps)}
              />
            </>
          }
          alerts={s.alerts}
          metric="paymentTps"
        />
      </Panel>

      <Panel title="Sold out and waitlist" testId="wr-soldout-waitlist">
        <Metric
          label="Fans told it sold out within"
          term="Sold-out propagation p99"
          value={s.soldOut.propagationP99Seconds === null ? '—' : `${s.soldOut.propagationP99Seconds} s`}
          testId="wr-soldout"
          note={
            s.soldOut.soldOutAt ? `sold out at ${formatTime(s.soldOut.soldOutAt)}; target under 60 s` : 'not sold out; target under 60 s'
          }
          alerts={s.alerts}
          metric="soldOutPropagation"
        />
        <Metric
          label="On the waitlist"
          value={formatCount(s.waitlist.entries)}
          testId="wr-waitlist-entries"
          note={`${formatCount(s.waitlist.openOffers)} offers open`}
          alerts={s.alerts}
          metric="waitlist"
        />
        <Metric
          label="Fans told of returned seats"
          value={formatCount(s.waitlist.notified)}
          testId="wr-notifications"
          note={`${formatCount(s.waitlist.notifiedLast10Min)} in 10 min · ${formatCount(s.waitlist.pendingAvailabilityEvents)} returns still to send${s.waitlist.lastFanoutSeconds !== null ? ` · the last took ${s.waitlist.lastFanoutSeconds} s` : ''}`}
        />
      </Panel>
    </div>
  );
}
