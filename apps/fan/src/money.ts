// Money on the fans' page: minor units in the event's currency, written the viewer's way.
const cache = new Map<string, Intl.NumberFormat>();

export function formatMoney(minorUnits: number, currency: string, locale: string): string {
  const key = `${currency}|${locale}`;
  let f = cache.get(key);
  if (!f) {
    f = new Intl.NumberFormat(locale, { style: 'currency', currency });
    cache.set(key, f);
  }
  return f.format(minorUnits / 10 ** (f.resolvedOptions().maximumFractionDigits ?? 2));
}
