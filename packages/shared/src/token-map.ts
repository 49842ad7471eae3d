/**
 * A bounded map from token strings to what checking them found: a fan sends the same account and queue token on
 * every poll, so their checks are kept. It answers exactly as a Map keyed by the whole token would (a value only for
 * the very token it was set for), but finds entries by the token's last characters (the signature's): a header
 * value is a new string on every request, so a Map keyed by the whole token hashes all of it (hundreds of
 * characters) on every lookup, where here a few dozen are hashed and the whole is compared, which costs less. Two
 * tokens that end alike (never two genuine ones: their signatures differ) share a slot, the later one kept. When
 * full, the oldest entry is forgotten first.
 */
export class TokenMap<V> {
  private readonly map = new Map<string, { token: string; value: V }>();
  constructor(private readonly max: number) {}

  get(token: string): V | undefined {
    const e = this.map.get(tailOf(token));
    return e !== undefined && e.token === token ? e.value : undefined;
  }

  set(token: string, value: V): void {
    const key = tailOf(token);
    if (this.map.size >= this.max && !this.map.has(key)) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
    this.map.set(key, { token, value });
  }

  get size(): number {
    return this.map.size;
  }
}

/** Characters of a token's end that key it: 32 base64url characters of an HMAC-SHA256 signature, 192 bits. */
const TAIL = 32;
const tailOf = (token: string) => (token.length > TAIL ? token.slice(-TAIL) : token);
