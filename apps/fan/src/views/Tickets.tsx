import { lazy, Suspense, useEffect, useRef, useState, type FormEvent } from 'react';
import { call } from '../api';
import { refusalText, useFan } from '../context';
import { usePoll } from '../poll';
import type { TicketView } from '@onsale/shared/tickets/schema';

// The QR encoder loads only when a ticket has a code to show: the waiting room's scripts stay small.
const TicketCode = lazy(() => import('./TicketCode'));

/** GET /me/tickets, one ticket (the store API's own answer schema). */
export type FanTicket = TicketView;
type TicketSeat = TicketView['seat'];

const HELD = new Set(['PENDING_DELIVERY', 'ACTIVE', 'LISTED', 'ADMITTED']);

/**
 * "My tickets" for this event: each ticket the account holds, its code as a QR once delivered ("arrives on" before),
 * and what the fan can do with it: pass it to a friend, or list it at face value for the waitlist (and withdraw it).
 * Tickets passed on or sold stay listed, greyed, so the fan sees where they went.
 */
export default function Tickets() {
  const { t, event, api, progress, update } = useFan();
  const [tickets, setTickets] = useState<FanTicket[] | null>(null);
  const [asked, setAsked] = useState(false);
  const [reload, setReload] = useState(0);
  const [notice, setNotice] = useState<string | null>(null);
  const seatText = useSeatText();

  // Read only when there is a reason to: an order paid on this device, tickets this device saw the account hold for
  // this event (progress.holdsTickets, kept with the fan's progress), or the fan opening "My tickets" (a ticket a
  // friend passed on, bought on another device). A fan in the waiting room, the on-sale's crowd, reads nothing.
  // While the fan holds tickets, read again every half minute (a delivery, a sale on the exchange, a move elsewhere).
  const reading = asked || progress.order !== undefined || progress.holdsTickets === true;
  usePoll(
    async () => {
      const r = await call<{ tickets: FanTicket[] }>(api, 'GET', '/me/tickets');
      if (r.kind === 'busy') return r.retryAfterSeconds;
      if (r.kind !== 'ok') return null;
      const mine = r.body.tickets.filter((x) => x.eventId === event.id);
      setTickets(mine);
      if (mine.length > 0 !== (progress.holdsTickets === true)) update({ holdsTickets: mine.length > 0 });
      return mine.length > 0 ? 30 : null;
    },
    reading,
    `${reload}:${progress.order?.orderId ?? ''}`,
  );

  if (!reading)
    return (
      <p className="card">
        <button type="button" className="link" data-testid="tickets-open" onClick={() => setAsked(true)}>
          {t.ticketsTitle}
        </button>
      </p>
    );
  if (!tickets) return null;
  if (tickets.length === 0)
    return asked ? (
      <p className="card muted" data-testid="tickets-none">
        {t.ticketsNone}
      </p>
    ) : null;
  const held = tickets.filter((x) => HELD.has(x.status));
  const gone = tickets.filter((x) => !HELD.has(x.status));
  return (
    <section className="card tickets" data-testid="my-tickets" aria-labelledby="my-tickets-title">
      <h2 id="my-tickets-title">{t.ticketsTitle}</h2>
      {notice && (
        <p className="notice" role="status" data-testid="tickets-notice">
          {notice}
        </p>
      )}
      {held.length === 0 && <p className="muted">{t.ticketsNoneHeld}</p>}
      <ul className="ticket-list">
        {held.map((x) => (
          <TicketItem
            key={x.ticketId}
            ticket={x}
            onChanged={(done) => {
              setNotice(done ?? null);
              setReload((n) => n + 1);
            }}
          />
        ))}
      </ul>
      {gone.length > 0 && (
        <ul className="ticket-list gone" data-testid="tickets-gone">
          {gone.map((x) => (
            <li key={x.ticketId} className="ticket gone" data-testid="ticket" data-status={x.status} data-ticket-id={x.ticketId}>
              <span>{seatText(x.seat)}</span> <span className="muted small">{t.ticketStatus[x.status] ?? x.status}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function useSeatText(): (s: TicketSeat) => string {
  const { t, event } = useFan();
  return (s) => {
    const name = event.sections.find((x) => x.code === s.section)?.name ?? s.section;
    return s.row && s.number ? t.seatLine(name, s.row, s.number) : t.unitsLine(name, 1);
  };
}

function TicketItem({ ticket, onChanged }: { ticket: FanTicket; onChanged: (done?: string) => void }) {
  const { t, f, event, api } = useFan();
  const seatText = useSeatText();
  const [open, setOpen] = useState<'transfer' | 'resale' | null>(null);
  const [friend, setFriend] = useState('');
  const face = ticket.faceValueCents;
  const cap = ticket.resale?.capCents ?? null;
  const currency = ticket.currency || event.currency;
  const [price, setPrice] = useState((face / 100).toFixed(2));
  const [message, setMessage] = useState<{ text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const path = `/tickets/${encodeURIComponent(ticket.ticketId)}`;
  // The form a fan opens takes the focus (autoFocus only works on a page's first load): type, then Enter sends it.
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (open) field.current?.focus();
  }, [open]);

  async function act(method: 'POST' | 'DELETE', to: string, body: unknown, done: string) {
    setBusy(true);
    setMessage(null);
    const r = await call(api, method, to, body === undefined ? {} : { body });
    setBusy(false);
    if (r.kind === 'ok') {
      setOpen(null);
      onChanged(done);
    } else setMessage({ text: r.kind === 'refused' ? refusalText(t, r.body) : t.busy });
  }

  function transfer(e: FormEvent) {
    e.preventDefault();
    if (!friend.trim()) return setMessage({ text: t.ticketFriendMissing });
    void act('POST', `${path}/transfer`, { toAccountId: friend.trim() }, t.ticketTransferred(friend.trim()));
  }
  function list(e: FormEvent) {
    e.preventDefault();
    const cents = Math.round(Number(price.replace(',', '.')) * 100);
    if (!Number.isFinite(cents) || cents <= 0) return setMessage({ text: t.ticketPriceInvalid });
    void act('POST', `${path}/resale`, { priceCents: cents }, t.ticketListed);
  }

  const id = ticket.ticketId.slice(0, 8);
  return (
    <li className="ticket" data-testid="ticket" data-status={ticket.status} data-ticket-id={ticket.ticketId}>
      <h3 className="ticket-seat">{seatText(ticket.seat)}</h3>
      {ticket.status === 'PENDING_DELIVERY' && (
        <p className="ticket-arrives" data-testid="ticket-arrives">
          {t.ticketArrives(f.dateTime(new Date(ticket.deliverAt)))}
        </p>
      )}
      {ticket.status === 'ACTIVE' && (
        <Suspense fallback={<p className="muted">{t.loading}</p>}>
          <TicketCode ticketId={ticket.ticketId} onChanged={() => onChanged()} />
        </Suspense>
      )}
      {ticket.status === 'ADMITTED' && <p data-testid="ticket-admitted">{t.ticketStatus.ADMITTED}</p>}
      {ticket.status === 'LISTED' && (
        <p data-testid="ticket-listed">{t.ticketListedFor(ticket.resale ? f.money(ticket.resale.priceCents, currency) : '')}</p>
      )}

      {(ticket.can.transfer || ticket.can.resell) && (
        <div className="ticket-actions">
          {ticket.can.transfer && (
            <button
              type="button"
              className="secondary"
              aria-expanded={open === 'transfer'}
              aria-controls={`transfer-${id}`}
              onClick={() => setOpen(open === 'transfer' ? null : 'transfer')}
              data-testid="ticket-transfer-open"
            >
              {t.ticketTransfer}
            </button>
          )}
          {ticket.can.resell && (
            <button
              type="button"
              className="secondary"
              aria-expanded={open === 'resale'}
              aria-controls={`resale-${id}`}
              onClick={() => setOpen(open === 'resale' ? null : 'resale')}
              data-testid="ticket-resale-open"
            >
              {t.ticketResale}
            </button>
          )}
        </div>
      )}
      {open === 'transfer' && (
        <form id={`transfer-${id}`} className="ticket-form" onSubmit={transfer} data-testid="ticket-transfer-form">
          <p className="small muted">
            {t.ticketTransferExplain}
            {` ${t.ticketTransfersLeft(ticket.transfersLeft)}`}
          </p>
          <label>
            {t.ticketFriend}
            <input value={friend} onChange={(e) => setFriend(e.target.value)} autoComplete="off" ref={field} data-testid="ticket-friend" />
          </label>
          <button type="submit" className="primary" disabled={busy} data-testid="ticket-transfer-send">
            {t.ticketTransferSend}
          </button>
        </form>
      )}
      {open === 'resale' && (
        <form id={`resale-${id}`} className="ticket-form" onSubmit={list} data-testid="ticket-resale-form">
          <p className="small muted">
            {t.ticketResaleExplain}
            {` ${t.ticketFaceValue(f.money(face, currency))}`}
            {cap != null ? ` ${t.ticketResaleCap(f.money(cap, currency))}` : ''}
          </p>
          <label>
            {t.ticketPrice(currency ?? 'USD')}
            <input value={price} onChange={(e) => setPrice(e.target.value)} inputMode="decimal" ref={field} data-testid="ticket-price" />
          </label>
          <button type="submit" className="primary" disabled={busy} data-testid="ticket-resale-send">
            {t.ticketResaleSend}
          </button>
        </form>
      )}
      {ticket.can.withdraw && (
        <button
          type="button"
          className="secondary"
          disabled={busy}
          onClick={() => void act('DELETE', `${path}/resale`, undefined, t.ticketWithdrawn)}
          data-testid="ticket-withdraw"
        >
          {t.ticketWithdraw}
        </button>
      )}
      {message && (
        <p className="refusal" role="alert" data-testid="ticket-message">
          {message.text}
        </p>
      )}
    </li>
  );
}
