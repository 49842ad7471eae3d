// Money as people read it: always in the event's currency (never a default one), in the reader's locale. Amounts
// are kept in minor units (cents, pence; yen have none), and how many a currency has is ISO 4217's (through Intl,
// read once per currency with a fixed locale, so the stored amount never means something else in another locale).

/** A locale as Intl takes it: a BCP 47 tag ("en-GB"), a list in preference order (navigator.languages), or none. */
export type Locales = string | readonly string[] | undefined;

/** An ISO 4217 currency code that this runtime knows ("EUR"). */
export function isCurrency(code: string): boolean {
  if (typeof code !== 'string' || !/^[A-Z]{3}$/.test(code)) return false;
  const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('currency') : null;
  return known ? known.includes(code) : true;
}

/** Every currency this runtime lists (for a picker). */
export function currencies(): string[] {
  return typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('currency') : ['EUR', 'GBP', 'USD'];
}

const wellFormed = (code: string) => typeof code === 'string' && /^[A-Z]{3}$/.test(code);
const digitsOf = new Map<string, number>();

/** How many decimal digits a currency's minor unit has (2 for EUR, 0 for JPY, 3 for BHD). */
export function minorUnitDigits(currency: string): number {
  const code = wellFormed(currency) ? currency : 'USD';
  let d = digitsOf.get(code);
  if (d === undefined) {
    d = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
    digitsOf.set(code, d);
  }
  return d;
}

/** How many minor units a currency's unit has (100 for EUR, 1 for JPY). */
export function minorUnitsPerUnit(currency: string): number {
  return 10 ** minorUnitDigits(currency);
}

const formatters = new Map<string, Intl.NumberFormat>();

function formatterFor(currency: string, locales: Locales): Intl.NumberFormat {
  const list = locales === undefined ? [] : typeof locales === 'string' ? [locales] : [...locales];
  const key = `${currency}|${list.join(',')}`;
  let f = formatters.get(key);
  if (!f) {
    const digits = minorUnitDigits(currency);
    const options: Intl.NumberFormatOptions = {
      style: 'currency',
      currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    };
    try {
      f = new Intl.NumberFormat(list, options);
    } catch {
      // A malformed locale tag (from a header or a browser setting) must not hide the amount: the runtime's own.
      f = new Intl.NumberFormat(undefined, options);
    }
    formatters.set(key, f);
  }
  return f;
}

/**
 * Minor units as money in `currency` (the event's), formatted for the reader's `locale`: 2500 GBP reads "£25.00" in
 * en-GB and en-US, "25,00 £GB" in fr-FR; 1200 JPY "¥1,200". Without a locale, the runtime's own: in a
 * browser that is the viewer's. The currency is required: a missing one is how a GBP price came to read "$25.00".
 * A malformed code shows the plain amount and the code ("25.00 ???"), never another currency's symbol.
 */
export function formatMoney(minorUnits: number, currency: string, locale?: Locales): string {
  if (!wellFormed(currency)) return `${moneyDecimal(minorUnits, 'USD')} ${String(currency ?? '???')}`;
  return formatterFor(currency, locale).format(minorUnits / minorUnitsPerUnit(currency));
}

/**
 * Minor units as a plain decimal in the currency's unit, exact, with a dot and no grouping: 2500 GBP "25.00",
 * -1250 EUR "-12.50", 1200 JPY "1200". For CSV cells and machine-readable fields (a spreadsheet parses it as a
 * number; the column or a sibling field names the currency).
 */
export function moneyDecimal(minorUnits: number, currency: string): string {
  const digits = minorUnitDigits(currency);
  const n = Math.round(minorUnits);
  const sign = n < 0 ? '-' : '';
  const abs = String(Math.abs(n));
  if (digits === 0) return sign + abs;
  const padded = abs.padStart(digits + 1, '0');
  return `${sign}${padded.slice(0, -digits)}.${padded.slice(-digits)}`;
}

/** The symbol a reader in `locale` sees for a currency ("£" for GBP in en-GB, "£GB" in fr-FR). */
export function currencySymbol(currency: string, locale?: Locales): string {
  if (!wellFormed(currency)) return String(currency ?? '');
  return (
    formatterFor(currency, locale)
      .formatToParts(0)
      .find((p) => p.type === 'currency')?.value ?? currency
  );
}
