import { QUEUE_STATES, type QueueStatusState } from './edge.js';

/** The fan-facing words for each queue state: prewritten, so nobody improvises them at 10:00:00 on the day. */
export type QueueCopy = Record<QueueStatusState, string>;

export { QUEUE_STATES };

/** The languages fans' pages and queue messages come in; the first is the default. */
export const FAN_LANGUAGES = ['en', 'es'] as const;
export type FanLanguage = (typeof FAN_LANGUAGES)[number];
export const DEFAULT_FAN_LANGUAGE: FanLanguage = 'en';

export const DEFAULT_QUEUE_COPY: QueueCopy = {
  WAITING: 'You are in line. Keep this page open; we will let you in when it is your turn. Refreshing does not move you up.',
  PAUSED: 'The line is paused for a moment. You keep your place; nobody is being let in ahead of you.',
  ADMITTED: 'It is your turn. You have 10 minutes to pick your seats.',
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
    ADMITTED: 'Es tu turno. Tienes 10 minutos para elegir tus asientos.',
    LAST_CHANCE:
      'Quedan pocos asientos y los fans delante de ti pueden llevárselos. Los asientos reservados por otros vuelven si no se pagan; sigue en la fila para saberlo.',
    SOLD_OUT:
      'Las entradas para este evento están agotadas. Únete a la lista de espera para recibir, por orden de llegada, los asientos que se liberen.',
  },
};

/** The event's copy: its own words where the promoter gave them, the defaults elsewhere. */
export function queueCopy(overrides: Partial<QueueCopy> | null | undefined): QueueCopy {
  return { ...DEFAULT_QUEUE_COPY, ...(overrides ?? {}) };
}

/**
 * The event's copy in every fan language: English is the event's `queueCopy` over the defaults; each other
 * language is the promoter's words for it (`look.copy[lang]`) over that language's defaults.
 */
export function queueCopyByLanguage(
  english: Partial<QueueCopy> | null | undefined,
  translations: Partial<Record<FanLanguage, Partial<QueueCopy>>> | null | undefined,
): Record<FanLanguage, QueueCopy> {
  const out = {} as Record<FanLanguage, QueueCopy>;
  for (const lang of FAN_LANGUAGES)
    out[lang] = lang === 'en' ? queueCopy(english) : { ...DEFAULT_QUEUE_COPY_BY_LANGUAGE[lang], ...(translations?.[lang] ?? {}) };
  return out;
}

/**
 * The fan language an `Accept-Language` header (or a browser's `navigator.languages`) asks for: the supported
 * language with the highest q, by primary subtag (`es-MX` is Spanish); the default when none is supported.
 */
export function negotiateLanguage(accept: string | readonly string[] | null | undefined): FanLanguage {
  if (!accept) return DEFAULT_FAN_LANGUAGE;
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
