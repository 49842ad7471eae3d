import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { DefaultBotScorer, ProofOfWork, solveChallenge, solves, type BotScorer } from '@onsale/shared/abuse';
import { manualClock, testSecrets } from '@onsale/shared/testing';
import { bearer, login, makeEvent, setupApp, type TestApp } from './helper.js';

// The bot-score hook on joins, with the default scorer, except that a User-Agent of "farm-bot" scores 0.95.
const defaultScorer = new DefaultBotScorer();
const scorer: BotScorer = { score: (s) => (s.userAgent === 'farm-bot' ? 0.95 : defaultScorer.score(s)) };

let h: TestApp;
/** The store API's clock: the tests move it past a cache's second or a deferral instead of waiting. */
const clock = manualClock();
let eventId: string;

beforeAll(async () => {
  h = await setupApp({
    clock: clock.now,
    env: { BOT_GATE_ENABLED: 'true', POW_DIFFICULTY_BITS: '12', BOT_LOW_PRIORITY_DELAY_SECONDS: '1' },
    botScorer: scorer,
  });
  ({ eventId } = await makeEvent(h.t, { fairnessMode: 'FIFO' }));
});
afterAll(() => h.close());

const BROWSER = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  accept: 'application/json',
  'accept-language': 'en-GB,en;q=0.9',
};
const join = (token: string, device: string, headers: Record<string, string> = {}) =>
  h.app.inject({ method: 'POST', url: `/events/${eventId}/queue`, headers: { ...bearer(token), 'x-device-id': device, ...headers } });
const entries = async (account: string) =>
  (
    await sql<{ n: number }>`SELECT count(*)::int AS n FROM queue_entries WHERE event_id = ${eventId} AND account_id = ${account}`.execute(
      h.t.db,
    )
  ).rows[0]!.n;

describe('the bot gate on joins', () => {
  it('lets a browser join with no friction', async () => {
    const fan = await login(h.app, 'bg-browser');
    const r = await join(fan, 'browser-phone-1', BROWSER);
    expect(r.statusCode).toBe(200);
    expect(r.json().queueToken).toBeTruthy();
  });

  it('challenges a script with a proof-of-work; the solved proof joins, once', async () => {
    const fan = await login(h.app, 'bg-script');
    const curl = { 'user-agent': 'curl/8.5.0', accept: '*/*' };
    const first = await join(fan, 'script-device-1', curl);
    expect(first.statusCode).toBe(403);
    const body = first.json();
    expect(body).toMatchObject({ error: 'CHALLENGE_REQUIRED', field: 'x-proof-of-work' });
    expect(body.challenge).toMatchObject({ difficulty: 12, algorithm: 'sha256-leading-zero-bits' });
    expect(body.challenge.exp).toBeGreaterThan(Date.now() / 1000);
    expect(await entries('bg-script')).toBe(0);

    const proof = `${body.challenge.token}:${solveChallenge(body.challenge.nonce, body.challenge.difficulty)}`;
    const solved = await join(fan, 'script-device-1', { ...curl, 'x-proof-of-work': proof });
    expect(solved.statusCode).toBe(200);
    expect(await entries('bg-script')).toBe(1);
    const reused = await join(fan, 'script-device-1', { ...curl, 'x-proof-of-work': proof });
    expect(reused.statusCode).toBe(409);
    expect(reused.json()).toMatchObject({ error: 'POW_REUSED', field: 'x-proof-of-work' });
  });

  it('refuses a forged, tampered, expired or unsolved proof with a code, and writes nothing', async () => {
    const fan = await login(h.app, 'bg-cheat');
    const curl = { 'user-agent': 'python-requests/2.32', accept: '*/*' };
    const { challenge } = (await join(fan, 'cheat-device-1', curl)).json();
    const suffix = solveChallenge(challenge.nonce, challenge.difficulty);

    const foreign = new ProofOfWork({ secret: 'some-other-secret-that-is-32-chars-long!', difficulty: 1, ttlSeconds: 60 }).issue(
      'bg-cheat',
      eventId,
    );
    const forged = await join(fan, 'cheat-device-1', {
      ...curl,
      'x-proof-of-work': `${foreign.token}:${solveChallenge(foreign.nonce, 1)}`,
    });
    expect([forged.statusCode, forged.json().error]).toEqual([403, 'POW_FORGED']);

    const [payload, mac] = challenge.token.split('.');
    const easier = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), d: 1 })).toString('base64url');
    const tampered = await join(fan, 'cheat-device-1', { ...curl, 'x-proof-of-work': `${easier}.${mac}:0` });
    expect([tampered.statusCode, tampered.json().error]).toEqual([403, 'POW_FORGED']);

    const old = new ProofOfWork({
      secret: testSecrets().queueTokenSecret,
      difficulty: 12,
      ttlSeconds: 60,
      now: () => Date.now() - 120_000,
    }).issue('bg-cheat', eventId);
    const expired = await join(fan, 'cheat-device-1', { ...curl, 'x-proof-of-work': `${old.token}:${solveChallenge(old.nonce, 12)}` });
    expect([expired.statusCode, expired.json().error]).toEqual([410, 'POW_EXPIRED']);
    expect(expired.json().challenge.token).toBeTruthy(); // a fresh one to solve

    const other = await login(h.app, 'bg-cheat-friend');
    const lent = await join(other, 'friend-device-1', { ...curl, 'x-proof-of-work': `${challenge.token}:${suffix}` });
    expect([lent.statusCode, lent.json().error]).toEqual([403, 'POW_WRONG_ACCOUNT']);

    const wrong = ['0', '1', '2', '3', '4', '5', '6', '7'].find((s) => !solves(challenge.nonce, s, challenge.difficulty))!;
    const unsolved = await join(fan, 'cheat-device-1', { ...curl, 'x-proof-of-work': `${challenge.token}:${wrong}` });
    expect([unsolved.statusCode, unsolved.json().error]).toEqual([403, 'POW_UNSOLVED']);
    const malformed = await join(fan, 'cheat-device-1', { ...curl, 'x-proof-of-work': 'not a proof' });
    expect([malformed.statusCode, malformed.json().error]).toEqual([400, 'POW_MALFORMED']);

    expect(await entries('bg-cheat')).toBe(0);
    expect(await entries('bg-cheat-friend')).toBe(0);
    // The genuine solution still works after all that.
    expect((await join(fan, 'cheat-device-1', { ...curl, 'x-proof-of-work': `${challenge.token}:${suffix}` })).statusCode).toBe(200);
  });

  it('defers a high score: a later place in line, behind a fan who joined meanwhile', async () => {
    const bot = await login(h.app, 'bg-farm');
    const deferred = await join(bot, 'farm-device-1', { 'user-agent': 'farm-bot' });
    expect(deferred.statusCode).toBe(409);
    expect(deferred.headers['retry-after']).toBe('1');
    expect(deferred.json()).toMatchObject({ error: 'JOIN_DEFERRED', retryAfterSeconds: 1, field: 'x-join-deferral' });
    expect(await entries('bg-farm')).toBe(0);
    const ticket = deferred.json().deferral.token;
    const early = await join(bot, 'farm-device-1', { 'user-agent': 'farm-bot', 'x-join-deferral': ticket });
    expect(early.statusCode).toBe(409);

    const fan = await login(h.app, 'bg-meanwhile');
    const meanwhile = await join(fan, 'meanwhile-phone', BROWSER);
    expect(meanwhile.statusCode).toBe(200);
    clock.advance(1100);
    const later = await join(bot, 'farm-device-1', { 'user-agent': 'farm-bot', 'x-join-deferral': ticket });
    expect(later.statusCode).toBe(200);
    expect(later.json().position).toBeGreaterThan(meanwhile.json().position);
    // A deferral ticket is for its own account only.
    const thief = await login(h.app, 'bg-thief');
    expect((await join(thief, 'thief-device', { ...BROWSER, 'x-join-deferral': ticket })).json().error).toBe('DEFERRAL_WRONG_ACCOUNT');
  });

  it('never challenges an account that already has its place, and counts decisions', async () => {
    const fan = await login(h.app, 'bg-returning');
    expect((await join(fan, 'returning-phone', BROWSER)).statusCode).toBe(200);
    // The same fan now looks like a script (say, a reload from a broken client): the join is idempotent, no challenge.
    const again = await join(fan, 'returning-phone', { 'user-agent': 'curl/8.5.0' });
    expect(again.statusCode).toBe(200);
    const m = (await h.app.inject({ url: '/metrics' })).body;
    for (const d of ['PASS', 'SOLVED', 'CHALLENGED', 'DEFERRED', 'DEFERRAL_SERVED', 'HAS_POSITION', 'REFUSED'])
      expect(m, d).toMatch(new RegExp(`bot_gate_decisions_total\\{decision="${d}"\\} [1-9]`));
  });
});
