import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { messageOf, useTRPC } from '../../trpc';
import { Field } from './Field';
import { TableBlock } from './GridTable';
import { ReasonAction } from './ReasonAction';

const STATUS_WORDS: Record<string, string> = {
  PENDING_DELIVERY: 'Not delivered yet',
  ACTIVE: 'Active',
  LISTED: 'Listed for resale',
  TRANSFERRED: 'Transferred',
  RESOLD: 'Resold',
  REVOKED: 'Revoked',
  ADMITTED: 'Admitted',
};

/**
 * Fan support's tickets: find the tickets of an order by the reference the fan reads (the order number or the
 * payment reference), see who holds each now and whether it is bound to a device, and reissue one to a new device
 * (a fan with a lost or broken phone): the old device's codes stop, the next device the fan signs in on gets it.
 */
export function TicketSupport({ canAct }: { canAct: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [typed, setTyped] = useState('');
  const [reference, setReference] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const found = useQuery(trpc.tickets.byOrder.queryOptions({ reference: reference ?? '' }, { enabled: reference !== null, retry: false }));
  const reissue = useMutation(trpc.tickets.reissue.mutationOptions());

  function submit(e: FormEvent) {
    e.preventDefault();
    const r = typed.trim();
    if (!r) return setError('enter the order reference the fan reads on their order');
    setError(null);
    setReference(r);
  }

  return (
    <section className="section-block" data-testid="ticket-support" aria-labelledby="ticket-support-title">
      <h2 id="ticket-support-title">Tickets by order</h2>
      <form className="card lookup-form" onSubmit={submit} noValidate data-testid="ticket-lookup">
        <Field
          label="Order reference"
          name="reference"
          error={error ?? undefined}
          hint="The order number the fan reads, or the payment reference."
        >
          <input
            name="reference"
            value={typed}
            onChange={(e) => setTyped(e.target.value)}
            autoComplete="off"
            data-testid="ticket-reference"
          />
        </Field>
        <button type="submit" className="primary">
          Find tickets
        </button>
      </form>
      {found.error && (
        <p className="form-error" role="alert" data-testid="ticket-lookup-error">
          {messageOf(found.error)}
        </p>
      )}
      {found.data && (
        <TableBlock
          title={`Tickets of order ${reference}`}
          items={found.data}
          empty="That order has no tickets."
          columns={['Ticket', 'Seat', 'Holder', 'Status', 'Device', 'Action']}
          testId="ticket-rows"
          row={(t) => (
            <tr key={t.ticketId} data-testid="ticket-row" data-status={t.status}>
              <td className="mono">{t.ticketId.slice(0, 8)}</td>
              <td>{t.seat.row !== null && t.seat.number !== null ? `${t.seat.section} ${t.seat.row}-${t.seat.number}` : t.seat.section}</td>
              <td>{t.holderAccountId}</td>
              <td>{STATUS_WORDS[t.status] ?? t.status}</td>
              <td>{t.boundToDevice ? `bound · ${t.deviceMovesLeft} moves left` : 'not bound yet'}</td>
              <td>
                {canAct && t.status === 'ACTIVE' && (
                  <ReasonAction
                    label="Reissue to a new device"
                    what="The codes on the fan's current device stop at once; the next device the fan opens the ticket on gets it."
                    testId="ticket-reissue"
                    run={async (reason) => {
                      await reissue.mutateAsync({ ticketId: t.ticketId, reason });
                      await queryClient.invalidateQueries({ queryKey: trpc.tickets.byOrder.queryKey({ reference: reference ?? '' }) });
                      return `Ticket ${t.ticketId.slice(0, 8)} reissued: its old codes no longer open the door.`;
                    }}
                  />
                )}
              </td>
            </tr>
          )}
        />
      )}
    </section>
  );
}
