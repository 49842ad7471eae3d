import { createHmac, timingSafeEqual } from 'node:crypto';

// Webhook signatures, Stripe-style: `X-Onsale-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
// The timestamp is inside the MAC, so a captured request cannot be replayed after the tolerance; several v1
// values may appear (a receiver rotating secrets accepts either).

/** The header that carries the signature. */
export const SIGNATURE_HEADER = 'X-Onsale-Signature';
/** The header that carries the delivery id (receivers deduplicate on it: delivery is at least once). */
export const DELIVERY_HEADER = 'X-Onsale-Delivery';
/** How old a signature a receiver should accept by default. */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

const mac = (secret: string, timestampSeconds: number, rawBody: string | Uint8Array) =>
  createHmac('sha256', secret).update(`${timestampSeconds}.`).update(rawBody).digest('hex');

/** The signature header value for a body, so the sender and the tests build it the one way receivers check it. */
export function signWebhookPayload(secret: string, rawBody: string | Uint8Array, timestampSeconds = Math.floor(Date.now() / 1000)): string {
  return `t=${timestampSeconds},v1=${mac(secret, timestampSeconds, rawBody)}`;
}

/**
 * For receivers: true when `header` carries a v1 signature of exactly `rawBody` (the bytes as received, before
 * any JSON parsing) under `secret`, made within `toleranceSeconds` of now. Compares in constant time, so a
 * forger learns nothing from how long a refusal takes.
 */
export function verifyWebhookSignature(
  secret: string,
  header: string | null | undefined,
  rawBody: string | Uint8Array,
  toleranceSeconds = DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
  nowMs = Date.now(),
): boolean {
  if (!header) return false;
  let timestamp: number | undefined;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) candidates.push(value);
  }
  if (timestamp === undefined || candidates.length === 0) return false;
  if (Math.abs(nowMs / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(mac(secret, timestamp, rawBody), 'hex');
  return candidates.some((c) => timingSafeEqual(Buffer.from(c, 'hex'), expected));
}
