/**
 * base64url (RFC 4648 section 5) decoded strictly: the alphabet only, no padding, and only the one canonical
 * spelling of the bytes (the unused low bits of the last character must be zero). Node's decoder accepts all of
 * those variants, so one signature could be written several ways; every signed token here is parsed with this,
 * and a spelling that is not canonical is malformed. Null when the text is not canonical base64url.
 */
export function decodeBase64UrlStrict(text: string): Buffer | null {
  if (typeof text !== 'string' || !/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : null;
}
