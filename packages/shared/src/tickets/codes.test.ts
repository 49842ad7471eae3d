import { describe, expect, it } from 'vitest';
import { checkTicketCode, generateTicketKeyPair, privateKeyOf, publicKeyOf, signTicketCode, stepOf } from './codes.js';

const ticket = { id: '0b6f4c1e-8d2a-4b7e-9a55-3c1f2e4d5a6b', generation: 2 };

describe('ticket codes (Ed25519 over ticket, generation and 15-second step)', () => {
  const keys = generateTicketKeyPair();
  const priv = privateKeyOf(keys.privateKey);
  const pub = publicKeyOf(keys.publicKey);
  const t0 = Date.parse('2026-12-06T20:00:07Z');

  it('round-trips in its step and the next, is compact base64url', () => {
    const code = signTicketCode(priv, ticket, stepOf(t0));
    expect(code).toMatch(/^[A-Za-z0-9_-]{116}$/);
    expect(checkTicketCode(pub, code, t0)).toEqual({ ok: true, ticketId: ticket.id, generation: 2, step: stepOf(t0) });
    expect(checkTicketCode(pub, code, t0 + 15_000).ok).toBe(true);
  });

  it('a screenshot 60 s later is EXPIRED_CODE; a step ahead of the clock is INVALID', () => {
    const code = signTicketCode(priv, ticket, stepOf(t0));
    expect(checkTicketCode(pub, code, t0 + 60_000)).toMatchObject({ ok: false, result: 'EXPIRED_CODE', ticketId: ticket.id });
    expect(checkTicketCode(pub, signTicketCode(priv, ticket, stepOf(t0) + 1), t0)).toMatchObject({
      result: 'INVALID',
      reason: 'FUTURE_STEP',
    });
  });

  it("another event's key, a changed byte or garbage is INVALID", () => {
    const code = signTicketCode(priv, ticket, stepOf(t0));
    const other = publicKeyOf(generateTicketKeyPair().publicKey);
    expect(checkTicketCode(other, code, t0)).toMatchObject({ result: 'INVALID', reason: 'SIGNATURE' });
    const bytes = Buffer.from(code, 'base64url');
    bytes[18] = bytes[18]! ^ 1; // the generation
    expect(checkTicketCode(pub, bytes.toString('base64url'), t0)).toMatchObject({ result: 'INVALID', reason: 'SIGNATURE' });
    expect(checkTicketCode(pub, 'not a code!', t0)).toMatchObject({ result: 'INVALID', reason: 'MALFORMED' });
    expect(checkTicketCode(pub, code.slice(0, 40), t0)).toMatchObject({ result: 'INVALID', reason: 'MALFORMED' });
  });
});
