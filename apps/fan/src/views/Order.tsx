import { useState } from 'react';
import { useFan } from '../context';

/**
 * The order confirmation a fan keeps: the show (date, and time on the venue's clock with its zone), the venue, the
 * seats, what was paid, the reference to quote, how the tickets arrive, and the show for the fan's calendar.
 */
export default function Order() {
  const { t, f, event, progress, account } = useFan();
  const [calendarFailed, setCalendarFailed] = useState(false);
  const o = progress.order!;
  const reference = o.orderId.slice(0, 8).toUpperCase();
  const startsAt = new Date(event.startsAt);
  const sectionName = (code: string) => event.sections.find((x) => x.code === code)?.name ?? code;
  const seatLines = [
    ...o.seats.map((s) => t.seatLine(sectionName(s.section), s.row, s.number)),
    ...(o.units ?? []).map((u) => t.unitsLine(sectionName(u.section), u.quantity)),
  ];

  async function addToCalendar() {
    setCalendarFailed(false);
    try {
      const { downloadCalendar } = await import('../calendar');
      downloadCalendar({
        eventId: event.id,
        orderReference: reference,
        name: event.name,
        venueName: event.venueName,
        startsAt: event.startsAt,
        details: [t.orderNumber(reference), ...seatLines, t.ticketsArrive(account.displayName)],
        pageUrl: `${location.origin}/e/${encodeURIComponent(event.id)}`,
      });
    } catch {
      setCalendarFailed(true);
    }
  }

  return (
    <section className="card order" data-testid="order" aria-labelledby="order-title">
      <h2 id="order-title">{t.orderTitle}</h2>
      <p className="order-id" data-testid="order-id">
        {t.orderNumber(reference)}
      </p>
      <dl className="order-facts">
        <dt>{t.orderShow}</dt>
        <dd data-testid="order-show">{event.name}</dd>
        <dt>{t.orderWhen}</dt>
        <dd data-testid="order-when">
          {f.longDate(startsAt, event.timeZone)}
          <br />
          {t.venueClock(f.venueTime(startsAt, event.timeZone))}
        </dd>
        <dt>{t.orderWhere}</dt>
        <dd data-testid="order-venue">{event.venueName}</dd>
        <dt>{t.orderSeats(o.seatCount)}</dt>
        <dd>
          <ul className="held" data-testid="order-seats">
            {seatLines.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </dd>
        <dt>{t.total}</dt>
        <dd data-testid="order-paid">{t.orderPaid(f.money(o.amountCents, event.currency))}</dd>
      </dl>
      <h3>{t.ticketsArriveTitle}</h3>
      <p data-testid="order-delivery">{t.ticketsArrive(account.displayName)}</p>
      <p className="muted small">{t.keepReference}</p>
      <div className="actions">
        <button type="button" className="secondary" onClick={() => void addToCalendar()} data-testid="add-to-calendar">
          {t.addToCalendar}
        </button>
      </div>
      {calendarFailed && (
        <p className="error" role="alert">
          {t.busy}
        </p>
      )}
    </section>
  );
}
