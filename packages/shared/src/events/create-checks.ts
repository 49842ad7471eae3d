// What is checked when an event is created, beyond its file's shape: times that have already passed are refused
// (the console's form, the BFF and the CLI alike), and what is allowed but rarely meant is named so the form can
// ask before Create (a free price level, a fairness description nobody signed off). Pure and browser-safe: the
// clock is the caller's.

/**
 * An on-sale this far in the past still means "open now" (an event file made for a demo says so, and a form
 * submitted a few minutes after "open the sale now" was pressed); further back it is a mistake: the event would be
 * created open, with its currency, prices and times locked at once.
 */
export const ONSALE_OPEN_NOW_GRACE_MS = 5 * 60_000;

/** A problem at a path of the event file, as the schema's issues are. */
export interface EventFileIssue {
  path: string;
  message: string;
}

const instantOf = (v: unknown): number | null => {
  if (typeof v !== 'string' || v.trim() === '') return null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : t;
};

/**
 * The times of a new event that have passed at `now`: the show's start (`startsAt`) at or before now, the on-sale
 * (`onsaleAt`) more than ONSALE_OPEN_NOW_GRACE_MS before now. Times that do not parse are the schema's to name.
 */
export function pastTimeIssues(file: { startsAt?: unknown; onsaleAt?: unknown }, now: Date | number): EventFileIssue[] {
  const at = typeof now === 'number' ? now : now.getTime();
  const issues: EventFileIssue[] = [];
  const starts = instantOf(file.startsAt);
  if (starts !== null && starts <= at)
    issues.push({ path: 'startsAt', message: 'this time has passed: enter when the show starts, later than now' });
  const onsale = instantOf(file.onsaleAt);
  if (onsale !== null && onsale < at - ONSALE_OPEN_NOW_GRACE_MS)
    issues.push({
      path: 'onsaleAt',
      message: 'this time has passed: choose when the sale opens, later than now, or open the sale now',
    });
  return issues;
}

/** Something allowed that a promoter rarely means, asked about before Create; `path` is the field it is about. */
export interface EventWarning {
  code: 'FREE_PRICE_LEVEL' | 'FAIRNESS_NOT_SIGNED_OFF';
  path: string;
  message: string;
}

/**
 * What to ask before creating this event: each price level at 0 (its seats would be given away), and a fairness
 * description that is not signed off with the creation (the sale does not open until someone signs it off).
 */
export function eventCreateWarnings(
  file: { priceLevels?: readonly { code?: unknown; name?: unknown; priceCents?: unknown }[] },
  opts: { signOff: boolean },
): EventWarning[] {
  const warnings: EventWarning[] = [];
  (file.priceLevels ?? []).forEach((p, i) => {
    if (p.priceCents === 0) {
      const name = typeof p.name === 'string' && p.name.trim() !== '' ? p.name.trim() : typeof p.code === 'string' ? p.code : `${i + 1}`;
      warnings.push({
        code: 'FREE_PRICE_LEVEL',
        path: `priceLevels.${i}.priceCents`,
        message: `The price level "${name}" costs nothing: fans will get its seats free.`,
      });
    }
  });
  if (!opts.signOff)
    warnings.push({
      code: 'FAIRNESS_NOT_SIGNED_OFF',
      path: 'fairnessMode',
      message: 'The fairness description is not signed off: the sale will not open until a promoter signs it off on the event page.',
    });
  return warnings;
}
