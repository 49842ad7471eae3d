import { createHash, createHmac } from 'node:crypto';

/**
 * How a payment card is known without its number: HMAC-SHA256 under the install's CARD_FINGERPRINT_SECRET. A card
 * has one number and so one fingerprint (the checkout schema refuses every other spelling: spaces, dashes, a leading
 * zero, non-ASCII digits). Keyed, so a copy of the database alone cannot be searched for a card by trying the
 * numbers a BIN and the last four leave open (about 10^6-10^9 tries for an unkeyed hash).
 *
 * The HMAC is taken over the fingerprint this platform stored before (SHA-256 of `card:<number>`, 32 hex), so a
 * row written then can be keyed in place with the secret alone, and one card keeps counting once against the
 * per-card limit across the upgrade (see rekeyLegacyCardFingerprints).
 */
export class CardFingerprints {
  private readonly key: Buffer;
  constructor(secret: string) {
    if (Buffer.byteLength(secret, 'utf8') < 32) throw new Error('the card fingerprint secret must be at least 32 bytes');
    this.key = createHmac('sha256', secret).update('onsale/card-fingerprint/v2').digest();
  }

  /** The stored fingerprint of a card number (64 hex characters). */
  of(number: string): string {
    return this.rekey(legacyCardFingerprint(number));
  }

  /** The keyed fingerprint of a row written with the unkeyed one. */
  rekey(legacy: string): string {
    return createHmac('sha256', this.key).update(legacy).digest('hex');
  }
}

/** The unkeyed fingerprint of releases before keyed ones (kept only to key old rows and to match their idempotency hashes). */
export function legacyCardFingerprint(number: string): string {
  return createHash('sha256').update(`card:${number}`).digest('hex').slice(0, 32);
}

/** What a migration marks an unkeyed fingerprint with until it is keyed (never a prefix of a keyed one: those are hex). */
export const LEGACY_FINGERPRINT_PREFIX = 'legacy:';
