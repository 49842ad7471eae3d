import { useState } from 'react';
import { useSuspenseQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import type { RouterOutputs } from '@onsale/bff/root';
import { useTRPC } from '../../../../trpc';
import { EventLinks } from '../../../-components/EventLinks';
import '../../../-components/event-form.css';
import { formatCount, formatDateTime } from '../../../-components/format';
import { PacingInputs, PlanPreview, previewPlan, type PacingValues } from '../../../-components/plan/PlanPreview';
import { loadOrNotFound, notFoundOrForbidden } from '../../../-components/route-loading';

type Inputs = RouterOutputs['admissionPlan']['inputs'];

export const Route = createFileRoute('/_authed/events/$eventId_/plan')({
  loader: ({ context: { trpc, queryClient }, params: { eventId } }) =>
    loadOrNotFound(() => queryClient.ensureQueryData(trpc.admissionPlan.inputs.queryOptions({ eventId }))),
  notFoundComponent: notFoundOrForbidden('event'),
  component: PlanPage,
});

/** The event's stored inputs as form values (the hold TTL in minutes). */
function valuesOf(i: Inputs, remaining: boolean): PacingValues {
  return {
    seats: String(remaining ? i.remainingSeats : i.seats),
    ticketsPerOrder: String(i.pacing.ticketsPerOrder),
    targetSaleMinutes: String(i.pacing.targetSaleMinutes),
    overbookFactor: String(i.pacing.overbookFactor),
    checkoutMinutes: String(i.pacing.checkoutMinutes),
    paymentTps: String(i.pacing.paymentTps),
    holdTtlMinutes: String(i.holdTtlSeconds / 60),
    abandonmentRate: String(i.defaults.abandonmentRate),
  };
}

function PlanPage() {
  const { eventId } = Route.useParams();
  const trpc = useTRPC();
  const { data: inputs } = useSuspenseQuery(trpc.admissionPlan.inputs.queryOptions({ eventId }));
  const [values, setValues] = useState<PacingValues>(() => valuesOf(inputs, false));
  const stored = valuesOf(inputs, false);
  const changed = (Object.keys(values) as (keyof PacingValues)[]).filter((k) => values[k] !== stored[k]);
  const outcome = previewPlan(values);

  return (
    <section className="wr">
      <p className="crumbs">
        <Link to="/">Events</Link> /{' '}
        <Link to="/events/$eventId" params={{ eventId }}>
          {inputs.name}
        </Link>{' '}
        / Admission plan ·{' '}
        <Link to="/events/$eventId/war-room" params={{ eventId }}>
          War room
        </Link>
      </p>
      <h1 data-testid="plan-title">Admission plan: {inputs.name}</h1>
      <EventLinks eventId={eventId} listingId={inputs.listingId} />
      <p className="muted">
        {inputs.venueName} · on sale <time dateTime={inputs.onsaleAt}>{formatDateTime(inputs.onsaleAt)}</time> · {formatCount(inputs.seats)}{' '}
        seats, {formatCount(inputs.remainingSeats)} unsold
      </p>
      <div className="plan-layout">
        <div className="card">
          <h2>Pacing inputs</h2>
          <p className="muted plan-whatif" data-testid="plan-whatif">
            {changed.length === 0 ? (
              <>The event's saved inputs. Change any of them to see what happens; nothing here is saved.</>
            ) : (
              <>
                What-if: {changed.length} input{changed.length > 1 ? 's' : ''} changed from the saved ones, not saved. Saving pacing inputs
                is done in the event's configuration.
              </>
            )}
          </p>
          <PacingInputs values={values} onChange={setValues} errors={outcome.ok ? {} : outcome.errors} />
          <div className="page-actions">
            <button
              type="button"
              className="wr-button"
              onClick={() => setValues(stored)}
              disabled={changed.length === 0}
              data-testid="plan-reset"
            >
              Back to the saved inputs
            </button>
            <button type="button" className="wr-button" onClick={() => setValues(valuesOf(inputs, true))} data-testid="plan-remaining">
              Re-plan on the {formatCount(inputs.remainingSeats)} unsold seats
            </button>
          </div>
        </div>
        <PlanPreview inputs={values} />
      </div>
    </section>
  );
}
