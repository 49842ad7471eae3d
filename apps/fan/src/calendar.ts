// The order's show as a calendar file (RFC 5545, written by ical-generator): loaded only when a fan asks for it.
import ical from 'ical-generator';

export interface CalendarShow {
  eventId: string;
  orderReference: string;
  name: string;
  venueName: string;
  startsAt: string;
  /** Lines for the description: the seats, the reference, how the tickets arrive. */
  details: string[];
  pageUrl: string;
}

/** The .ics text: one event at the show's start (UTC; every calendar shows it on its own clock), named and placed. */
export function showCalendar(show: CalendarShow): string {
  const cal = ical({ prodId: { company: 'onsale', product: 'fan-page', language: 'EN' }, name: show.name });
  cal.createEvent({
    id: `order-${show.orderReference}-${show.eventId}@onsale`,
    start: new Date(show.startsAt),
    summary: show.name,
    location: show.venueName,
    description: show.details.join('\n'),
    url: show.pageUrl,
  });
  return cal.toString();
}

/** Hands the file to the browser as a download named after the show. */
export function downloadCalendar(show: CalendarShow): void {
  const blob = new Blob([showCalendar(show)], { type: 'text/calendar;charset=utf-8' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = `${show.name.replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-|-$/g, '') || 'show'}.ics`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}
