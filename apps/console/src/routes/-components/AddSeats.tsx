import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { inventoryAddSchema } from '@onsale/shared/support/schema';
import { fieldErrors } from '@onsale/shared/users/schema';
import { fieldErrorsOf, messageOf, useTRPC } from '../../trpc';
import { ErrorSummary } from './ErrorSummary';
import { Field } from './Field';

/**
 * New inventory for an event on sale (a production hold released, a layout change): rows of seats appended at the back
 * of a section, the capacity raised, audited; after a sell-out the new seats go to the waitlist first. As `inventory:add`.
 */
export function AddSeats({
  eventId,
  sections,
  onAdded,
}: {
  eventId: string;
  sections: { code: string; name: string; kind?: string }[];
  onAdded: () => void;
}) {
  const trpc = useTRPC();
  const reserved = sections.filter((s) => s.kind !== 'GA');
  const [section, setSection] = useState(reserved[0]?.code ?? '');
  const [rows, setRows] = useState('1');
  const [seatsPerRow, setSeatsPerRow] = useState('10');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [done, setDone] = useState<string | null>(null);
  const add = useMutation(
    trpc.operations.addSeats.mutationOptions({
      onSuccess: (r) => {
        setDone(
          `Added ${r.added} seats to ${r.section} from row ${r.firstRow}${r.toWaitlist ? '; the waitlist is offered them first' : ''}.`,
        );
        onAdded();
      },
      onError: (error) => {
        const fields = fieldErrorsOf(error);
        setErrors(Object.keys(fields).length ? fields : { section: messageOf(error, { change: true }) });
      },
    }),
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    setDone(null);
    const parsed = inventoryAddSchema.safeParse({ eventId, section, rows: Number(rows), seatsPerRow: Number(seatsPerRow) });
    if (!parsed.success) return setErrors(fieldErrors(parsed.error));
    setErrors({});
    add.mutate(parsed.data);
  }
  if (reserved.length === 0) return null;
  return (
    <details className="card" data-testid="add-seats">
      <summary>Add seats</summary>
      <p className="muted">
        Rows of new seats at the back of a section; capacity rises. After a sell-out the waitlist is offered them first. Audited.
      </p>
      <form className="filters" onSubmit={submit} noValidate>
        <ErrorSummary errors={errors} labels={{ section: 'Section', rows: 'Rows', seatsPerRow: 'Seats per row' }} />
        <Field label="Section" name="section" error={errors.section}>
          <select value={section} onChange={(e) => setSection(e.target.value)}>
            {reserved.map((s) => (
              <option key={s.code} value={s.code}>
                {s.name} ({s.code})
              </option>
            ))}
          </select>
        </Field>
        <Field label="Rows" name="rows" error={errors.rows}>
          <input inputMode="numeric" value={rows} onChange={(e) => setRows(e.target.value)} />
        </Field>
        <Field label="Seats per row" name="seatsPerRow" error={errors.seatsPerRow}>
          <input inputMode="numeric" value={seatsPerRow} onChange={(e) => setSeatsPerRow(e.target.value)} />
        </Field>
        <div className="page-actions">
          <button type="submit" className="primary" disabled={add.isPending} data-testid="add-seats-submit">
            Add seats
          </button>
        </div>
      </form>
      {done && (
        <p className="form-ok" role="status" data-testid="add-seats-done">
          {done}
        </p>
      )}
    </details>
  );
}
