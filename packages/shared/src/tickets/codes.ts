import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { CODE_STEP_SECONDS } from './tickets.schema.js';

/**
 * Rotating ticket codes. A code is the ticket id, the ticket's device generation and a 15-second time step, signed
 * with the event's Ed25519 key: a scanner verifies it with the event's public key alone, offline included, and
 * there is no per-ticket secret to hand out or download (an HMAC code would need each ticket's key at every gate,
 * and anyone who read a gate's list could mint codes). A code is accepted in its own step and the next one only,
 * so a screenshot is useless after 30 s at most. A move to a new device bumps the generation: older codes read
 * REVOKED at the door.
 *
 * Layout (87 bytes, 116 characters of base64url: small enough for a QR code of version 8 at level M):
 *   version (1) | ticket id (16, the UUID's bytes) | generation (2, big-endian) | step (4, big-endian) | signature (64)
 */
export const CODE_VERSION = 1;
const PAYLOAD_BYTES = 1 + 16 + 2 + 4;
const CODE_BYTES = PAYLOAD_BYTES + 64;
/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw 32-byte key follows it. */
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export interface TicketKeyPair {
  /** Raw 32-byte public key, base64url (what the scanners download). */
  publicKey: string;
  /** PKCS#8 DER, base64url. */
  privateKey: string;
}

export function generateTicketKeyPair(): TicketKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  return {
    publicKey: spki.subarray(SPKI_ED25519_PREFIX.length).toString('base64url'),
    privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64url'),
  };
}

export function privateKeyOf(pkcs8: string): KeyObject {
  return createPrivateKey({ key: Buffer.from(pkcs8, 'base64url'), format: 'der', type: 'pkcs8' });
}

export function publicKeyOf(raw: string): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, Buffer.from(raw, 'base64url')]), format: 'der', type: 'spki' });
}

/** The time step of an instant (ms). */
export function stepOf(nowMs: number): number {
  return Math.floor(nowMs / (CODE_STEP_SECONDS * 1000));
}

function uuidBytes(id: string): Buffer {
  return Buffer.from(id.replace(/-/g, ''), 'hex');
}

function uuidOf(bytes: Buffer): string {
  const h = bytes.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Signs the code of a ticket for one step. */
export function signTicketCode(key: KeyObject, ticket: { id: string; generation: number }, step: number): string {
  const payload = Buffer.alloc(PAYLOAD_BYTES);
  payload.writeUInt8(CODE_VERSION, 0);
  uuidBytes(ticket.id).copy(payload, 1);
  payload.writeUInt16BE(ticket.generation & 0xffff, 17);
  payload.writeUInt32BE(step >>> 0, 19);
  return Buffer.concat([payload, sign(null, payload, key)]).toString('base64url');
}

export type CodeCheck =
  | { ok: true; ticketId: string; generation: number; step: number }
  | { ok: false; result: 'INVALID'; reason: 'MALFORMED' | 'SIGNATURE' | 'FUTURE_STEP' }
  | { ok: false; result: 'EXPIRED_CODE'; ticketId: string; generation: number; step: number };

/**
 * Checks a code against the event's public key at `atMs` (now, or an offline gate's scan time): well formed,
 * signed by this event's key (a code of another event, or forged, is INVALID), and of the step of `atMs` or the
 * one before (older: EXPIRED_CODE; a step ahead of the clock: INVALID).
 */
export function checkTicketCode(key: KeyObject, code: string, atMs: number): CodeCheck {
  if (!/^[A-Za-z0-9_-]+$/.test(code)) return { ok: false, result: 'INVALID', reason: 'MALFORMED' };
  const bytes = Buffer.from(code, 'base64url');
  if (bytes.length !== CODE_BYTES || bytes.readUInt8(0) !== CODE_VERSION) return { ok: false, result: 'INVALID', reason: 'MALFORMED' };
  const payload = bytes.subarray(0, PAYLOAD_BYTES);
  if (!verify(null, payload, key, bytes.subarray(PAYLOAD_BYTES))) return { ok: false, result: 'INVALID', reason: 'SIGNATURE' };
  const ticketId = uuidOf(payload.subarray(1, 17));
  const generation = payload.readUInt16BE(17);
  const step = payload.readUInt32BE(19);
  const now = stepOf(atMs);
  if (step > now) return { ok: false, result: 'INVALID', reason: 'FUTURE_STEP' };
  if (step < now - 1) return { ok: false, result: 'EXPIRED_CODE', ticketId, generation, step };
  return { ok: true, ticketId, generation, step };
}
