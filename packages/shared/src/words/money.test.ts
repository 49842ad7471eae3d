import { describe, expect, it } from 'vitest';
import { currencySymbol, formatMoney, minorUnitsPerUnit, moneyDecimal } from './money.js';

// Intl puts a no-break space (U+00A0 or U+202F) between an amount and a symbol that follows it.
const plain = (s: string) => s.replace(/[\u00a0\u202f]/g, ' ');

describe('money in the event currency, for the reader locale', () => {
  it('a GBP price reads in pounds in every locale, never in dollars', () => {
    expect(formatMoney(2500, 'GBP', 'en-GB')).toBe('£25.00');
    expect(formatMoney(2500, 'GBP', 'en-US')).toBe('£25.00');
    expect(plain(formatMoney(2500, 'GBP', 'fr-FR'))).toBe('25,00 £GB');
    expect(plain(formatMoney(123456, 'EUR', 'de-DE'))).toBe('1.234,56 €');
    expect(formatMoney(-1250, 'USD', 'en-US')).toBe('-$12.50');
  });

  it('minor units follow the currency (yen have none, dinars three), whatever the locale', () => {
    expect(formatMoney(1200, 'JPY', 'en-US')).toBe('¥1,200');
    expect(plain(formatMoney(1234, 'BHD', 'en-US'))).toBe('BHD 1.234');
    expect(minorUnitsPerUnit('JPY')).toBe(1);
    expect(minorUnitsPerUnit('BHD')).toBe(1000);
    expect(minorUnitsPerUnit('GBP')).toBe(100);
  });

  it('a list of locales takes the first one Intl knows; a malformed tag falls back instead of throwing', () => {
    expect(formatMoney(2500, 'GBP', ['en-GB', 'fr-FR'])).toBe('£25.00');
    expect(() => formatMoney(2500, 'GBP', 'not a locale!')).not.toThrow();
    expect(formatMoney(2500, 'GBP', 'not a locale!')).toContain('25');
    expect(formatMoney(2500, 'GBP', 'not a locale!')).toContain('£');
  });

  it('a malformed currency shows its amount and code, never another currency symbol', () => {
    expect(formatMoney(2500, 'gbp', 'en-GB')).toBe('25.00 gbp');
    expect(formatMoney(2500, 'gbp', 'en-GB')).not.toContain('$');
  });

  it('a plain decimal for CSV cells and machine fields, exact', () => {
    expect(moneyDecimal(2500, 'GBP')).toBe('25.00');
    expect(moneyDecimal(5, 'GBP')).toBe('0.05');
    expect(moneyDecimal(-1250, 'EUR')).toBe('-12.50');
    expect(moneyDecimal(1200, 'JPY')).toBe('1200');
    expect(moneyDecimal(1, 'BHD')).toBe('0.001');
    expect(moneyDecimal(123456789012, 'USD')).toBe('1234567890.12');
  });

  it('the symbol alone, for a price field', () => {
    expect(currencySymbol('GBP', 'en-GB')).toBe('£');
    expect(currencySymbol('EUR', 'en-GB')).toBe('€');
  });
});
