import type { EventSetting } from '@onsale/shared/sale-setup/schema';
import { Field } from './Field';
import { errorAt } from './event-draft';
import type { DeliveryChoice, TicketsDraft } from './ticket-draft';

const DELIVERY_LABELS: Record<DeliveryChoice, string> = {
  now: 'At once, when the order is paid',
  at: 'At a set time',
  hoursBefore: 'A number of hours before the show',
};

/**
 * The event form's ticket settings: when tickets (their door codes) are delivered, how many times one ticket may be
 * passed to another account, and the face-value exchange (on or off, and the most a seller may add to face value).
 * Errors from the shared schema at each field; a setting the change rules lock says why at the field.
 */
export function TicketsEditor({
  tickets,
  timeZone,
  onChange,
  errors,
  readOnly,
  lockOf,
}: {
  tickets: TicketsDraft;
  timeZone: string;
  onChange: (t: TicketsDraft) => void;
  errors: Record<string, string>;
  readOnly: boolean;
  lockOf: (setting: EventSetting) => string | undefined;
}) {
  const set = (patch: Partial<TicketsDraft>) => onChange({ ...tickets, ...patch });
  const off = (s: EventSetting) => readOnly || lockOf(s) !== undefined;
  const err = (path: string) => errorAt(errors, path);
  return (
    <fieldset className="card" data-testid="ticket-settings">
      <legend>Tickets</legend>
      <div className="form-grid">
        <Field
          label="Tickets are delivered"
          name="tickets.delivery"
          error={err('tickets')}
          hint={
            lockOf('tickets.deliveryAt') ??
            'Before delivery a fan sees the ticket and when it arrives, but no code: a late delivery keeps tickets off resale sites.'
          }
        >
          <select
            name="tickets.delivery"
            value={tickets.delivery}
            disabled={off('tickets.deliveryAt') || off('tickets.deliveryHoursBeforeShow')}
            onChange={(e) => set({ delivery: e.target.value as DeliveryChoice })}
          >
            {(Object.keys(DELIVERY_LABELS) as DeliveryChoice[]).map((k) => (
              <option key={k} value={k}>
                {DELIVERY_LABELS[k]}
              </option>
            ))}
          </select>
        </Field>
        {tickets.delivery === 'at' && (
          <Field
            label="Delivered at"
            name="tickets.deliveryAt"
            error={err('tickets.deliveryAt')}
            hint={lockOf('tickets.deliveryAt') ?? `On the venue's clock (${timeZone}); by the show's start.`}
          >
            <input
              name="tickets.deliveryAt"
              type="datetime-local"
              step="1"
              value={tickets.deliveryAt}
              disabled={off('tickets.deliveryAt')}
              onChange={(e) => set({ deliveryAt: e.target.value })}
            />
          </Field>
        )}
        {tickets.delivery === 'hoursBefore' && (
          <Field
            label="Hours before the show"
            name="tickets.deliveryHoursBeforeShow"
            error={err('tickets.deliveryHoursBeforeShow')}
            hint={lockOf('tickets.deliveryHoursBeforeShow') ?? '24: the day before.'}
          >
            <input
              name="tickets.deliveryHoursBeforeShow"
              type="number"
              inputMode="numeric"
              value={tickets.deliveryHoursBeforeShow}
              disabled={off('tickets.deliveryHoursBeforeShow')}
              onChange={(e) => set({ deliveryHoursBeforeShow: e.target.value })}
            />
          </Field>
        )}
        <Field
          label="Transfers per ticket"
          name="tickets.transferLimit"
          error={err('tickets.transferLimit')}
          hint={lockOf('tickets.transferLimit') ?? 'How many times one ticket may pass to another account. 0: never.'}
        >
          <input
            name="tickets.transferLimit"
            type="number"
            inputMode="numeric"
            value={tickets.transferLimit}
            disabled={off('tickets.transferLimit')}
            onChange={(e) => set({ transferLimit: e.target.value })}
          />
        </Field>
        <Field
          label="Face-value resale"
          name="tickets.resale"
          error={err('tickets.resale')}
          hint={lockOf('tickets.resale') ?? 'A fan who cannot go lists the ticket; fans on the waitlist are offered it first, in order.'}
        >
          <select
            name="tickets.resale"
            value={tickets.resale}
            disabled={off('tickets.resale')}
            onChange={(e) => set({ resale: e.target.value as TicketsDraft['resale'] })}
          >
            <option value="true">On</option>
            <option value="false">Off</option>
          </select>
        </Field>
        {tickets.resale === 'true' && (
          <Field
            label="Resale fee cap (% of face value)"
            name="tickets.resaleFeeCapPercent"
            error={err('tickets.resaleFeeCapPercent')}
            hint={lockOf('tickets.resaleFeeCapPercent') ?? 'The most a seller may ask above face value. 0: face value only.'}
          >
            <input
              name="tickets.resaleFeeCapPercent"
              type="number"
              inputMode="numeric"
              value={tickets.resaleFeeCapPercent}
              disabled={off('tickets.resaleFeeCapPercent')}
              onChange={(e) => set({ resaleFeeCapPercent: e.target.value })}
            />
          </Field>
        )}
      </div>
    </fieldset>
  );
}
