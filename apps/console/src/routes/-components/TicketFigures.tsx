import { useQuery } from '@tanstack/react-query';
import { messageOf, useTRPC } from '../../trpc';
import { formatCount } from './format';

/**
 * The tickets of one event in figures (issue 29): issued with paid orders, delivered (codes out) and still to come,
 * passed to friends, listed on the face-value exchange and resold through it, and the door: admitted and refused
 * scans. Read every few seconds; the war room and the post-sale review both show it.
 */
export function TicketFigures({ eventId, refreshMs = 5_000 }: { eventId: string; refreshMs?: number }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.tickets.counts.queryOptions({ eventId }, { refetchInterval: refreshMs }));
  const c = q.data;
  const tile = (label: string, value: number | undefined, testId: string, note?: string, tone = '') => (
    <div className={`tile ${tone}`} data-testid={testId}>
      <span className="tile-label">{label}</span>
      <span className="tile-value" data-value={value ?? ''}>
        {value === undefined ? '—' : formatCount(value)}
      </span>
      {note && <span className="tile-note">{note}</span>}
    </div>
  );
  return (
    <section aria-labelledby={`tickets-${eventId}`} data-testid="ticket-figures">
      <h2 id={`tickets-${eventId}`}>Tickets</h2>
      {q.error && (
        <p className="form-error" role="alert">
          {messageOf(q.error)}
        </p>
      )}
      <div className="tiles">
        {tile('Issued', c?.issued, 'tickets-issued', 'one per seat of a paid order', 'tile-sold')}
        {tile('Delivered', c?.delivered, 'tickets-delivered', c ? `${formatCount(c.pendingDelivery)} still to arrive` : undefined)}
        {tile('Transferred', c?.transferred, 'tickets-transferred', 'given to another account')}
        {tile('Listed', c?.listed, 'tickets-listed', 'on the face-value exchange now')}
        {tile('Resold', c?.resold, 'tickets-resold', 'bought through the exchange')}
        {tile(
          'Scanned in',
          c?.admitted,
          'tickets-scanned',
          c ? `${formatCount(c.scanned)} scans · ${formatCount(c.refusedScans)} refused` : undefined,
          c && c.refusedScans > 0 ? 'tile-held' : 'tile-ok',
        )}
      </div>
    </section>
  );
}
