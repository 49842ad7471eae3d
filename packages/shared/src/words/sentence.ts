/**
 * A message as a sentence: first letter capitalised, a full stop at the end (unless it ends in other punctuation).
 * The schemas write messages in lower case so they read inside a longer line ("sections.0.code: …") too.
 */
export function sentence(message: string): string {
  const t = message.trim();
  if (t === '') return t;
  const first = t[0]!.toUpperCase() + t.slice(1);
  return /[.!?…)]$/.test(first) ? first : `${first}.`;
}
