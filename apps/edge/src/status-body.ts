// What a status answer is built from, kept per message and per Accept-Language value rather than worked out per poll:
// most polls carry the same few messages (one per state, event and language) and the same few Accept-Language values.
import type { StatusAnswer } from '@onsale/shared/queue/edge-state';
import { negotiateLanguage, type FanLanguage } from '@onsale/shared/queue/copy';

/** A number as JSON.stringify writes it: a finite number's digits, else null. */
const jsonNumber = (n: number | null): string => (n !== null && Number.isFinite(n) ? String(n) : 'null');

/** Bounded memo tables: past the bound a table starts again (the values are recomputed, never wrong). */
const MEMO_BOUND = 1000;
const quotedMessages = new Map<string, string>();
const languages = new Map<string, FanLanguage>();

/** A message as JSON (quoted, escaped), escaped once per message rather than per poll. */
function quotedMessage(message: string): string {
  let q = quotedMessages.get(message);
  if (q === undefined) {
    q = JSON.stringify(message);
    if (quotedMessages.size >= MEMO_BOUND) quotedMessages.clear();
    quotedMessages.set(message, q);
  }
  return q;
}

/**
 * The status answer's body: the same text as JSON.stringify of `{ state, message, position, admittedThrough,
 * estWaitSeconds, admissionToken, waitlist }` (fields in that order, the undefined ones left out), built from a
 * template with the message's JSON kept, not serialised per poll (`status-body.test.ts` holds the two equal).
 */
export function statusBody(answer: StatusAnswer, admissionToken: string | undefined): string {
  let body =
    `{"state":${quotedMessage(answer.state)},"message":${quotedMessage(answer.message)},"position":${jsonNumber(answer.position)}` +
    `,"admittedThrough":${jsonNumber(answer.admittedThrough)},"estWaitSeconds":${jsonNumber(answer.estWaitSeconds)}`;
  if (admissionToken !== undefined) body += `,"admissionToken":${JSON.stringify(admissionToken)}`;
  if (answer.waitlist !== undefined) body += `,"waitlist":${JSON.stringify(answer.waitlist)}`;
  return `${body}}`;
}

/**
 * negotiateLanguage of an Accept-Language value, worked out once per distinct value of up to 256 characters (a
 * browser sends the same one on every poll).
 */
export function fanLanguage(accept: string | null): FanLanguage {
  if (accept === null || accept.length > 256) return negotiateLanguage(accept);
  let language = languages.get(accept);
  if (language === undefined) {
    language = negotiateLanguage(accept);
    if (languages.size >= MEMO_BOUND) languages.clear();
    languages.set(accept, language);
  }
  return language;
}
