/**
 * Fastify's `trustProxy` from a server's *_TRUST_PROXY setting: unset, empty or `false` trusts no proxy (the client
 * address is the socket's), `true` trusts every hop, anything else is a comma-separated list of the addresses and
 * ranges believed when they send X-Forwarded-For.
 */
export function trustProxyOf(setting: string | undefined): boolean | string[] {
  const v = setting?.trim();
  if (v === undefined || v === '' || v === 'false') return false;
  if (v === 'true') return true;
  return v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}
