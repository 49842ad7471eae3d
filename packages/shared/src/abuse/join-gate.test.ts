import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import type { BotSignals } from './bot-score.js';
import { JoinGate } from './join-gate.js';
import { ProofOfWork, solveChallenge } from './pow.js';

const SECRET = 'a-test-secret-that-is-at-least-32-chars!';
const signals: BotSignals = {
  userAgent: 'x',
  headerNames: [],
  device: { firstSeenSecondsAgo: null, accountsSeen: 1 },
  requestRate: { accountPerWindow: 0, ipPerWindow: 0 },
  attestation: null,
};

function gateWith(score: number, now: { ms: number }) {
  const pow = new ProofOfWork({ secret: SECRET, difficulty: 8, ttlSeconds: 60, now: () => now.ms });
  return new JoinGate({ scorer: { score: () => score }, pow, secret: SECRET, lowPriorityDelaySeconds: 60, now: () => now.ms });
}

async function refusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

const open = new Date(Date.UTC(2027, 0, 1, 10));
const attempt = (over: Partial<Parameters<JoinGate['check']>[0]> = {}) => ({
  accountId: 'fan-1',
  eventId: 'event-1',
  onsaleAt: open,
  signals,
  hasPosition: async () => false,
  ...over,
});

describe('the join gate', () => {
  it('lets a low score through without reading anything', async () => {
    const now = { ms: open.getTime() + 1000 };
    let read = false;
    expect(await gateWith(0.1, now).check(attempt({ hasPosition: async () => (read = true) }))).toMatchObject({ decision: 'PASS' });
    expect(read).toBe(false);
  });

  it('challenges a medium score, and lets the solved challenge through', async () => {
    const now = { ms: open.getTime() + 1000 };
    const gate = gateWith(0.7, now);
    const e = await refusal(gate.check(attempt()));
    expect(e).toMatchObject({ kind: 'forbidden', code: 'CHALLENGE_REQUIRED' });
    const c = e.details.challenge as { token: string; nonce: string; difficulty: number };
    const proof = `${c.token}:${solveChallenge(c.nonce, c.difficulty)}`;
    expect(await gate.check(attempt({ proof }))).toMatchObject({ decision: 'SOLVED', verdict: 'CHALLENGE' });
    expect(await refusal(gate.check(attempt({ proof })))).toMatchObject({ code: 'POW_REUSED' });
    // A proof that is sent is checked even when the score would not have asked for one.
    expect(await refusal(gateWith(0, now).check(attempt({ proof: 'junk' })))).toMatchObject({ code: 'POW_MALFORMED' });
  });

  it('defers a high score behind everyone joining meanwhile, then accepts the due ticket', async () => {
    const now = { ms: open.getTime() + 10_000 };
    const gate = gateWith(0.9, now);
    const e = await refusal(gate.check(attempt()));
    expect(e).toMatchObject({ kind: 'conflict', code: 'JOIN_DEFERRED' });
    expect(e.details.retryAfterSeconds).toBe(60);
    const ticket = e.details.deferral as { token: string; notBefore: string };
    expect(ticket.notBefore).toBe(new Date(open.getTime() + 70_000).toISOString());
    now.ms += 30_000;
    const early = await refusal(gate.check(attempt({ deferral: ticket.token })));
    expect(early).toMatchObject({ code: 'JOIN_DEFERRED' });
    expect(early.details.retryAfterSeconds).toBe(30);
    now.ms += 30_000;
    expect(await gate.check(attempt({ deferral: ticket.token }))).toMatchObject({ decision: 'DEFERRAL_SERVED' });
    expect(await refusal(gate.check(attempt({ deferral: ticket.token, accountId: 'fan-2' })))).toMatchObject({
      code: 'DEFERRAL_WRONG_ACCOUNT',
    });
    expect(await refusal(gate.check(attempt({ deferral: ticket.token, eventId: 'event-2' })))).toMatchObject({
      code: 'DEFERRAL_WRONG_EVENT',
    });
    now.ms += 700_000;
    expect(await refusal(gate.check(attempt({ deferral: ticket.token })))).toMatchObject({ code: 'DEFERRAL_EXPIRED', kind: 'gone' });
  });

  it('before the open, defers past the open: out of the randomized cohort, FIFO after it', async () => {
    const now = { ms: open.getTime() - 3600_000 };
    const e = await refusal(gateWith(0.95, now).check(attempt()));
    expect((e.details.deferral as { notBefore: string }).notBefore).toBe(new Date(open.getTime() + 60_000).toISOString());
    expect(e.details.retryAfterSeconds).toBe(3660);
  });

  it('refuses a forged or malformed deferral ticket', async () => {
    const now = { ms: open.getTime() };
    const other = new JoinGate({
      scorer: { score: () => 0.9 },
      pow: new ProofOfWork({ secret: SECRET, difficulty: 8, ttlSeconds: 60 }),
      secret: `${SECRET}-other`,
      lowPriorityDelaySeconds: 0,
      now: () => now.ms,
    });
    const e = await refusal(other.check(attempt()));
    const forged = (e.details.deferral as { token: string }).token;
    expect(await refusal(gateWith(0.9, now).check(attempt({ deferral: forged })))).toMatchObject({
      code: 'DEFERRAL_FORGED',
      kind: 'forbidden',
    });
    expect(await refusal(gateWith(0.9, now).check(attempt({ deferral: 'x' })))).toMatchObject({
      code: 'DEFERRAL_MALFORMED',
      kind: 'invalid',
    });
  });

  it('never challenges or defers an account that already has its place (a join is idempotent)', async () => {
    const now = { ms: open.getTime() };
    expect(await gateWith(0.99, now).check(attempt({ hasPosition: async () => true }))).toMatchObject({ decision: 'HAS_POSITION' });
    expect(await gateWith(0.7, now).check(attempt({ hasPosition: async () => true }))).toMatchObject({ decision: 'HAS_POSITION' });
  });
});
