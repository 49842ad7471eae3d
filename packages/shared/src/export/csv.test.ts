import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { csvWallTime, toCsv } from './csv.js';

describe('toCsv', () => {
  it('writes RFC 4180 (CRLF, quoting commas, quotes and line breaks) that a CSV parser reads back unchanged', () => {
    const rows = [['a, b', 'say "hi"', 'two\nlines', 42, null, undefined, 'plain']];
    const csv = toCsv(['one', 'two', 'three', 'four', 'five', 'six', 'seven'], rows);
    expect(csv.endsWith('\r\n')).toBe(true);
    expect(csv.split('\r\n')[0]).toBe('one,two,three,four,five,six,seven');
    expect(parse(csv)).toEqual([
      ['one', 'two', 'three', 'four', 'five', 'six', 'seven'],
      ['a, b', 'say "hi"', 'two\nlines', '42', '', '', 'plain'],
    ]);
  });

  it('makes a cell a spreadsheet would run as a formula inert (a leading quote), as typed reasons and names may be', () => {
    const [, row] = parse(
      toCsv(['a', 'b', 'c', 'd', 'e', 'f'], [['=HYPERLINK("http://x.example")', '+1', '-2', '@SUM(A1)', 'Reason: =1+1', -3]]),
    );
    // A negative number stays a number.
    expect(row).toEqual([`'=HYPERLINK("http://x.example")`, `'+1`, `'-2`, `'@SUM(A1)`, 'Reason: =1+1', '-3']);
  });
});

describe('csvWallTime', () => {
  it('gives the wall clock of the zone, sortable, on a 24-hour clock (summer and winter time)', () => {
    expect(csvWallTime('2026-07-01T12:30:05Z', 'Europe/London')).toBe('2026-07-01 13:30:05');
    expect(csvWallTime(new Date('2026-12-01T23:59:00Z'), 'Europe/London')).toBe('2026-12-01 23:59:00');
    expect(csvWallTime('2026-12-01T23:59:00Z', 'America/New_York')).toBe('2026-12-01 18:59:00');
    expect(csvWallTime('2026-12-02T00:00:00Z', 'UTC')).toBe('2026-12-02 00:00:00');
  });
});
