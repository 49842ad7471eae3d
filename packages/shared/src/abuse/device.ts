import { createHash } from 'node:crypto';

/**
 * The account-independent fingerprint of a device id (SHA-256 hex, domain-separated). Queue and admission
 * tokens carry `hashDevice(deviceId, accountId)`, which differs per account by design (a token stays with its
 * account); a per-device limit and the post-sale review need the same value for one device whatever account
 * it signs in with, so holds record this one. The store API computes it from the X-Device-Id the admission gate
 * has already matched against the token's binding.
 */
export function deviceFingerprint(deviceId: string): string {
  return createHash('sha256').update(`onsale/device/v1\n${deviceId.length}:${deviceId}`).digest('hex');
}
