// Plain words for people: sentences, times in a named zone, money in a currency, audit entries and actors, and the
// zod messages every schema falls back on. Browser-safe: the console imports `@onsale/shared/words`.
import './zod-messages.js';

export { sentence } from './sentence.js';
export { plainMessage } from './zod-messages.js';
export { formatDuration, formatInstant, formatInstantBoth, instantOfWallTime, isTimeZone, timeZones, wallTimeOf } from './time.js';
export {
  currencies,
  currencySymbol,
  formatMoney,
  isCurrency,
  minorUnitDigits,
  minorUnitsPerUnit,
  moneyDecimal,
  type Locales,
} from './money.js';
export { ACTION_WORDS, actionWords, actorWords, auditDetailsWords, CAUSE_WORDS, causeWords, SETTING_WORDS, valueWords } from './audit.js';
