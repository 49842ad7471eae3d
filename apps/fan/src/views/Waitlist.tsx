import { useEffect, useState, type FormEvent } from 'react';
import { call, serverNow } from '../api';
import { refusalText, useFan } from '../context';
import { usePoll, useNow } from '../poll';
import type { WaitlistClaim } from '@onsale/shared/inventory/schema';

interface Listing {
  id: string;
  name: string;
  performances: { eventId: string; name: string; startsAt: string; date: string; soldOut: boolean }[];
  sections: string[];
  priceLevels: string[];
}
interface Entry {
  listingId: string;
  criteria: { dateFrom: string | null; dateTo: string | null; maxPriceCents: number | null; quantity: number; sections: string[] | null };
  expiresAt: string;
  place: number;
  listingEntries: number;
}
interface Notification {
  id: number;
  kind: string;
  createdAt: string;
  listingId: string;
  eventId: string | null;
  eventName: string | null;
  message: string;
  claim: { offerId: string | null; status: string; quantity: number | null; expiresAt: string; claimToken: string | null } | null;
  links: { decline: string | null };
}

/** After the sale: the listing's waitlist with its criteria form, the fan's place, and offers with their claim button. */
export default function Waitlist() {
  const { t, f, event, api, update } = useFan();
  const [listing, setListing] = useState<Listing | null>(null);
  const [entry, setEntry] = useState<Entry | null | undefined>(undefined);
  const [form, setForm] = useState({
    dateFrom: event.startsAt.slice(0, 10),
    dateTo: event.startsAt.slice(0, 10),
    maxPriceCents: '',
    quantity: '2',
    sections: [] as string[],
  });
  const [message, setMessage] = useState<string | null>(null);
  const [notes, setNotes] = useState<Notification[]>([]);
  const [busy, setBusy] = useState(false);
  const now = useNow(1000, serverNow);

  async function loadEntry() {
    const r = await call<{ entries: Entry[] }>(api, 'GET', '/me/waitlist');
    if (r.kind !== 'ok') return;
    const mine = r.body.entries.find((e) => e.listingId === event.listingId) ?? null;
    setEntry(mine);
    if (mine)
      setForm({
        dateFrom: mine.criteria.dateFrom ?? '',
        dateTo: mine.criteria.dateTo ?? '',
        maxPriceCents: mine.criteria.maxPriceCents === null ? '' : String(mine.criteria.maxPriceCents),
        quantity: String(mine.criteria.quantity),
        sections: mine.criteria.sections ?? [],
      });
  }
  useEffect(() => {
    void call<Listing>(api, 'GET', `/listings/${event.listingId}`).then((r) => r.kind === 'ok' && setListing(r.body));
    void loadEntry();
  }, []);

  // The inbox: offers reach the page on the next read (every 15 s with jitter; slower while hidden).
  usePoll(
    async () => {
      const r = await call<{ notifications: Notification[] }>(api, 'GET', '/me/notifications');
      if (r.kind === 'ok') setNotes(r.body.notifications.filter((n) => n.listingId === event.listingId));
      return r.kind === 'busy' ? r.retryAfterSeconds : 15;
    },
    entry !== undefined && entry !== null,
    entry?.listingId,
  );

  async function join(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setMessage(null);
    const criteria = {
      ...(form.dateFrom ? { dateFrom: form.dateFrom } : {}),
      ...(form.dateTo ? { dateTo: form.dateTo } : {}),
      ...(form.maxPriceCents ? { maxPriceCents: Number(form.maxPriceCents) } : {}),
      quantity: Number(form.quantity),
      ...(form.sections.length > 0 ? { sections: form.sections } : {}),
    };
    const r = await call<Entry>(api, 'PUT', `/listings/${event.listingId}/waitlist`, { body: { criteria } });
    setBusy(false);
    if (r.kind === 'ok') {
      setMessage(t.wlJoined);
      await loadEntry();
    } else setMessage(r.kind === 'refused' ? refusalText(t, r.body) : t.busy);
  }

  async function leave() {
    const r = await call(api, 'DELETE', `/listings/${event.listingId}/waitlist`);
    if (r.kind === 'ok') {
      setEntry(null);
      setMessage(t.wlLeft);
    }
  }

  async function claim(n: Notification) {
    setBusy(true);
    const r = await call<WaitlistClaim>(api, 'POST', '/waitlist/claims', {
      body: { claimToken: n.claim!.claimToken },
    });
    setBusy(false);
    if (r.kind === 'ok') {
      const { admissionToken, offerId: _offerId, ...hold } = r.body;
      update({
        hold: { ...hold, status: 'HELD', extended: false },
        admissionToken,
        admissionExpiresAt: serverNow() + 600_000,
        payKey: undefined,
        notice: t.claimed,
      });
    } else setMessage(r.kind === 'refused' ? refusalText(t, r.body) : t.busy);
  }

  async function decline(n: Notification) {
    if (!n.claim?.offerId) return;
    await call(api, 'POST', `/waitlist/offers/${n.claim.offerId}/decline`);
    setNotes((all) => all.filter((x) => x.id !== n.id));
  }

  const prices = [...new Set(event.sections.map((s) => s.priceCents))].sort((a, b) => a - b);
  const sectionName = (code: string) => event.sections.find((s) => s.code === code)?.name ?? code;
  const offers = notes.filter((n) => n.claim && n.claim.claimToken && n.claim.status === 'OPEN' && Date.parse(n.claim.expiresAt) > now);
  const others = notes.filter((n) => !offers.includes(n));
  return (
    <>
      {offers.map((n) => (
        <section className="card offer" key={n.id} data-testid="offer">
          <h2>{t.offerTitle(n.claim!.quantity ?? 1)}</h2>
          <p>{n.message}</p>
          <p className="countdown" data-testid="offer-deadline">
            {t.offerDeadline(f.clock((Date.parse(n.claim!.expiresAt) - now) / 1000))}
          </p>
          <div className="actions">
            <button type="button" className="primary" disabled={busy} onClick={() => void claim(n)} data-testid="claim">
              {t.claim}
            </button>
            <button type="button" className="secondary" onClick={() => void decline(n)}>
              {t.decline}
            </button>
          </div>
        </section>
      ))}
      <section className="card waitlist" data-testid="waitlist">
        <h2>{t.waitlistTitle}</h2>
        <p className="muted">{t.waitlistExplain}</p>
        {entry && (
          <p className="place-line" data-testid="waitlist-place" data-place={entry.place}>
            {t.wlPlace(f.number(entry.place), f.number(entry.listingEntries))} {t.wlExpires(f.dateTime(new Date(entry.expiresAt)))}
          </p>
        )}
        <form onSubmit={(e) => void join(e)} className="wl-form" data-testid="waitlist-form">
          <div className="row2">
            <label>
              {t.wlDateFrom}
              <input type="date" value={form.dateFrom} onChange={(e) => setForm({ ...form, dateFrom: e.target.value })} />
            </label>
            <label>
              {t.wlDateTo}
              <input type="date" value={form.dateTo} onChange={(e) => setForm({ ...form, dateTo: e.target.value })} />
            </label>
          </div>
          <div className="row2">
            <label>
              {t.wlMaxPrice}
              <select
                value={form.maxPriceCents}
                onChange={(e) => setForm({ ...form, maxPriceCents: e.target.value })}
                data-testid="wl-price"
              >
                <option value="">{t.wlAnyPrice}</option>
                {prices.map((p) => (
                  <option key={p} value={p}>
                    {f.money(p, event.currency)}
                  </option>
                ))}
              </select>
            </label>
            <label>
              {t.wlQuantity}
              <select value={form.quantity} onChange={(e) => setForm({ ...form, quantity: e.target.value })} data-testid="wl-quantity">
                {Array.from({ length: event.perAccountSeatLimit }, (_, i) => String(i + 1)).map((q) => (
                  <option key={q}>{q}</option>
                ))}
              </select>
            </label>
          </div>
          <fieldset>
            <legend>{t.wlSections}</legend>
            <p className="muted small">{form.sections.length === 0 ? t.wlAnySection : ''}</p>
            {(listing?.sections ?? event.sections.map((s) => s.code)).map((code) => (
              <label key={code} className="check">
                <input
                  type="checkbox"
                  checked={form.sections.includes(code)}
                  onChange={(e) =>
                    setForm({ ...form, sections: e.target.checked ? [...form.sections, code] : form.sections.filter((c) => c !== code) })
                  }
                />
                {sectionName(code)}
              </label>
            ))}
          </fieldset>
          <button type="submit" className="primary" disabled={busy} data-testid="waitlist-join">
            {entry ? t.wlUpdate : t.wlJoin}
          </button>
          {entry && (
            <button type="button" className="secondary" onClick={() => void leave()}>
              {t.wlLeave}
            </button>
          )}
        </form>
        {message && (
          <p role="status" data-testid="waitlist-message">
            {message}
          </p>
        )}
      </section>
      {entry && (
        <section className="card" data-testid="notifications">
          <h2>{t.notifications}</h2>
          {others.length === 0 && offers.length === 0 ? (
            <p className="muted">{t.noNotifications}</p>
          ) : (
            <ul>
              {others.map((n) => (
                <li key={n.id}>
                  {n.message} <span className="muted small">{f.dateTime(new Date(n.createdAt))}</span>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
    </>
  );
}
