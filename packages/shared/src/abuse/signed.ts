import { createHmac, timingSafeEqual } from 'node:crypto';
import { decodeBase64UrlStrict } from '../encoding.js';

/**
 * Small signed tickets the origin issues and later takes back without storing them: `base64url(JSON).base64url(mac)`,
 * HMAC-SHA256 under a key derived from a server secret and a purpose (a ticket for one purpose never verifies for
 * another). Parsing returns null for anything malformed or forged; the caller decides what that means.
 */
export class TicketSigner {
  private readonly key: Buffer;
  constructor(secret: string, purpose: string) {
    if (secret.length < 32) throw new Error('the ticket secret must be at least 32 characters');
    this.key = createHmac('sha256', secret).update(`onsale/${purpose}/v1`).digest();
  }

  sign(payload: object): string {
    const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
    return `${body}.${this.mac(body).toString('base64url')}`;
  }

  /** 'malformed' for a shape that is not a ticket, 'forged' for a bad signature, else the payload. */
  open(ticket: string): { ok: true; payload: Record<string, unknown> } | { ok: false; why: 'malformed' | 'forged' } {
    if (typeof ticket !== 'string' || ticket.length > 2048) return { ok: false, why: 'malformed' };
    const parts = ticket.split('.');
    const [body, mac] = parts;
    if (parts.length !== 2 || !body || !mac || !/^[A-Za-z0-9_-]+$/.test(body) || !/^[A-Za-z0-9_-]+$/.test(mac))
      return { ok: false, why: 'malformed' };
    const given = decodeBase64UrlStrict(mac);
    const raw = decodeBase64UrlStrict(body);
    const expected = this.mac(body);
    if (!given || !raw || given.length !== expected.length) return { ok: false, why: 'malformed' };
    if (!timingSafeEqual(given, expected)) return { ok: false, why: 'forged' };
    try {
      const payload = JSON.parse(raw.toString('utf8')) as unknown;
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return { ok: false, why: 'malformed' };
      return { ok: true, payload: payload as Record<string, unknown> };
    } catch {
      return { ok: false, why: 'malformed' };
    }
  }

  private mac(body: string): Buffer {
    return createHmac('sha256', this.key).update(body).digest();
  }
}
