import { stringify } from 'csv-stringify/sync';

// CSV for people's spreadsheets: RFC 4180 (CRLF, quoted where needed) by csv-stringify, with a cell that a
// spreadsheet would run as a formula (= + - @ at its start, as a reason someone typed might) made inert.

/** A cell: text, a number, or nothing (an empty cell). */
export type CsvCell = string | number | null | undefined;

/** The header row and the rows as one CSV text (RFC 4180, CRLF line ends, formulas escaped). */
export function toCsv(header: readonly string[], rows: readonly (readonly CsvCell[])[]): string {
  return stringify([header, ...rows.map((r) => r.map((c) => (c === null || c === undefined ? '' : c)))], {
    record_delimiter: 'windows',
    escape_formulas: true,
  });
}

const wallClocks = new Map<string, Intl.DateTimeFormat>();

/**
 * An instant as a spreadsheet reads a date-time: "2026-12-02 14:05:00" on the wall clock of `timeZone` (the column
 * header names the zone). Sortable, and parsed as a date by common spreadsheets.
 */
export function csvWallTime(at: Date | string, timeZone: string): string {
  let f = wallClocks.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('sv-SE', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    wallClocks.set(timeZone, f);
  }
  return f.format(typeof at === 'string' ? new Date(at) : at);
}
