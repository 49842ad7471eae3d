import { TZDate } from '@date-fns/tz';

// Times as people read them: in one zone that is named (the venue's, for an event), on a 24-hour clock, the same
// way everywhere. Browser-safe (Intl and @date-fns/tz only).

/** An IANA time zone this runtime knows ("Europe/London"; "UTC"). */
export function isTimeZone(tz: string): boolean {
  if (typeof tz !== 'string' || tz.trim() === '') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Every IANA time zone this runtime lists (for a picker), UTC first. */
export function timeZones(): string[] {
  const list = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return ['UTC', ...list.filter((z) => z !== 'UTC')];
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string, withDate: boolean): Intl.DateTimeFormat {
  const key = `${timeZone}|${withDate}`;
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      ...(withDate ? { day: 'numeric', month: 'short', year: 'numeric' } : {}),
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZone,
      timeZoneName: 'short',
    });
    formatters.set(key, f);
  }
  return f;
}

const toDate = (t: Date | string | number) => (t instanceof Date ? t : new Date(t));

/**
 * An instant in `timeZone`, 24-hour clock, zone named: "31 May 2027, 23:59 BST". Invalid input comes back as it was.
 * `timeZone` that this runtime does not know falls back to UTC (named as such).
 */
export function formatInstant(t: Date | string | number, timeZone = 'UTC', opts: { date?: boolean } = {}): string {
  const d = toDate(t);
  if (Number.isNaN(d.getTime())) return String(t);
  const zone = isTimeZone(timeZone) ? timeZone : 'UTC';
  return formatter(zone, opts.date ?? true).format(d);
}

/** The same instant in the zone and, after it, in another (the operator's own), when they differ: for a tooltip. */
export function formatInstantBoth(t: Date | string | number, venueZone: string, ownZone: string): { venue: string; own: string | null } {
  const venue = formatInstant(t, venueZone);
  const own = formatInstant(t, ownZone);
  return { venue, own: own === venue ? null : own };
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * An instant as a datetime-local input's value ("2027-05-31T23:59") in `timeZone`, seconds kept when not 0.
 * '' for anything that is not an instant.
 */
export function wallTimeOf(iso: unknown, timeZone: string): string {
  if (typeof iso !== 'string' && !(iso instanceof Date)) return '';
  const d = toDate(iso);
  if (Number.isNaN(d.getTime())) return '';
  const z = new TZDate(d.getTime(), isTimeZone(timeZone) ? timeZone : 'UTC');
  const seconds = z.getSeconds() === 0 ? '' : `:${pad(z.getSeconds())}`;
  return `${z.getFullYear()}-${pad(z.getMonth() + 1)}-${pad(z.getDate())}T${pad(z.getHours())}:${pad(z.getMinutes())}${seconds}`;
}

/**
 * A datetime-local value ("2027-05-31T23:59[:ss]") read as a wall-clock time in `timeZone`, as an ISO instant; null
 * when it is not such a value. (A time skipped by a clock change moves forward, as clocks do.)
 */
export function instantOfWallTime(local: string, timeZone: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(local.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((v) => (v === undefined ? 0 : Number(v))) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return null;
  const z = new TZDate(y, mo - 1, d, h, mi, s, isTimeZone(timeZone) ? timeZone : 'UTC');
  return Number.isNaN(z.getTime()) ? null : new Date(z.getTime()).toISOString();
}

/** "in 12 min", "in 3 h 5 min", "2 days" style durations for seconds (rounded to what a person needs). */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
  return `${Math.round(h / 24)} days`;
}
