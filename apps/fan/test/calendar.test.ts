import { describe, expect, it } from 'vitest';
import { showCalendar } from '../src/calendar';
import { formatters, viewerLocale } from '../src/i18n';

describe("the order's calendar file", () => {
  it('is one iCalendar event at the show’s start (UTC), with its name, venue, seats and reference', () => {
    const ics = showCalendar({
      eventId: '11111111-2222-3333-4444-555555555555',
      orderReference: '05B0DD69',
      name: 'Opening Night; the encore, too',
      venueName: 'The Test Hall, London',
      startsAt: '2027-01-15T19:30:00.000Z',
      details: ['Order reference 05B0DD69', 'Section Stalls, row A, seat 1'],
      pageUrl: 'https://tickets.example/e/11111111-2222-3333-4444-555555555555',
    });
    const lines = ics.replace(/\r\n /g, '').split('\r\n');
    expect(lines[0]).toBe('BEGIN:VCALENDAR');
    expect(lines).toContain('BEGIN:VEVENT');
    expect(lines).toContain('DTSTART:20270115T193000Z');
    expect(lines).toContain('SUMMARY:Opening Night\\; the encore\\, too');
    expect(lines).toContain('LOCATION:The Test Hall\\, London');
    expect(lines).toContain('DESCRIPTION:Order reference 05B0DD69\\nSection Stalls\\, row A\\, seat 1');
    expect(lines).toContain('UID:order-05B0DD69-11111111-2222-3333-4444-555555555555@onsale');
    expect(lines.filter((l) => l === 'END:VEVENT')).toHaveLength(1);
  });
});

describe("money and times the viewer's way", () => {
  it("takes the browser's locale when it is in the page's language, else the language's own", () => {
    expect(viewerLocale('en', ['en-US', 'es-ES'])).toBe('en-US');
    expect(viewerLocale('en', ['es-MX', 'en'])).toBe('en-GB');
    expect(viewerLocale('es', ['en-GB', 'es-MX'])).toBe('es-MX');
    expect(viewerLocale('es', [])).toBe('es-ES');
    expect(viewerLocale('en', ['en-x-not a tag'])).toBe('en-GB');
  });

  it("always in the event's currency: £ for a GBP event, whoever reads it", () => {
    expect(formatters('en', 'en-GB').money(2500, 'GBP')).toBe('£25.00');
    expect(formatters('en', 'en-US').money(2500, 'GBP')).toBe('£25.00');
    expect(formatters('en', 'en-GB').money(2500, 'USD')).toBe('US$25.00');
    expect(formatters('en', 'en-US').money(2500, 'USD')).toBe('$25.00');
    expect(formatters('es', 'es-ES').money(2500, 'GBP')).toMatch(/^25,00\sGBP$/);
    expect(formatters('en', 'en-GB').money(1200, 'JPY')).toBe('JP¥1,200');
  });

  it("puts the show on the venue's clock with its zone", () => {
    const f = formatters('en', 'en-GB');
    expect(f.venueTime(new Date('2027-07-15T18:30:00Z'), 'Europe/London')).toBe('19:30 BST');
    expect(f.longDate(new Date('2027-01-15T23:30:00Z'), 'Asia/Tokyo')).toMatch(/Saturday,? 16 January 2027/);
  });
});
