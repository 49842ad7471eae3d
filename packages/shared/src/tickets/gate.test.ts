import { describe, expect, it } from 'vitest';
import { generateTicketKeyPair, privateKeyOf, signTicketCode, stepOf } from './codes.js';
import { fromBase64Url, OfflineGate, type GateManifest } from './gate.js';

// The offline gate checks the very codes the store signs (codes.ts, node:crypto) with WebCrypto alone.
const STEP_MS = 15_000;
const T0 = Date.parse('2026-12-06T19:00:00Z');
const ids = {
  a: '11111111-1111-4111-8111-111111111111',
  b: '22222222-2222-4222-8222-222222222222',
  moved: '33333333-3333-4333-8333-333333333333',
  sold: '44444444-4444-4444-8444-444444444444',
  inBefore: '55555555-5555-4555-8555-555555555555',
  unknown: '66666666-6666-4666-8666-666666666666',
  listed: '77777777-7777-4777-8777-777777777777',
};
const seat = (n: number) => ({ section: 'STALLS', row: 'A', number: n });

function setup() {
  const keys = generateTicketKeyPair();
  const key = privateKeyOf(keys.privateKey);
  const manifest: GateManifest = {
    eventId: 'e1',
    eventName: 'Gate Night',
    publicKey: keys.publicKey,
    stepSeconds: 15,
    generatedAt: new Date(T0).toISOString(),
    tickets: [
      { ticketId: ids.a, generation: 1, status: 'ACTIVE', seat: seat(1) },
      { ticketId: ids.b, generation: 1, status: 'ACTIVE', seat: seat(2) },
      { ticketId: ids.moved, generation: 2, status: 'ACTIVE', seat: seat(3) },
      { ticketId: ids.sold, generation: 1, status: 'RESOLD', seat: seat(4) },
      { ticketId: ids.inBefore, generation: 1, status: 'ADMITTED', seat: seat(5) },
      { ticketId: ids.listed, generation: 1, status: 'LISTED', seat: seat(6) },
    ],
  };
  const code = (id: string, atMs: number, generation = 1) => signTicketCode(key, { id, generation }, stepOf(atMs));
  return { manifest, code };
}

describe('the offline gate', () => {
  it('admits a live code once, then reads ALREADY_ADMITTED at this gate, and after a reload with the admissions it kept', async () => {
    const { manifest, code } = setup();
    const gate = await OfflineGate.open(manifest);
    const first = await gate.check(code(ids.a, T0), T0 + 1000);
    expect(first).toMatchObject({ result: 'ADMIT', ticketId: ids.a, seat: seat(1) });
    expect((await gate.check(code(ids.a, T0 + 2000), T0 + 2000)).result).toBe('ALREADY_ADMITTED');
    const reopened = await OfflineGate.open(manifest, gate.admittedIds());
    expect((await reopened.check(code(ids.a, T0 + 3000), T0 + 3000)).result).toBe('ALREADY_ADMITTED');
    expect((await reopened.check(code(ids.b, T0 + 3000), T0 + 3000)).result).toBe('ADMIT');
  });

  it('accepts a code in its step and the next only: a screenshot 60 s later is EXPIRED_CODE, a step ahead INVALID', async () => {
    const { manifest, code } = setup();
    const gate = await OfflineGate.open(manifest);
    const shot = code(ids.a, T0);
    expect((await gate.check(shot, T0 + 60_000)).result).toBe('EXPIRED_CODE');
    expect((await gate.check(code(ids.b, T0 + STEP_MS), T0)).result).toBe('INVALID');
    expect((await gate.check(shot, T0 + STEP_MS)).result).toBe('ADMIT');
  });

  it('refuses another event’s code, a forged or cut code, an unknown ticket, an old device’s code, a sold or listed ticket, one admitted before', async () => {
    const { manifest, code } = setup();
    const other = setup();
    const gate = await OfflineGate.open(manifest);
    expect((await gate.check(other.code(ids.a, T0), T0)).result).toBe('INVALID');
    const bytes = fromBase64Url(code(ids.b, T0))!;
    bytes[5] = bytes[5]! ^ 1;
    const forged = Buffer.from(bytes).toString('base64url');
    expect(await gate.check(forged, T0)).toMatchObject({ result: 'INVALID', reason: 'not signed for this event' });
    expect((await gate.check(code(ids.b, T0).slice(0, 40), T0)).result).toBe('INVALID');
    expect((await gate.check('not a code!', T0)).result).toBe('INVALID');
    expect((await gate.check(code(ids.unknown, T0), T0)).result).toBe('INVALID');
    expect((await gate.check(code(ids.moved, T0, 1), T0)).result).toBe('REVOKED');
    expect((await gate.check(code(ids.moved, T0, 2), T0)).result).toBe('ADMIT');
    expect((await gate.check(code(ids.sold, T0), T0)).result).toBe('REVOKED');
    expect((await gate.check(code(ids.inBefore, T0), T0)).result).toBe('ALREADY_ADMITTED');
    expect((await gate.check(code(ids.listed, T0), T0)).result).toBe('REVOKED');
    // None of the refusals used up ticket b.
    expect((await gate.check(code(ids.b, T0), T0)).result).toBe('ADMIT');
  });

  it('will not open without the event’s public key', async () => {
    const { manifest } = setup();
    await expect(OfflineGate.open({ ...manifest, publicKey: 'AAAA' })).rejects.toThrow(/public key/);
  });
});
