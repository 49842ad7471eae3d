// Common passwords, refused when a console password is set (NIST 800-63B 5.1.1.2: check new passwords against
// values known to be commonly used or compromised). The list is zxcvbn-ts's: about 49,000 passwords, lower case,
// from public breach corpora, kept up by the zxcvbn-ts project (`@zxcvbn-ts/language-common`). It is loaded on
// first use only: the processes that never set a password (the store API, the worker) never pay for it.

let common: Promise<ReadonlySet<string>> | undefined;

function commonPasswords(): Promise<ReadonlySet<string>> {
  common ??= import('@zxcvbn-ts/language-common').then(({ dictionary }) => new Set(dictionary['passwords-common']));
  return common;
}

// What people add to a common password to pass a length rule: digits and symbols before or after it.
const PADDING = /^[\d\p{P}\p{S}\s]*(.*?)[\d\p{P}\p{S}\s]*$/u;
/** Shorter bases than this are too likely to be part of a real passphrase ("abc", "me") to judge on their own. */
const MIN_BASE_LENGTH = 4;

/**
 * Whether a password is on the common-password list, or is one of those passwords padded with digits and symbols
 * ("sunshine2024!", "!!dragon12345") or repeated ("monkeymonkey"). Case and Unicode width do not matter
 * (NFKC, lower case), as they do not to an attacker's guessing tools.
 */
export async function isCommonPassword(password: string): Promise<boolean> {
  const list = await commonPasswords();
  const p = password.normalize('NFKC').toLowerCase();
  if (list.has(p)) return true;
  const base = PADDING.exec(p)?.[1] ?? p;
  if (base.length >= MIN_BASE_LENGTH && list.has(base)) return true;
  // A common password written twice or more ("qwertyqwerty", "abc123abc123").
  for (let len = MIN_BASE_LENGTH; len <= base.length / 2; len++) {
    if (base.length % len !== 0) continue;
    const unit = base.slice(0, len);
    if (unit.repeat(base.length / len) === base && list.has(unit)) return true;
  }
  return false;
}

/** The field message for a common password. */
export const COMMON_PASSWORD_MESSAGE =
  'this is one of the most common passwords (attackers try these first); choose another, a few unrelated words make a good one';
