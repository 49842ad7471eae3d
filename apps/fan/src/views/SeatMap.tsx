import { useRef, useState, type KeyboardEvent } from 'react';
import type { Formatters, Strings } from '../i18n';

export interface SectionSeat {
  id: number;
  row: string;
  number: number;
  available: boolean;
}

export interface SeatMapProps {
  t: Strings;
  f: Formatters;
  seats: SectionSeat[] | null;
  picked: number[];
  limit: number;
  /** The section's name and price per seat (minor units in `currency`). */
  sectionName: string;
  priceCents: number;
  currency: string;
  onToggle: (id: number) => void;
}

/**
 * A reserved section's seats as a grid: the stage at the top, the price beside the section, 44 px seats (the map
 * scrolls inside its own box on a phone; the page never does), one tab stop for the whole grid (a roving tabindex:
 * arrow keys, Home and End move between seats; Space or Enter picks), and focus that stays on the seat picked.
 * A module-level component: defined inside its parent it would be a new type on every render, and React would
 * replace every seat (and drop the focus) each time one is picked.
 */
export function SeatMap({ t, f, seats, picked, limit, sectionName, priceCents, currency, onToggle }: SeatMapProps) {
  const [active, setActive] = useState<number | null>(null);
  const grid = useRef<HTMLDivElement>(null);
  const rows: SectionSeat[][] = [];
  for (const s of seats ?? []) {
    const last = rows[rows.length - 1];
    if (last && last[0]!.row === s.row) last.push(s);
    else rows.push([s]);
  }
  const all = rows.flat();
  // The tab stop: the seat last moved to, else the first free seat, else the first seat.
  const stop = all.find((s) => s.id === active) ?? all.find((s) => s.available) ?? all[0];

  if (!seats) return <p className="muted">{t.loading}</p>;
  const price = f.money(priceCents, currency);

  function onKey(e: KeyboardEvent<HTMLDivElement>) {
    if (!stop) return;
    const r = rows.findIndex((row) => row.some((s) => s.id === stop.id));
    const row = rows[r]!;
    const c = row.findIndex((s) => s.id === stop.id);
    const nearest = (other: SectionSeat[] | undefined) =>
      other?.reduce((best, s) => (Math.abs(s.number - stop.number) < Math.abs(best.number - stop.number) ? s : best), other[0]!);
    let next: SectionSeat | undefined;
    switch (e.key) {
      case 'ArrowRight':
        next = row[c + 1];
        break;
      case 'ArrowLeft':
        next = row[c - 1];
        break;
      case 'ArrowDown':
        next = nearest(rows[r + 1]);
        break;
      case 'ArrowUp':
        next = nearest(rows[r - 1]);
        break;
      case 'Home':
        next = e.ctrlKey ? all[0] : row[0];
        break;
      case 'End':
        next = e.ctrlKey ? all[all.length - 1] : row[row.length - 1];
        break;
      default:
        return;
    }
    e.preventDefault();
    if (!next) return;
    // Focus moves at once (the seat is already in the page); the tab stop follows it on the next render.
    const el = grid.current?.querySelector<HTMLButtonElement>(`[data-seat-id="${next.id}"]`);
    el?.focus();
    el?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    setActive(next.id);
  }

  return (
    <div className="seat-map" data-testid="seat-map">
      <p className="muted small">{t.seatMapHelp}</p>
      <p className="seat-map-price" data-testid="seat-map-price">
        <strong>{sectionName}</strong> · {t.each(price)}
      </p>
      <ul className="seat-legend small" aria-hidden="true">
        <li>
          <span className="seat-key" /> {t.seatFree}
        </li>
        <li>
          <span className="seat-key picked" /> {t.seatChosen}
        </li>
        <li>
          <span className="seat-key taken" /> {t.seatTaken}
        </li>
      </ul>
      <p className="small" role="status" data-testid="seats-picked">
        {t.seatsPicked(picked.length)} · {t.limitNote(limit)}
      </p>
      <div className="seat-scroll" data-testid="seat-scroll">
        <p className="stage" data-testid="stage">
          {t.stage}
        </p>
        <div
          className="seat-grid"
          role="grid"
          aria-label={t.seatGridLabel(sectionName, price)}
          aria-multiselectable="true"
          ref={grid}
          onKeyDown={onKey}
        >
          {rows.map((row) => (
            <div className="seat-row" role="row" key={row[0]!.row}>
              <span className="row-label" role="rowheader">
                {row[0]!.row}
              </span>
              {row.map((s) => {
                const on = picked.includes(s.id);
                return (
                  <span role="gridcell" key={s.id} aria-selected={on}>
                    <button
                      type="button"
                      className={`seat${on ? ' picked' : ''}${s.available ? '' : ' taken'}`}
                      tabIndex={s.id === stop?.id ? 0 : -1}
                      aria-disabled={!s.available || undefined}
                      aria-pressed={on}
                      aria-label={s.available ? t.seatPriced(s.row, s.number, price) : t.seatGone(s.row, s.number)}
                      data-seat-id={s.id}
                      data-testid="seat"
                      onFocus={() => setActive(s.id)}
                      onClick={() => {
                        setActive(s.id);
                        if (s.available) onToggle(s.id);
                      }}
                    >
                      {s.number}
                    </button>
                  </span>
                );
              })}
            </div>
          ))}
        </div>
      </div>
    </div>
  );
}
