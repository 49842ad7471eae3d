import type { ZxcvbnResult } from '@zxcvbn-ts/core';
import { isCommonPassword, COMMON_PASSWORD_MESSAGE } from './common-passwords.js';

// How hard a new console password is to guess, judged with zxcvbn (the zxcvbn-ts port, kept up by its project):
// it finds what guessing tools try first (common passwords, dictionary words, names, keyboard patterns, repeats,
// sequences, dates, l33t substitutions) and estimates the guesses needed, as a score from 0 to 4. The user's own
// e-mail address and its parts (and a promoter's organisation) are user inputs: a password made of them is guessed
// first. The dictionaries (common passwords, English words, names, Wikipedia) are loaded on first use only, so the
// processes that never set a password (the store API, the worker) never pay for them.

/**
 * The score a new password needs: 3 of 4, zxcvbn's "safely unguessable" (about 10^8 guesses and more; with scrypt
 * at 0.1-0.3 s a guess, years of one machine's time per account even offline).
 */
export const REQUIRED_PASSWORD_SCORE = 3;

/**
 * Passwords famous as examples (xkcd 936's, and the words under them): every guessing list carries them, though
 * the dictionaries above do not (`troubadour` is not among zxcvbn-ts's English words).
 */
const PUBLISHED_EXAMPLES = [
  'troubadour',
  'troubador',
  'tr0ub4dor&3',
  'tr0ub4dour&3',
  'correcthorsebatterystaple',
  'correct horse battery staple',
  'correct-horse-battery-staple',
];

type Zxcvbn = (password: string, userInputs: string[]) => ZxcvbnResult;

let judge: Promise<Zxcvbn> | undefined;

function zxcvbn(): Promise<Zxcvbn> {
  judge ??= Promise.all([import('@zxcvbn-ts/core'), import('@zxcvbn-ts/language-common'), import('@zxcvbn-ts/language-en')]).then(
    ([core, common, en]) => {
      const factory = new core.ZxcvbnFactory({
        translations: en.translations,
        graphs: common.adjacencyGraphs,
        dictionary: { ...common.dictionary, ...en.dictionary, examples: PUBLISHED_EXAMPLES },
        // Edit-distance matching would cost about a second a check on a loaded machine; substitutions (l33t),
        // case and padding are matched without it.
        useLevenshteinDistance: false,
      });
      return (password, userInputs) => factory.check(password, userInputs);
    },
  );
  return judge;
}

/** The words of the user that a password must not be built from: the e-mail, its local part and its pieces, the domain's. */
export function passwordUserInputs(user: { email?: string | null; names?: ReadonlyArray<string | null | undefined> }): string[] {
  const inputs = new Set<string>();
  const add = (s: string | null | undefined) => {
    const v = s?.trim().toLowerCase();
    if (v && v.length >= 2) inputs.add(v);
  };
  if (user.email) {
    const email = user.email.trim().toLowerCase();
    add(email);
    const [local, domain] = email.split('@');
    add(local);
    for (const piece of (local ?? '').split(/[._+-]+/)) add(piece);
    for (const label of (domain ?? '').split('.').slice(0, -1)) add(label);
  }
  for (const name of user.names ?? []) {
    add(name);
    for (const piece of (name ?? '').split(/\s+/)) add(piece);
  }
  return [...inputs];
}

/** A password's judgement: whether it is good enough, its score, and what to do about it in plain words. */
export interface PasswordStrength {
  ok: boolean;
  /** zxcvbn's score, 0 (too guessable) to 4 (very unguessable). */
  score: number;
  required: number;
  warning: string | null;
  suggestions: string[];
  /** One sentence for the form's field (and the CLI): what is wrong and what would do. Empty when ok. */
  message: string;
}

/**
 * Judges a new password with zxcvbn, the user's e-mail (and names) as user inputs, and the common-password list
 * (with its padded and repeated forms). Not ok below REQUIRED_PASSWORD_SCORE or when common.
 */
export async function judgePassword(
  password: string,
  user: { email?: string | null; names?: ReadonlyArray<string | null | undefined> },
): Promise<PasswordStrength> {
  const check = await zxcvbn();
  const r = check(password.normalize('NFKC'), passwordUserInputs(user));
  const common = await isCommonPassword(password);
  const score = common ? Math.min(r.score, 1) : r.score;
  const ok = score >= REQUIRED_PASSWORD_SCORE;
  const example = r.sequence.some((m) => 'dictionaryName' in m && m.dictionaryName === 'examples');
  const warning = common
    ? 'This is one of the most common passwords.'
    : (r.feedback.warning ?? (example ? 'This is built on a password published as an example, which attackers try early.' : null));
  const suggestions = r.feedback.suggestions.length > 0 ? r.feedback.suggestions : ['Add more words that are less common.'];
  const message = ok
    ? ''
    : common
      ? COMMON_PASSWORD_MESSAGE
      : `too easy to guess (strength ${score} of 4, ${REQUIRED_PASSWORD_SCORE} needed): ${warning ? `${warning} ` : ''}${suggestions.join(' ')} A few unrelated words make a strong one.`;
  return { ok, score, required: REQUIRED_PASSWORD_SCORE, warning, suggestions, message };
}
