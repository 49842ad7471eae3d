import { ADMISSION_TOKEN_TTL_SECONDS, QUEUE_STATES, type QueueStatusState } from './edge.js';
import { DEFAULT_FAN_LANGUAGE, FAN_LANGUAGES, type FanLanguage } from '../events/limits.js';

/** The fan-facing words for each queue state: prewritten, so nobody improvises them at 10:00:00 on the day. */
export type QueueCopy = Record<QueueStatusState, string>;

export { QUEUE_STATES };

export { FAN_LANGUAGES, DEFAULT_FAN_LANGUAGE, type FanLanguage } from '../events/limits.js';

export const DEFAULT_QUEUE_COPY: QueueCopy = {
  WAITING: 'You are in line. Keep this page open; we will let you in when it is your turn. Refreshing does not move you up.',
  PAUSED: 'The line is paused for a moment. You keep your place; nobody is being let in ahead of you.',
  ADMITTED: 'It is your turn. You have {turn} to choose your seats; the seats you choose are held for you for {hold} while you pay.',
  LAST_CHANCE:
    'Only a few seats are left, and fans ahead of you may take them. Seats held by others come back if they are not paid for; stay in line to find out.',
  SOLD_OUT: 'This event is sold out. Join the waitlist to be offered seats that come back, in the order fans joined.',
};

/** The default words in every fan language (English is DEFAULT_QUEUE_COPY). */
export const DEFAULT_QUEUE_COPY_BY_LANGUAGE: Record<FanLanguage, QueueCopy> = {
  en: DEFAULT_QUEUE_COPY,
  es: {
    WAITING: 'Estás en la fila. Mantén esta página abierta; te dejaremos entrar cuando sea tu turno. Recargar no te adelanta.',
    PAUSED: 'La fila está en pausa un momento. Conservas tu lugar; nadie entra antes que tú.',
    ADMITTED: 'Es tu turno. Tienes {turn} para elegir tus asientos; los que elijas se reservan para ti durante {hold} mientras pagas.',
    LAST_CHANCE:
      'Quedan pocos asientos y los fans delante de ti pueden llevárselos. Los asientos reservados por otros vuelven si no se pagan; sigue en la fila para saberlo.',
    SOLD_OUT:
      'Las entradas para este evento están agotadas. Únete a la lista de espera para recibir, por orden de llegada, los asientos que se liberen.',
  },
};

/**
 * The event's times a fan reads in its words: `{turn}` (how long an admitted fan has to choose seats) and `{hold}`
 * (how long chosen seats are held). The words carry the placeholders, not numbers, so they never go stale when an
 * event's hold time (or the turn) is not the default.
 */
export interface CopyTimes {
  turnSeconds: number;
  holdSeconds: number;
}

/** The times of an event with holds of `holdSeconds`: the turn is the admission token's life. */
export const copyTimesOf = (holdSeconds: number): CopyTimes => ({ turnSeconds: ADMISSION_TOKEN_TTL_SECONDS, holdSeconds });

/** A duration as a fan reads it in a sentence: "10 minutes", "1 minute", "45 seconds", "2 minutes 30 seconds". */
export function spokenDuration(seconds: number, language: FanLanguage = DEFAULT_FAN_LANGUAGE): string {
  const s = Math.max(0, Math.round(seconds));
  const m = Math.floor(s / 60);
  const r = s % 60;
  const [min, mins, sec, secs] =
    language === 'es' ? ['minuto', 'minutos', 'segundo', 'segundos'] : ['minute', 'minutes', 'second', 'seconds'];
  const minutes = `${m} ${m === 1 ? min : mins}`;
  const rest = `${r} ${r === 1 ? sec : secs}`;
  return m === 0 ? rest : r === 0 ? minutes : `${minutes} ${rest}`;
}

/** `{turn}` and `{hold}` in the event's words replaced by its real times, in the words' language. */
export function fillCopyTimes(text: string, times: CopyTimes, language: FanLanguage = DEFAULT_FAN_LANGUAGE): string {
  return text
    .replaceAll('{turn}', spokenDuration(times.turnSeconds, language))
    .replaceAll('{hold}', spokenDuration(times.holdSeconds, language));
}

function filled(copy: QueueCopy, times: CopyTimes | undefined, language: FanLanguage): QueueCopy {
  if (!times) return copy;
  const out = { ...copy };
  for (const state of QUEUE_STATES) out[state] = fillCopyTimes(copy[state], times, language);
  return out;
}

/** The event's copy: its own words where the promoter gave them, the defaults elsewhere; with `times`, filled in. */
export function queueCopy(overrides: Partial<QueueCopy> | null | undefined, times?: CopyTimes): QueueCopy {
  return filled({ ...DEFAULT_QUEUE_COPY, ...(overrides ?? {}) }, times, DEFAULT_FAN_LANGUAGE);
}

/**
 * The event's copy in every fan language: English is the event's `queueCopy` over the defaults; each other
 * language is the promoter's words for it (`look.copy[lang]`) over that language's defaults.
 */
export function queueCopyByLanguage(
  english: Partial<QueueCopy> | null | undefined,
  translations: Partial<Record<FanLanguage, Partial<QueueCopy>>> | null | undefined,
  times?: CopyTimes,
): Record<FanLanguage, QueueCopy> {
  const out = {} as Record<FanLanguage, QueueCopy>;
  for (const lang of FAN_LANGUAGES)
    out[lang] =
      lang === 'en'
        ? queueCopy(english, times)
        : filled({ ...DEFAULT_QUEUE_COPY_BY_LANGUAGE[lang], ...(translations?.[lang] ?? {}) }, times, lang);
  return out;
}

/** negotiateLanguage's answers by header (up to 200 characters), at most NEGOTIATED_MAX of them, then forgotten all at once. */
const NEGOTIATED = new Map<string, FanLanguage>();
const NEGOTIATED_MAX = 1000;

/**
 * The fan language an `Accept-Language` header (or a browser's `navigator.languages`) asks for: the supported
 * language with the highest q, by primary subtag (`es-MX` is Spanish); the default when none is supported.
 */
export function negotiateLanguage(accept: string | readonly string[] | null | undefined): FanLanguage {
  if (!accept) return DEFAULT_FAN_LANGUAGE;
  if (typeof accept !== 'string' || accept.length > 200) return negotiated(accept);
  // A crowd's browsers send a few dozen distinct headers: each is read once (every join and status poll reads one).
  let language = NEGOTIATED.get(accept);
  if (language === undefined) {
    language = negotiated(accept);
    if (NEGOTIATED.size >= NEGOTIATED_MAX) NEGOTIATED.clear();
    NEGOTIATED.set(accept, language);
  }
  return language;
}

function negotiated(accept: string | readonly string[]): FanLanguage {
  const ranges =
    typeof accept === 'string'
      ? accept.split(',').map((part, i) => {
          const [tag = '', ...params] = part.trim().split(';');
          const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)).find(Boolean);
          return { tag: tag.trim().toLowerCase(), q: q ? Number(q[1]) : 1, i };
        })
      : accept.map((tag, i) => ({ tag: tag.toLowerCase(), q: 1 - i / 1000, i }));
  const best = ranges
    .filter((r) => r.q > 0 && Number.isFinite(r.q))
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((r) => r.tag.split('-')[0])
    .find((primary): primary is FanLanguage => (FAN_LANGUAGES as readonly string[]).includes(primary ?? ''));
  return best ?? DEFAULT_FAN_LANGUAGE;
}
