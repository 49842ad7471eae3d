import { useMemo } from 'react';
import { CartesianGrid, Line, LineChart, ReferenceDot, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { DomainError } from '@onsale/shared';
import { planAdmission, strandedSeats, type AdmissionPlan } from '@onsale/shared/admission/plan';
import { Field } from '../Field';
import { formatCount } from '../format';
import '../warroom/warroom.css';

/**
 * The admission plan preview (the reference sale's plan and stranded seats, docs/architecture.md), computed in the browser by the same pure
 * module the admission controller and `onsale plan` use, so it follows every keystroke.
 *
 * The seam for event configuration: `PlanPreview` only displays; it takes the pacing inputs as the form holds
 * them (strings are fine) and reports nothing back. A configuration form renders
 * `<PlanPreview inputs={formValues} />` beside its own pacing fields and saves through its own mutation;
 * `PacingInputs` is the what-if editor the plan page uses, and is not wired to any save.
 */
export interface PacingValues {
  seats: string;
  ticketsPerOrder: string;
  targetSaleMinutes: string;
  overbookFactor: string;
  checkoutMinutes: string;
  paymentTps: string;
  holdTtlMinutes: string;
  abandonmentRate: string;
}

export const PACING_FIELDS: { name: keyof PacingValues; label: string; hint: string; step: string }[] = [
  { name: 'seats', label: 'Seats on sale', hint: 'the house (capacity)', step: '1' },
  { name: 'ticketsPerOrder', label: 'Tickets per order', hint: 'a stadium sale: 2.5', step: '0.1' },
  { name: 'targetSaleMinutes', label: 'Target sale duration (min)', hint: '20-30: a 90 s sell-out looks rigged', step: '1' },
  { name: 'overbookFactor', label: 'Fans let in per buyer', hint: 'x1.3 allows for fans who leave without buying', step: '0.05' },
  { name: 'checkoutMinutes', label: 'Checkout minutes', hint: 'time an admitted fan shops and pays', step: '0.5' },
  { name: 'paymentTps', label: 'Payments a second', hint: "this event's share of the payment provider's limit", step: '1' },
  { name: 'holdTtlMinutes', label: 'A hold lasts (min)', hint: 'default 6, 3 more once payment starts', step: '0.5' },
  { name: 'abandonmentRate', label: 'Abandoned holds (0-1)', hint: 'share of holds never paid; a stadium sale: 0.3', step: '0.05' },
];

/** TTLs the stranded-seats curve is drawn at (minutes). */
const TTL_CURVE = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 18, 20, 25, 30];

type Outcome =
  | { ok: true; plan: AdmissionPlan; stranded: number; ttl: number; curve: { ttl: number; stranded: number }[] }
  | { ok: false; errors: Record<string, string> };

const toNumber = (s: string) => (s.trim() === '' ? Number.NaN : Number(s));

/** The plan for the values, or the first refusal at its field (the planner names the field it refuses). */
export function previewPlan(v: PacingValues): Outcome {
  const ttl = toNumber(v.holdTtlMinutes);
  const abandonmentRate = toNumber(v.abandonmentRate);
  try {
    const plan = planAdmission({
      seats: toNumber(v.seats),
      ticketsPerOrder: toNumber(v.ticketsPerOrder),
      targetSaleMinutes: toNumber(v.targetSaleMinutes),
      overbookFactor: toNumber(v.overbookFactor),
      checkoutMinutes: toNumber(v.checkoutMinutes),
      paymentTps: toNumber(v.paymentTps),
      holdTtlMinutes: [ttl],
      abandonmentRate,
    });
    const curve = TTL_CURVE.map((t) => ({
      ttl: t,
      stranded: Math.round(
        strandedSeats({
          admitsPerMinute: plan.admitsPerMinute,
          abandonmentRate,
          holdTtlMinutes: t,
          ticketsPerOrder: toNumber(v.ticketsPerOrder),
        }),
      ),
    }));
    return { ok: true, plan, stranded: plan.strandedSeatsByHoldTtl![0]!.strandedSeats, ttl, curve };
  } catch (err) {
    if (err instanceof DomainError && err.code === 'INVALID_PLAN_INPUT') {
      const field = String(err.details.field);
      return { ok: false, errors: { [field === 'holdTtlMinutes' ? 'holdTtlMinutes' : field]: err.message } };
    }
    throw err;
  }
}

/** What-if editor of the pacing inputs; errors show at their field. */
export function PacingInputs({
  values,
  onChange,
  errors,
}: {
  values: PacingValues;
  onChange: (v: PacingValues) => void;
  errors: Record<string, string>;
}) {
  return (
    <div className="plan-inputs" data-testid="plan-inputs">
      {PACING_FIELDS.map((f) => (
        <Field key={f.name} label={f.label} name={f.name} error={errors[f.name]} hint={f.hint}>
          <input
            type="number"
            inputMode="decimal"
            step={f.step}
            value={values[f.name]}
            onChange={(e) => onChange({ ...values, [f.name]: e.target.value })}
          />
        </Field>
      ))}
    </div>
  );
}

/** The figures and the chart of stranded seats against hold TTL, live as the inputs change. */
export function PlanPreview({ inputs }: { inputs: PacingValues }) {
  const outcome = useMemo(() => previewPlan(inputs), [inputs]);
  if (!outcome.ok)
    return (
      <div className="plan-preview plan-preview-invalid" data-testid="plan-preview" data-valid="false">
        <p className="form-error" role="alert">
          No plan for these inputs: {Object.values(outcome.errors)[0]}
        </p>
      </div>
    );
  const { plan, stranded, ttl, curve } = outcome;
  const seats = toNumber(inputs.seats);
  const share = seats > 0 ? stranded / seats : 0;
  const binding =
    plan.bindingConstraint === 'payment_tps' ? 'how many payments per second the card processor accepts' : "the sale's target length";
  return (
    <div className="plan-preview" data-testid="plan-preview" data-valid="true">
      <div className="wr-metrics plan-figures">
        <Figure
          label="Admits / min"
          value={formatCount(Math.round(plan.admitsPerMinute))}
          testId="plan-admits"
          note={`${formatCount(Math.round(plan.buyersPerMinute))} buyers/min × ${plan.overbookFactor}`}
        />
        <Figure
          label="Concurrent shoppers"
          value={formatCount(Math.round(plan.concurrentShoppers))}
          testId="plan-shoppers"
          note={`store load ${formatCount(Math.round(plan.storeRequestsPerSecond.low))}-${formatCount(Math.round(plan.storeRequestsPerSecond.high))} req/s`}
        />
        <Figure
          label="Expected sale duration"
          value={`${plan.expectedSaleMinutes.toLocaleString('en-US', { maximumFractionDigits: 1 })} min`}
          testId="plan-duration"
          note={`${formatCount(Math.round(plan.orders))} orders; bound by ${binding}`}
        />
        <Figure
          label={`Stranded at a ${ttl}-min hold`}
          value={formatCount(Math.round(stranded))}
          testId="plan-stranded"
          note={`${(share * 100).toLocaleString('en-US', { maximumFractionDigits: 1 })}% of the house sits in abandoned holds at any moment`}
          alarm={share >= 0.2}
        />
      </div>
      <p className="muted plan-binding" data-testid="plan-binding">
        Buyers a minute: {formatCount(Math.round(plan.buyersPerMin.inventoryPacing))} to sell out in the target time,{' '}
        {formatCount(Math.round(plan.buyersPerMin.paymentCeiling))} the card processor can charge; the lower one ({binding}) sets the rate.
      </p>
      <figure className="chart wr-chart" aria-label="Seats stranded in abandoned holds by hold TTL" data-testid="plan-stranded-chart">
        <figcaption>Seats stranded in abandoned holds by hold TTL (admits/min × abandoned share × TTL × tickets per order)</figcaption>
        <ResponsiveContainer width="100%" height={240}>
          <LineChart data={curve} margin={{ top: 12, right: 16, bottom: 4, left: 0 }}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="ttl" type="number" domain={[0, 30]} ticks={[0, 5, 10, 15, 20, 25, 30]} unit=" min" />
            <YAxis allowDecimals={false} width={64} />
            <Tooltip formatter={(v) => [formatCount(Number(v)), 'stranded seats']} labelFormatter={(t) => `hold TTL ${Number(t)} min`} />
            {seats > 0 && (
              <ReferenceLine
                y={seats * 0.1}
                stroke="#94a3b8"
                strokeDasharray="4 4"
                label={{ value: '10% of the house', position: 'insideTopLeft', fill: '#64748b', fontSize: 12 }}
              />
            )}
            <Line
              type="linear"
              dataKey="stranded"
              name="Stranded seats"
              stroke="#c05621"
              strokeWidth={2}
              dot={{ r: 2 }}
              isAnimationActive={false}
            />
            <ReferenceDot
              x={ttl}
              y={Math.round(stranded)}
              r={6}
              fill="#c53030"
              stroke="#fff"
              label={{ value: `${ttl} min`, position: 'top', fill: '#c53030' }}
            />
          </LineChart>
        </ResponsiveContainer>
      </figure>
    </div>
  );
}

function Figure({ label, value, note, testId, alarm }: { label: string; value: string; note: string; testId: string; alarm?: boolean }) {
  return (
    <div className={`wr-metric${alarm ? ' wr-metric-warning' : ''}`}>
      <span className="wr-metric-label">{label}</span>
      <span className="wr-metric-value" data-testid={testId}>
        {value}
      </span>
      <span className="wr-metric-note">{note}</span>
    </div>
  );
}
