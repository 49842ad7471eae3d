import { z } from 'zod';
import type { AvailableSection } from './waitlist.table.js';

const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'a date as YYYY-MM-DD')
  .refine(
    (s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s),
    'not a calendar date',
  );
const codes = z.array(z.string().min(1).max(40)).max(200);

/**
 * What a fan asks the waitlist for, as the API takes it. Every field but quantity is optional: no dates means
 * any performance, no price means any price, no sections or price levels means anywhere. Dates are the
 * performance's calendar date (UTC), inclusive.
 */
export const waitlistCriteriaSchema = z
  .object({
    dateFrom: isoDate.optional(),
    dateTo: isoDate.optional(),
    maxPriceCents: z.number().int().nonnegative().max(100_000_000).optional(),
    quantity: z.number().int().positive().max(100).default(1),
    sections: codes.optional(),
    priceLevels: codes.optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.dateFrom && c.dateTo && c.dateFrom > c.dateTo)
      ctx.addIssue({ code: 'custom', path: ['dateTo'], message: 'dateTo is before dateFrom' });
  });
export type WaitlistCriteriaInput = z.input<typeof waitlistCriteriaSchema>;

/** Criteria as stored and matched: absent means "any" (null), lists are sorted and never empty. */
export interface Criteria {
  dateFrom: string | null;
  dateTo: string | null;
  maxPriceCents: number | null;
  quantity: number;
  sections: string[] | null;
  priceLevels: string[] | null;
}

export function normalizeCriteria(c: z.output<typeof waitlistCriteriaSchema>): Criteria {
  const list = (xs: string[] | undefined) => (xs && xs.length > 0 ? [...new Set(xs)].sort() : null);
  return {
    dateFrom: c.dateFrom ?? null,
    dateTo: c.dateTo ?? null,
    maxPriceCents: c.maxPriceCents ?? null,
    quantity: c.quantity,
    sections: list(c.sections),
    priceLevels: list(c.priceLevels),
  };
}

/** The criteria columns of a waitlist_entries row (dates read as 'YYYY-MM-DD'). */
export interface CriteriaRow {
  date_from: string | null;
  date_to: string | null;
  max_price_cents: number | null;
  quantity: number;
  sections: string[] | null;
  price_levels: string[] | null;
}

/** Criteria from a waitlist_entries row. */
export function entryCriteria(r: CriteriaRow): Criteria {
  return {
    dateFrom: r.date_from,
    dateTo: r.date_to,
    maxPriceCents: r.max_price_cents,
    quantity: r.quantity,
    sections: r.sections,
    priceLevels: r.price_levels,
  };
}

/** The part of an availability event that matching reads. */
export interface AvailabilitySummary {
  performanceDate: string;
  sections: Pick<AvailableSection, 'section' | 'priceLevel' | 'priceCents' | 'longestRun'>[];
}

/** Whether one section of an availability event can serve the entry: place, price, and seats together. */
export function sectionServes(c: Criteria, s: AvailabilitySummary['sections'][number]): boolean {
  return (
    (c.sections === null || c.sections.includes(s.section)) &&
    (c.priceLevels === null || c.priceLevels.includes(s.priceLevel)) &&
    (c.maxPriceCents === null || s.priceCents <= c.maxPriceCents) &&
    s.longestRun >= c.quantity
  );
}

/**
 * The matching rule, as a plain function (the reference the SQL matcher is property-tested against): the
 * performance falls in the date range, and some section that came back is one the fan accepts, at or below
 * their price, with their quantity of adjacent seats.
 */
export function criteriaMatch(c: Criteria, a: AvailabilitySummary): boolean {
  if (c.dateFrom !== null && a.performanceDate < c.dateFrom) return false;
  if (c.dateTo !== null && a.performanceDate > c.dateTo) return false;
  return a.sections.some((s) => sectionServes(c, s));
}

/** A seat as availability sees it: where it is, for contiguity. */
export interface PlacedSeat {
  id: number;
  rowIndex: number;
  seatNumber: number;
}

/** The longest run of adjacent seats (same row, consecutive numbers). */
export function longestRun(seats: readonly Omit<PlacedSeat, 'id'>[]): number {
  const sorted = [...seats].sort((a, b) => a.rowIndex - b.rowIndex || a.seatNumber - b.seatNumber);
  let best = 0;
  let run = 0;
  for (let i = 0; i < sorted.length; i++) {
    const prev = sorted[i - 1];
    const cur = sorted[i]!;
    run = prev && prev.rowIndex === cur.rowIndex && prev.seatNumber + 1 === cur.seatNumber ? run + 1 : 1;
    best = Math.max(best, run);
  }
  return best;
}

/** The first block of `quantity` adjacent seats, front rows first (best-quality seats are the low rows). */
export function firstBlock<S extends PlacedSeat>(seats: readonly S[], quantity: number): S[] | null {
  const sorted = [...seats].sort((a, b) => a.rowIndex - b.rowIndex || a.seatNumber - b.seatNumber);
  let start = 0;
  for (let i = 0; i < sorted.length; i++) {
    const prev = sorted[i - 1];
    const cur = sorted[i]!;
    if (!(prev && prev.rowIndex === cur.rowIndex && prev.seatNumber + 1 === cur.seatNumber)) start = i;
    if (i - start + 1 === quantity) return sorted.slice(start, i + 1);
  }
  return null;
}
