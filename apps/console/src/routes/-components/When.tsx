import { formatInstant } from '@onsale/shared/words';

/** The operator's own time zone (the browser's). */
export const ownTimeZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/**
 * An instant as people read it here: in the venue's zone when it is an event's (`zone`), named, on a 24-hour clock,
 * with the operator's own zone on hover; without a zone, in the operator's own zone, named.
 */
export function When({
  iso,
  zone,
  date = true,
  testId,
}: {
  iso: string | null | undefined;
  zone?: string | undefined;
  date?: boolean;
  testId?: string;
}) {
  if (!iso) return <span className="muted">—</span>;
  const own = ownTimeZone();
  const shown = formatInstant(iso, zone ?? own, { date });
  const mine = zone && zone !== own ? formatInstant(iso, own, { date }) : null;
  const title = mine && mine !== shown ? `Your time: ${mine}` : zone ? `The venue's time (${zone})` : undefined;
  return (
    <time dateTime={iso} title={title} data-testid={testId} data-zone={zone ?? own}>
      {shown}
    </time>
  );
}
