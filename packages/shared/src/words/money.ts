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

const formatters = new Map<string, Intl.NumberFormat>();

/** Minor units (cents, pence) as money in `currency`: "€65.00", "£12.50". */
export function formatMoney(minorUnits: number, currency = 'USD'): string {
  const code = isCurrency(currency) ? currency : 'USD';
  let f = formatters.get(code);
  if (!f) {
    f = new Intl.NumberFormat('en-GB', { style: 'currency', currency: code });
    formatters.set(code, f);
  }
  const digits = f.resolvedOptions().maximumFractionDigits ?? 2;
  return f.format(minorUnits / 10 ** digits);
}

/** How many minor units a currency's unit has (100 for EUR, 1 for JPY). */
export function minorUnitsPerUnit(currency: string): number {
  const code = isCurrency(currency) ? currency : 'USD';
  return 10 ** (new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2);
}
