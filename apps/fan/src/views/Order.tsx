import { useFan } from '../context';

/** The order confirmation. */
export default function Order() {
  const { t, f, event, progress } = useFan();
  const o = progress.order!;
  return (
    <section className="card order" data-testid="order">
      <h2>{t.orderTitle}</h2>
      <p className="order-id" data-testid="order-id">
        {t.orderNumber(o.orderId.slice(0, 8).toUpperCase())}
      </p>
      <p>
        {t.orderSeats(o.seatCount)} · <span data-testid="order-paid">{t.orderPaid(f.money(o.amountCents, event.currency))}</span>
      </p>
      <ul className="held">
        {o.seats.map((s) => (
          <li key={s.id}>{t.seatLine(event.sections.find((x) => x.code === s.section)?.name ?? s.section, s.row, s.number)}</li>
        ))}
        {(o.units ?? []).map((u) => (
          <li key={u.section}>{t.unitsLine(event.sections.find((x) => x.code === u.section)?.name ?? u.section, u.quantity)}</li>
        ))}
      </ul>
    </section>
  );
}
