import { useEffect, useState, type FormEvent } from 'react';
import { call, serverNow } from '../api';
import { refusalText, useFan } from '../context';
import { useNow } from '../poll';
import type { OrderConfirmation } from '@onsale/shared/checkout/schema';
import type { HoldExtension } from '@onsale/shared/inventory/schema';
import type { HoldView, OrderView } from '../session';

/** The hold: what is held, a visible countdown, the one extension when payment starts, the card form, the order. */
export default function Hold() {
  const { t, f, event, api, progress, update, config, announce } = useFan();
  const hold = progress.hold!;
  const now = useNow(1000, serverNow);
  const [paying, setPaying] = useState(false);
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusalState] = useState<string | null>(null);
  const setRefusal = (text: string | null) => {
    setRefusalState(text);
    if (text) announce(text);
  };
  const [card, setCard] = useState('');
  const [expiry, setExpiry] = useState('12/30');
  const admission = { 'x-admission-token': progress.admissionToken ?? '' };
  const left = (Date.parse(hold.expiresAt) - now) / 1000;

  // Read the hold back on arrival (a reload, a claim): read-time expiry says whether it still stands.
  useEffect(() => {
    void call<HoldView>(api, 'GET', `/holds/${hold.holdId}`, { headers: admission }).then((r) => {
      if (r.kind === 'refused' && r.body.error === 'HOLD_LOST') lost(r.body);
      if (r.kind === 'ok') {
        if (r.body.status === 'HELD' || r.body.status === 'PAYING') update({ hold: r.body });
        else if (r.body.status !== 'PURCHASED') gone(r.body.status === 'EXPIRED' ? 'HOLD_EXPIRED' : 'HOLD_RELEASED');
      }
    });
  }, [hold.holdId]);

  useEffect(() => {
    if (left <= 0 && !busy) gone('HOLD_EXPIRED');
  }, [left <= 0]);
  // A minute before the hold ends, said once in the live region (the countdown itself is not read every second).
  useEffect(() => {
    if (left > 0 && left <= 60) announce(t.holdEndingSoon);
  }, [left > 0 && left <= 60]);

  function gone(code: string) {
    update({ hold: undefined, payKey: undefined, notice: t.refused[code] });
  }

  /** A hold lost to a database fault (410 HOLD_LOST): the answer's token lets the fan hold again at once. */
  function lost(err: Record<string, unknown>) {
    update({
      hold: undefined,
      payKey: undefined,
      notice: t.refused.HOLD_LOST,
      ...(typeof err.admissionToken === 'string' ? { admissionToken: err.admissionToken } : {}),
    });
  }

  async function startPayment() {
    setPaying(true);
    if (hold.extended || event.holdExtensionSeconds <= 0) return;
    const r = await call<HoldExtension>(api, 'POST', `/holds/${hold.holdId}/extend`, { headers: admission });
    if (r.kind === 'ok') update({ hold: { ...hold, expiresAt: r.body.expiresAt, extended: true } });
    else if (r.kind === 'refused' && (r.body.error === 'HOLD_EXPIRED' || r.body.error === 'HOLD_RELEASED')) gone(r.body.error);
    else if (r.kind === 'refused' && r.body.error === 'HOLD_LOST') lost(r.body);
  }

  async function pay(e: FormEvent, retryKey?: string) {
    e.preventDefault();
    setBusy(true);
    setRefusal(null);
    const key = retryKey ?? progress.payKey ?? crypto.randomUUID();
    update({ payKey: key });
    const [mm, yy] = expiry.split('/').map((x) => Number(x.trim()));
    const instrument = {
      type: 'card',
      number: card.replace(/[\s-]/g, ''),
      ...(mm && yy ? { expMonth: mm, expYear: yy < 100 ? 2000 + yy : yy } : {}),
    };
    const r = await call<OrderConfirmation>(api, 'POST', `/holds/${hold.holdId}/checkout`, {
      body: { payment: { instrument } },
      headers: { ...admission, 'idempotency-key': key },
    });
    if (r.kind === 'ok') {
      const order: OrderView = {
        orderId: r.body.orderId,
        holdId: hold.holdId,
        amountCents: r.body.amountCents,
        seatCount: r.body.seatCount,
        seats: hold.seats,
        units: hold.units,
      };
      update({ order, hold: undefined, payKey: undefined, admissionToken: undefined });
      return;
    }
    if (r.kind === 'busy') {
      // Nothing was charged, or the same key finds the charge: try again with the same key after Retry-After.
      setRefusal(r.body?.error === 'PAYMENT_GATEWAY_BUSY' ? t.refused.PAYMENT_GATEWAY_BUSY! : r.offline ? t.offline : t.busy);
      setTimeout(() => void pay(e, key), r.retryAfterSeconds * 1000);
      return;
    }
    setBusy(false);
    const err = r.body;
    if (err.error === 'HOLD_EXPIRED' || err.error === 'HOLD_RELEASED') return gone(err.error);
    if (err.error === 'HOLD_LOST') return lost(err);
    if (err.error === 'CHECKOUT_IN_PROGRESS') {
      setRefusal(t.refused.CHECKOUT_IN_PROGRESS!);
      setTimeout(() => void pay(e, key), 2000);
      setBusy(true);
      return;
    }
    // A declined card (or another refusal) ends this attempt: the next one gets a new key.
    update({ payKey: undefined });
    setRefusal(err.field?.startsWith('payment') && !t.refused[err.error] ? t.somethingWrong(err.message) : refusalText(t, err));
  }

  async function release() {
    setBusy(true);
    await call(api, 'DELETE', `/holds/${hold.holdId}`, { headers: admission });
    setBusy(false);
    update({ hold: undefined, payKey: undefined, notice: t.released });
  }

  return (
    <section className="card hold" data-testid="hold">
      <h2>{t.holdTitle}</h2>
      <p
        className={`countdown${left < 60 ? ' urgent' : ''}`}
        data-testid="hold-countdown"
        data-seconds={Math.max(0, Math.ceil(left))}
        role="timer"
        aria-live="off"
      >
        {t.holdCountdown(f.clock(left))}
      </p>
      {hold.extended && (
        <p className="muted small" data-testid="hold-extended">
          {t.holdExtended}
        </p>
      )}
      <ul className="held" data-testid="held-seats">
        {hold.seats.map((s) => (
          <li key={s.id}>
            {t.seatLine(event.sections.find((x) => x.code === s.section)?.name ?? s.section, s.row, s.number)} ·{' '}
            {f.money(s.priceCents, event.currency)}
          </li>
        ))}
        {(hold.units ?? []).map((u) => (
          <li key={u.section}>{t.unitsLine(event.sections.find((x) => x.code === u.section)?.name ?? u.section, u.quantity)}</li>
        ))}
      </ul>
      <p className="total">
        {t.total}: <strong data-testid="hold-total">{f.money(hold.amountCents, event.currency)}</strong>
      </p>
      {!paying ? (
        <div className="actions">
          <button type="button" className="primary" onClick={() => void startPayment()} data-testid="continue-to-pay">
            {t.continueToPay}
          </button>
          <button type="button" className="secondary" onClick={() => void release()} disabled={busy}>
            {t.release}
          </button>
        </div>
      ) : (
        <form className="pay" onSubmit={(e) => void pay(e)} data-testid="pay-form">
          <h3>{t.payTitle}</h3>
          <label>
            {t.cardNumber}
            <input
              inputMode="numeric"
              autoComplete="cc-number"
              value={card}
              onChange={(e) => setCard(e.target.value)}
              required
              minLength={12}
              maxLength={23}
              data-testid="card-number"
            />
          </label>
          <label>
            {t.expiry}
            <input
              inputMode="numeric"
              autoComplete="cc-exp"
              value={expiry}
              onChange={(e) => setExpiry(e.target.value)}
              pattern="\d{1,2}\s*/\s*\d{2,4}"
            />
          </label>
          {config.testCards && (
            <div className="test-cards" data-testid="test-cards">
              <p className="small">{t.testCards}</p>
              <ul>
                {config.testCards.map((c) => (
                  <li key={c.number}>
                    <button type="button" className="link mono" onClick={() => setCard(c.number)}>
                      {c.number.replace(/(\d{4})(?=\d)/g, '$1 ')}
                    </button>{' '}
                    {c.outcome === 'success' ? t.testCardOk : t.testCardDeclined}
                  </li>
                ))}
              </ul>
            </div>
          )}
          {refusal && (
            <p className="refusal" data-testid="refusal">
              {refusal}
            </p>
          )}
          <button type="submit" className="primary" disabled={busy} data-testid="pay">
            {busy ? t.paying : t.payButton(f.money(hold.amountCents, event.currency))}
          </button>
        </form>
      )}
    </section>
  );
}
