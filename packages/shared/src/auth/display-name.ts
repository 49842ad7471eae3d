/** The longest display name kept (the accounts table's check). */
export const DISPLAY_NAME_MAX = 200;

/**
 * The fan's display name from a verified token's claims: the OIDC `name` claim, its control characters dropped and
 * its spaces collapsed, cut to 200 characters (at a whole code point); null when there is none, or it is not a string.
 */
export function displayNameFromClaims(claims: Record<string, unknown>): string | null {
  if (typeof claims.name !== 'string') return null;
  const clean = claims.name
    // eslint-disable-next-line no-control-regex -- control characters are what this drops
    .replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!clean) return null;
  return Array.from(clean).slice(0, DISPLAY_NAME_MAX).join('').trim();
}
