const count = new Intl.NumberFormat('en-US');
// dateStyle/timeStyle cannot be combined with timeZoneName, hence the explicit fields.
const dateTime = new Intl.DateTimeFormat('en-GB', {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  timeZoneName: 'short',
});

export const formatCount = (n: number) => count.format(n);
/** On-sale times are shown in the operator's own zone, with the zone named, since a sale is run across zones. */
export const formatDateTime = (iso: string) => dateTime.format(new Date(iso));
