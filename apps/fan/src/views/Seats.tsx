import { useEffect, useState, type FormEvent } from 'react';
import { call, serverNow } from '../api';
import { refusalText, useFan } from '../context';
import { useNow } from '../poll';
import type { HoldView } from '../session';
import { SeatMap, type SectionSeat } from './SeatMap';

interface SeatmapSection {
  code: string;
  name: string;
  kind: 'RESERVED' | 'GA';
  priceCents: number;
  capacity: number;
  available: number;
}
/** Seats of one row side by side, as a refusal offers them. */
interface SeatRun {
  row: string;
  seats: number[];
}
/** A refused hold as the page shows it: the words, and what the fan can take instead. */
interface Refusal {
  text: string;
  alternatives?: { section: string; available?: number }[];
  /** A party that cannot sit together: the split on offer (`split: true` takes it) and the most seats together. */
  split?: { section: string; quantity: number; runs: SeatRun[] };
  together?: { section: string; quantity: number };
  /** A pick that would leave a seat on its own: the seats beside it to hold instead. */
  instead?: { seatIds: number[]; runs: SeatRun[] };
}

/** After admission: best available by section and quantity, or exact seats on the map once seat picking opens. */
export default function Seats() {
  const { t, f, event, api, progress, update, lang, announce } = useFan();
  const [sections, setSections] = useState<SeatmapSection[] | null>(null);
  const [section, setSection] = useState<string>('');
  const [quantity, setQuantity] = useState(2);
  const [mode, setMode] = useState<'best' | 'map'>('best');
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusalState] = useState<Refusal | null>(null);
  // A refusal is shown beside the form and read out politely (the live region), not as an interrupting alert.
  const setRefusal = (r: Refusal | null) => {
    setRefusalState(r);
    if (r) announce(r.text);
  };
  const [seats, setSeats] = useState<SectionSeat[] | null>(null);
  const [picked, setPicked] = useState<number[]>([]);
  const now = useNow(1000, serverNow);
  const admission = { 'x-admission-token': progress.admissionToken ?? '' };
  const pickingOpen = now >= Date.parse(event.seatPickingOpensAt);
  const chosen = sections?.find((s) => s.code === section);
  const limit = event.perAccountSeatLimit;

  async function loadSeatmap() {
    const r = await call<{ sections: SeatmapSection[] }>(api, 'GET', `/events/${event.id}/seatmap`);
    if (r.kind !== 'ok') return;
    setSections(r.body.sections);
    setSection((cur) => cur || (r.body.sections.find((s) => s.available > 0)?.code ?? r.body.sections[0]?.code ?? ''));
  }
  useEffect(() => {
    void loadSeatmap();
    const id = setInterval(() => void loadSeatmap(), 10_000);
    return () => clearInterval(id);
  }, []);

  useEffect(() => {
    if (mode !== 'map' || !section || chosen?.kind === 'GA') return;
    setSeats(null);
    setPicked([]);
    void call<{ seats: SectionSeat[] }>(api, 'GET', `/events/${event.id}/sections/${encodeURIComponent(section)}/seats`, {
      headers: admission,
    }).then((r) => {
      if (r.kind === 'ok') setSeats(r.body.seats);
      else if (r.kind === 'refused') setRefusal({ text: refusalText(t, r.body) });
    });
  }, [mode, section]);

  async function hold(body: unknown) {
    setBusy(true);
    setRefusal(null);
    const r = await call<HoldView>(api, 'POST', `/events/${event.id}/holds`, { body, headers: admission });
    setBusy(false);
    if (r.kind === 'ok') {
      update({ hold: r.body, payKey: undefined });
      return;
    }
    if (r.kind === 'busy') {
      setRefusal({ text: r.status === 429 ? t.refused.RATE_LIMITED! : r.offline ? t.offline : t.busy });
      return;
    }
    const e = r.body;
    if (e.error === 'ADMISSION_REQUIRED' || (e.error === 'TOKEN_EXPIRED' && e.field === 'token')) {
      // The turn is over: back to the line (its status gives a fresh admission while the position may still be used).
      update({ admissionToken: undefined, admissionExpiresAt: undefined });
      return;
    }
    const alternatives = Array.isArray(e.alternatives) ? (e.alternatives as { section: string; available?: number }[]) : undefined;
    const asked = body as { section?: string; quantity?: number; seatIds?: number[] };
    if (
      e.error === 'SECTION_NEARLY_FULL' &&
      typeof e.together === 'number' &&
      asked.section &&
      asked.quantity &&
      e.together < asked.quantity
    ) {
      // The party cannot sit together here: the split on offer, fewer seats together, or another section.
      const split = Array.isArray(e.split) && e.split.length > 1 ? (e.split as SeatRun[]) : null;
      setRefusal({
        text: t.notTogether(asked.quantity),
        alternatives,
        ...(split ? { split: { section: asked.section, quantity: asked.quantity, runs: split } } : {}),
        ...(e.together > 0 ? { together: { section: asked.section, quantity: e.together } } : {}),
      });
    } else if (e.error === 'SINGLE_SEAT_LEFT' && Array.isArray(e.instead) && e.instead.length > 0) {
      const ids = e.instead as number[];
      const byId = new Map((seats ?? []).map((s) => [s.id, s]));
      const runs: SeatRun[] = [];
      for (const id of ids) {
        const s = byId.get(id);
        if (!s) continue;
        const last = runs[runs.length - 1];
        if (last && last.row === s.row && last.seats[last.seats.length - 1] === s.number - 1) last.seats.push(s.number);
        else runs.push({ row: s.row, seats: [s.number] });
      }
      setRefusal({ text: refusalText(t, e), instead: { seatIds: ids, runs } });
    } else setRefusal({ text: refusalText(t, e), alternatives });
    if (e.error === 'SEATS_UNAVAILABLE' && mode === 'map') setMode('best');
    void loadSeatmap();
  }

  const runsText = (runs: SeatRun[]) => runs.map((r) => t.seatRun(r.row, r.seats[0]!, r.seats[r.seats.length - 1]!)).join(', ');

  function submit(e: FormEvent) {
    e.preventDefault();
    if (mode === 'map') void hold({ seatIds: picked });
    else void hold({ section, quantity });
  }

  const until = progress.admissionExpiresAt ? new Date(progress.admissionExpiresAt) : null;
  const max = Math.max(1, Math.min(limit, chosen?.available ?? limit));
  return (
    <section className="card seats" data-testid="seats">
      <h2>{t.admittedTitle}</h2>
      <p className="queue-message" data-testid="admitted-message">
        {event.copy?.[lang]?.ADMITTED ?? ''}
      </p>
      {until && <p className="muted small">{t.admittedUntil(f.time(until))}</p>}
      {pickingOpen && (
        <div className="tabs" role="tablist">
          <button
            type="button"
            role="tab"
            aria-selected={mode === 'best'}
            className={mode === 'best' ? 'tab on' : 'tab'}
            onClick={() => setMode('best')}
          >
            {t.bestAvailable}
          </button>
          <button
            type="button"
            role="tab"
            aria-selected={mode === 'map'}
            className={mode === 'map' ? 'tab on' : 'tab'}
            onClick={() => setMode('map')}
            data-testid="tab-map"
          >
            {t.pickSeats}
          </button>
        </div>
      )}
      {!pickingOpen && <p className="muted small">{t.seatMapOpensAt(f.time(new Date(event.seatPickingOpensAt)))}</p>}
      <form onSubmit={submit}>
        <fieldset className="sections">
          <legend>{t.section}</legend>
          {(sections ?? []).map((s) => (
            <label key={s.code} className={`section-option${s.available === 0 ? ' gone' : ''}`} data-testid={`section-${s.code}`}>
              <input
                type="radio"
                name="section"
                value={s.code}
                checked={section === s.code}
                disabled={s.available === 0}
                onChange={() => setSection(s.code)}
              />
              <span className="section-name">{s.name}</span>
              <span className="section-price">{t.each(f.money(s.priceCents, event.currency))}</span>
              <span className="section-left">{s.available === 0 ? t.soldOutSection : t.available(f.number(s.available))}</span>
            </label>
          ))}
        </fieldset>
        {mode === 'best' || chosen?.kind === 'GA' ? (
          <label className="quantity">
            {t.quantity}
            <select value={Math.min(quantity, max)} onChange={(e) => setQuantity(Number(e.target.value))} data-testid="quantity">
              {Array.from({ length: max }, (_, i) => i + 1).map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
            <span className="muted small">{t.limitNote(limit)}</span>
          </label>
        ) : (
          <SeatMap
            t={t}
            f={f}
            seats={seats}
            picked={picked}
            limit={limit}
            sectionName={chosen?.name ?? section}
            priceCents={chosen?.priceCents ?? 0}
            currency={event.currency}
            onToggle={(id) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : p.length < limit ? [...p, id] : p))}
          />
        )}
        {refusal && (
          <div className="refusal" data-testid="refusal">
            <p>{refusal.text}</p>
            {(refusal.split || refusal.together || refusal.instead) && (
              <ul className="offers">
                {refusal.split && (
                  <li>
                    <button
                      type="button"
                      className="link"
                      data-testid="take-split"
                      disabled={busy}
                      onClick={() => void hold({ section: refusal.split!.section, quantity: refusal.split!.quantity, split: true })}
                    >
                      {t.splitOffer(refusal.split.runs.map((r) => r.seats.length).join(' + '), runsText(refusal.split.runs))}
                    </button>
                  </li>
                )}
                {refusal.together && (
                  <li>
                    <button
                      type="button"
                      className="link"
                      data-testid="take-fewer"
                      disabled={busy}
                      onClick={() => {
                        setQuantity(refusal.together!.quantity);
                        void hold({ section: refusal.together!.section, quantity: refusal.together!.quantity });
                      }}
                    >
                      {t.fewerTogether(refusal.together.quantity)}
                    </button>
                  </li>
                )}
                {refusal.instead && (
                  <li>
                    <button
                      type="button"
                      className="link"
                      data-testid="take-instead"
                      disabled={busy}
                      onClick={() => void hold({ seatIds: refusal.instead!.seatIds })}
                    >
                      {t.holdInstead(refusal.instead.runs.length > 0 ? runsText(refusal.instead.runs) : t.holdPicked)}
                    </button>
                  </li>
                )}
              </ul>
            )}
            {(refusal.split || refusal.together) && refusal.alternatives && refusal.alternatives.length > 0 && <p>{t.otherSections}</p>}
            {refusal.alternatives && refusal.alternatives.length > 0 && (
              <ul>
                {refusal.alternatives.map((a) => (
                  <li key={a.section}>
                    <button type="button" className="link" onClick={() => setSection(a.section)}>
                      {sections?.find((s) => s.code === a.section)?.name ?? a.section}
                    </button>
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
        <button
          type="submit"
          className="primary"
          disabled={busy || !section || (mode === 'map' && chosen?.kind !== 'GA' && picked.length === 0)}
          data-testid="find-seats"
        >
          {busy ? t.finding : mode === 'map' && chosen?.kind !== 'GA' ? t.holdPicked : t.findSeats}
        </button>
      </form>
    </section>
  );
}
