import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleForEdge } from '../testing/edge-bundle.js';
import {
  admissionClaimsFor,
  computeStatus,
  createTokenKey,
  hashDevice,
  positionReachedAt,
  queuePosition,
  signToken,
  TokenError,
  verifyToken,
  type AdmissionTokenClaims,
  type QueueTokenClaims,
  type StatusOptions,
  type WatermarkState,
} from './edge.js';
import { cohortPositions, permutePosition } from './fairness.js';

const SECRET = 'a-queue-token-secret-of-at-least-32-chars';
const SEED = '5e'.repeat(32);
const NOW = 1_790_000_000_000; // ms
const NOW_S = NOW / 1000;

let key: Awaited<ReturnType<typeof createTokenKey>>;
let device: string;
beforeAll(async () => {
  key = await createTokenKey(SECRET);
  device = await hashDevice('device-1', 'fan-1');
});

const queueClaims = (patch: Partial<QueueTokenClaims> = {}): QueueTokenClaims => ({
  kind: 'queue',
  eventId: 'ev-1',
  accountId: 'fan-1',
  deviceHash: device,
  joinIndex: 41,
  cohort: 'FIFO',
  iat: NOW_S - 60,
  exp: NOW_S + 3600,
  ...patch,
});
const watermark = (patch: Partial<WatermarkState> = {}): WatermarkState => ({
  eventId: 'ev-1',
  admittedThrough: 100,
  state: 'OPEN',
  ratePerMin: 1248,
  updatedAt: NOW - 1000,
  heartbeatAt: NOW - 1000,
  cohortSize: null,
  seedHex: null,
  ...patch,
});

async function rejects(p: Promise<unknown>, code: string): Promise<void> {
  await expect(p).rejects.toBeInstanceOf(TokenError);
  await expect(p).rejects.toMatchObject({ code });
}

/** A correctly signed token around any payload text, to reach the checks after the signature. */
async function signRaw(payloadJson: string): Promise<string> {
  const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64url');
  const payload = b64(new TextEncoder().encode(payloadJson));
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(payload));
  return `${payload}.${b64(new Uint8Array(mac))}`;
}

describe('tokens', () => {
  it('round-trips queue and admission tokens', async () => {
    const q = queueClaims();
    const qt = await signToken(key, q);
    expect(qt).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(await verifyToken(key, qt, { kind: 'queue', eventId: 'ev-1', accountId: 'fan-1', deviceHash: device, now: NOW })).toEqual(q);
    const a = admissionClaimsFor(q, 42, NOW);
    expect(a).toEqual({
      kind: 'admission',
      eventId: 'ev-1',
      accountId: 'fan-1',
      deviceHash: device,
      position: 42,
      iat: NOW_S,
      exp: NOW_S + 600,
    });
    const at = await signToken(key, a);
    const back: AdmissionTokenClaims = await verifyToken(key, at, { kind: 'admission', eventId: 'ev-1', now: NOW });
    expect(back).toEqual(a);
  });

  it('checks account and device only when asked, and defaults now to the clock', async () => {
    const t = await signToken(key, queueClaims({ exp: Math.floor(Date.now() / 1000) + 60 }));
    await expect(verifyToken(key, t, { kind: 'queue', eventId: 'ev-1' })).resolves.toMatchObject({ accountId: 'fan-1' });
    await rejects(
      signToken(key, queueClaims({ exp: Math.floor(Date.now() / 1000) - 1 })).then((x) =>
        verifyToken(key, x, { kind: 'queue', eventId: 'ev-1' }),
      ),
      'TOKEN_EXPIRED',
    );
  });

  it.each([
    ['', 'TOKEN_MALFORMED'],
    ['no-dot', 'TOKEN_MALFORMED'],
    ['a.b.c', 'TOKEN_MALFORMED'],
    ['a.', 'TOKEN_MALFORMED'],
    ['e30.!!!', 'TOKEN_MALFORMED'],
    ['e30.AAAA', 'TOKEN_FORGED'],
    ['x'.repeat(5000) + '.AAAA', 'TOKEN_MALFORMED'],
  ])('refuses %j with %s', async (token, code) => {
    await rejects(verifyToken(key, token, { kind: 'queue', eventId: 'ev-1', now: NOW }), code);
  });

  it('refuses a tampered payload, a token from another key, and a truncated signature as forged', async () => {
    const t = await signToken(key, queueClaims());
    const [payload, sig] = t.split('.') as [string, string];
    const richer = Buffer.from(JSON.stringify({ ...queueClaims(), joinIndex: 0 })).toString('base64url');
    await rejects(verifyToken(key, `${richer}.${sig}`, { kind: 'queue', eventId: 'ev-1', now: NOW }), 'TOKEN_FORGED');
    const other = await signToken(await createTokenKey('another-secret-another-secret-another'), queueClaims());
    await rejects(verifyToken(key, other, { kind: 'queue', eventId: 'ev-1', now: NOW }), 'TOKEN_FORGED');
    await rejects(verifyToken(key, `${payload}.${sig.slice(0, 20)}`, { kind: 'queue', eventId: 'ev-1', now: NOW }), 'TOKEN_FORGED');
  });

  it('refuses signed but malformed claims', async () => {
    for (const body of [
      'not json',
      '[]',
      '{}',
      JSON.stringify({ ...queueClaims(), joinIndex: -1 }),
      JSON.stringify({ ...queueClaims(), cohort: 'VIP' }),
      JSON.stringify({ ...queueClaims(), kind: 'other' }),
      JSON.stringify({ ...queueClaims(), deviceHash: 'abc' }),
    ])
      await rejects(verifyToken(key, await signRaw(body), { kind: 'queue', eventId: 'ev-1', now: NOW }), 'TOKEN_MALFORMED');
    await expect(signToken(key, { ...queueClaims(), joinIndex: 1.5 })).rejects.toMatchObject({ code: 'TOKEN_MALFORMED' });
  });

  it('names what is wrong with a valid token in the wrong place', async () => {
    const t = await signToken(key, queueClaims());
    const at = await signToken(key, admissionClaimsFor(queueClaims(), 1, NOW));
    await rejects(verifyToken(key, at, { kind: 'queue', eventId: 'ev-1', now: NOW }), 'TOKEN_WRONG_KIND');
    await rejects(verifyToken(key, t, { kind: 'admission', eventId: 'ev-1', now: NOW }), 'TOKEN_WRONG_KIND');
    await rejects(verifyToken(key, t, { kind: 'queue', eventId: 'ev-2', now: NOW }), 'TOKEN_WRONG_EVENT');
    await rejects(verifyToken(key, t, { kind: 'queue', eventId: 'ev-1', accountId: 'fan-2', now: NOW }), 'TOKEN_WRONG_ACCOUNT');
    await rejects(
      verifyToken(key, t, { kind: 'queue', eventId: 'ev-1', deviceHash: await hashDevice('device-2', 'fan-1'), now: NOW }),
      'TOKEN_WRONG_DEVICE',
    );
    await rejects(verifyToken(key, t, { kind: 'queue', eventId: 'ev-1', now: (NOW_S + 3600) * 1000 }), 'TOKEN_EXPIRED');
    await expect(verifyToken(key, t, { kind: 'queue', eventId: 'ev-1', now: (NOW_S + 3600) * 1000 - 1 })).resolves.toBeTruthy();
  });

  it('maps codes to domain error kinds', () => {
    expect(new TokenError('TOKEN_FORGED').kind).toBe('unauthenticated');
    expect(new TokenError('TOKEN_EXPIRED').kind).toBe('unauthenticated');
    expect(new TokenError('TOKEN_WRONG_DEVICE').kind).toBe('forbidden');
  });

  it('needs a secret of at least 32 characters', async () => {
    await expect(createTokenKey('short')).rejects.toThrow(/32/);
  });

  it('hashes a device per account, domain-separated', async () => {
    expect(device).toMatch(/^[0-9a-f]{64}$/);
    expect(await hashDevice('device-1', 'fan-1')).toBe(device);
    expect(await hashDevice('device-1', 'fan-2')).not.toBe(device);
    expect(await hashDevice('device-2', 'fan-1')).not.toBe(device);
    expect(await hashDevice('bc', 'a')).not.toBe(await hashDevice('c', 'ab'));
    // not the bare SHA-256 of either identifier
    const bare = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode('device-1'))).toString('hex');
    expect(device).not.toBe(bare);
  });
});

describe('queuePosition', () => {
  it('PREOPEN: unknown until the open is sealed, then the seeded permutation + 1', async () => {
    const c = queueClaims({ cohort: 'PREOPEN', joinIndex: 7 });
    expect(await queuePosition(c, watermark())).toBeNull();
    expect(await queuePosition(c, watermark({ cohortSize: 50 }))).toBeNull(); // seed not revealed
    const sealed = watermark({ cohortSize: 50, seedHex: SEED });
    expect(await queuePosition(c, sealed)).toBe((await permutePosition(SEED, 50, 7)) + 1);
    expect(await queuePosition(queueClaims({ cohort: 'PREOPEN', joinIndex: 50 }), sealed)).toBeNull();
  });

  it('the cohort fills positions 1..n exactly, and FIFO fans stand behind it', async () => {
    const n = 300;
    const w = watermark({ cohortSize: n, seedHex: SEED });
    const positions = await Promise.all(
      Array.from({ length: n }, (_, j) => queuePosition(queueClaims({ cohort: 'PREOPEN', joinIndex: j }), w)),
    );
    expect([...positions].sort((a, b) => a! - b!)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    const slots = await cohortPositions(SEED, n);
    positions.forEach((p, j) => expect(p).toBe(slots[j]! + 1));
    expect(await queuePosition(queueClaims({ cohort: 'FIFO', joinIndex: n }), w)).toBe(n + 1);
    expect(await queuePosition(queueClaims({ cohort: 'FIFO', joinIndex: n + 9 }), w)).toBe(n + 10);
  });
});

describe('computeStatus', () => {
  const fixed = { jitter: () => 0.5 };
  const status = (c: Partial<QueueTokenClaims>, w: Partial<WatermarkState>, now = NOW, opts: StatusOptions = fixed) =>
    computeStatus(queueClaims(c), watermark(w), now, opts);

  it('admits at and below the watermark', async () => {
    expect(await status({ joinIndex: 99 }, {})).toEqual({
      state: 'ADMITTED',
      position: 100,
      admittedThrough: 100,
      estWaitSeconds: 0,
      retryAfterSeconds: 5,
      admit: true,
    });
    expect((await status({ joinIndex: 0 }, {})).admit).toBe(true);
    expect((await status({ joinIndex: 100 }, {})).admit).toBe(false);
  });

  it('waits above it, with an estimate and a jittered 15-30 s poll', async () => {
    const far = await status({ joinIndex: 100_099 }, { ratePerMin: 1000 }); // position 100,100: 100,000 ahead
    expect(far).toEqual({
      state: 'WAITING',
      position: 100_100,
      admittedThrough: 100,
      estWaitSeconds: 6000,
      retryAfterSeconds: 23,
      admit: false,
    });
    expect((await status({ joinIndex: 100_099 }, { ratePerMin: 1000 }, NOW, { jitter: () => 0 })).retryAfterSeconds).toBe(15);
    expect((await status({ joinIndex: 100_099 }, { ratePerMin: 1000 }, NOW, { jitter: () => 0.999999 })).retryAfterSeconds).toBe(30);
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++)
      seen.add((await computeStatus(queueClaims({ joinIndex: 100_099 }), watermark({ ratePerMin: 1000 }), NOW)).retryAfterSeconds);
    expect(Math.min(...seen)).toBeGreaterThanOrEqual(15);
    expect(Math.max(...seen)).toBeLessThanOrEqual(30);
    expect(seen.size).toBeGreaterThan(5);
  });

  it('polls at the estimated turn when it is sooner than the usual 15-30 s, never sooner than 5 s', async () => {
    expect((await status({ joinIndex: 1347 }, { ratePerMin: 1248 })).retryAfterSeconds).toBe(23); // 1,248 ahead: 60 s
    // 208 ahead: 10 s at the rate, counted from the watermark's last move a second ago: 9 s.
    expect((await status({ joinIndex: 307 }, { ratePerMin: 1248 })).retryAfterSeconds).toBe(9);
    expect((await status({ joinIndex: 149 }, { ratePerMin: 1248 })).retryAfterSeconds).toBe(5); // 50 ahead: 3 s
  });

  it('polls every 5 s in LAST_CHANCE, where the end is near', async () => {
    expect(await status({ joinIndex: 100_099 }, { ratePerMin: 1000, state: 'LAST_CHANCE' })).toMatchObject({
      state: 'LAST_CHANCE',
      retryAfterSeconds: 5,
    });
  });

  it('has no estimate while the rate is 0', async () => {
    expect(await status({ joinIndex: 500 }, { ratePerMin: 0 })).toMatchObject({
      state: 'WAITING',
      estWaitSeconds: null,
      retryAfterSeconds: 23,
    });
  });

  it('fails closed: PAUSED by an operator or by a stale heartbeat, and then nobody is admitted', async () => {
    expect(await status({ joinIndex: 0 }, { state: 'PAUSED' })).toEqual({
      state: 'PAUSED',
      position: 1,
      admittedThrough: 100,
      estWaitSeconds: null,
      retryAfterSeconds: 30,
      admit: false,
    });
    expect(await status({ joinIndex: 0 }, { heartbeatAt: NOW - 5001 })).toMatchObject({ state: 'PAUSED', admit: false });
    expect(await status({ joinIndex: 0 }, { heartbeatAt: NOW - 5000 })).toMatchObject({ state: 'ADMITTED', admit: true });
    expect(await status({ joinIndex: 0 }, { heartbeatAt: NOW - 1500 }, NOW, { jitter: () => 0, heartbeatStaleMs: 1000 })).toMatchObject({
      state: 'PAUSED',
    });
    expect(await status({ joinIndex: 0 }, { state: 'LAST_CHANCE', heartbeatAt: NOW - 60_000 })).toMatchObject({
      state: 'PAUSED',
      admit: false,
    });
  });

  it('SOLD_OUT reaches everyone, even with a stale heartbeat, and admits no one', async () => {
    expect(await status({ joinIndex: 0 }, { state: 'SOLD_OUT' })).toMatchObject({ state: 'SOLD_OUT', admit: false, estWaitSeconds: null });
    expect(await status({ joinIndex: 0 }, { state: 'SOLD_OUT', heartbeatAt: 0 })).toMatchObject({ state: 'SOLD_OUT', admit: false });
  });

  it('LAST_CHANCE: those still waiting see it; admission still goes by the watermark', async () => {
    expect(await status({ joinIndex: 499 }, { state: 'LAST_CHANCE', ratePerMin: 40 })).toMatchObject({
      state: 'LAST_CHANCE',
      admit: false,
      estWaitSeconds: 600,
    });
    expect(await status({ joinIndex: 5 }, { state: 'LAST_CHANCE', ratePerMin: 40 })).toMatchObject({ state: 'ADMITTED', admit: true });
  });

  it('before the open everyone waits, position unknown for the pre-open cohort', async () => {
    expect(await status({ cohort: 'PREOPEN', joinIndex: 0 }, { state: 'NOT_OPEN', admittedThrough: 0 })).toEqual({
      state: 'WAITING',
      position: null,
      admittedThrough: 0,
      estWaitSeconds: null,
      retryAfterSeconds: 23,
      admit: false,
    });
    // even a mis-set watermark above 0 admits nobody before the open
    expect(await status({ joinIndex: 0 }, { state: 'NOT_OPEN', admittedThrough: 10 })).toMatchObject({
      state: 'WAITING',
      position: 1,
      admit: false,
    });
  });

  it('just after the open, before sealing, the pre-open cohort waits a few seconds', async () => {
    expect(await status({ cohort: 'PREOPEN', joinIndex: 0 }, { state: 'OPEN' })).toMatchObject({
      state: 'WAITING',
      position: null,
      retryAfterSeconds: 5,
      admit: false,
    });
  });

  it('refuses a token for another event', async () => {
    await expect(status({ eventId: 'ev-2' }, {})).rejects.toMatchObject({ code: 'TOKEN_WRONG_EVENT' });
  });

  it('admits only when open, fresh, and at or under the watermark (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(10_000),
        fc.nat(10_000),
        fc.constantFrom<WatermarkState['state']>('OPEN', 'PAUSED', 'SOLD_OUT', 'LAST_CHANCE', 'NOT_OPEN'),
        fc.nat(20_000),
        fc.double({ min: 0, max: 5000, noNaN: true }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        async (joinIndex, admittedThrough, state, heartbeatAge, ratePerMin, j) => {
          const s = await computeStatus(
            queueClaims({ joinIndex }),
            watermark({ admittedThrough, state, ratePerMin, heartbeatAt: NOW - heartbeatAge }),
            NOW,
            { jitter: () => j },
          );
          const fresh = heartbeatAge <= 5000;
          const shouldAdmit = fresh && (state === 'OPEN' || state === 'LAST_CHANCE') && joinIndex + 1 <= admittedThrough;
          expect(s.admit).toBe(shouldAdmit);
          expect(s.state === 'ADMITTED').toBe(shouldAdmit);
          if (state === 'SOLD_OUT') expect(s.state).toBe('SOLD_OUT');
          else if (state === 'PAUSED') expect(s.state).toBe('PAUSED');
          else if (state === 'NOT_OPEN')
            expect(s.state).toBe('WAITING'); // before the open nobody is admitted anyway
          else if (!fresh) expect(s.state).toBe('PAUSED');
          // 5-30 s: 15-30 s, or the estimated turn when sooner (never under 5 s), 5 s in LAST_CHANCE.
          expect(s.retryAfterSeconds >= 5 && s.retryAfterSeconds <= 30).toBe(true);
          if (s.estWaitSeconds !== null) expect(s.estWaitSeconds).toBeGreaterThanOrEqual(0);
        },
      ),
      { numRuns: 300 },
    );
  });
});

// ---- as an edge would run it ------------------------------------------------------------------------------

describe('edge.ts as an edge runs it: one neutral ESM bundle in a bare V8 context', () => {
  const edgePath = fileURLToPath(new URL('./edge.ts', import.meta.url));
  let bundle = '';
  let inputs: string[] = [];
  type EdgeModule = typeof import('./edge.js');
  let edge: EdgeModule;
  let context: vm.Context;

  beforeAll(async () => {
    ({ bundle, inputs, module: edge, context } = await bundleForEdge<EdgeModule>({ path: edgePath }));
  });

  it('bundles edge.ts, fairness.ts, the token primitives and the event limits only, with no node: import, require or process', () => {
    expect(inputs.map((p) => p.replace(/^.*src\//, '')).sort()).toEqual([
      'events/limits.ts',
      'queue/edge.ts',
      'queue/fairness.ts',
      'tokens/signing.ts',
    ]);
    expect(bundle).not.toMatch(/node:/);
    expect(bundle).not.toMatch(/^\s*import\s/m);
    expect(bundle).not.toMatch(/\bimport\s*\(/);
    expect(bundle).not.toMatch(/\brequire\s*\(/);
    expect(bundle).not.toMatch(/\bprocess\./);
    expect(bundle).not.toMatch(/\bBuffer\b/);
  });

  it('the source imports only ./fairness.js, ../tokens/signing.js and the event limits, which import nothing', () => {
    const importsOf = (path: string) =>
      [...readFileSync(path, 'utf8').matchAll(/^\s*(?:import|export)\b[^;]*?from\s+'([^']+)'/gm)].map((m) => m[1]);
    const edgeSrc = readFileSync(edgePath, 'utf8');
    expect([...new Set(importsOf(edgePath))].sort()).toEqual(['../events/limits.js', '../tokens/signing.js', './fairness.js']);
    expect(edgeSrc).not.toMatch(/node:|\brequire\s*\(|\bimport\s*\(/);
    for (const below of ['./fairness.ts', '../tokens/signing.ts', '../events/limits.ts'])
      expect(importsOf(fileURLToPath(new URL(below, import.meta.url)))).toEqual([]);
  });

  it('really runs without Node: the context has no process, require or Buffer', () => {
    expect(vm.runInContext('typeof process + typeof require + typeof Buffer + typeof setTimeout', context)).toBe(
      'undefinedundefinedundefinedundefined',
    );
  });

  it('signs and verifies inside the edge, compatibly with Node', async () => {
    const edgeKey = await edge.createTokenKey(SECRET);
    const edgeDevice = await edge.hashDevice('device-1', 'fan-1');
    expect(edgeDevice).toBe(device);
    const claims = queueClaims({ cohort: 'PREOPEN', joinIndex: 3 });
    const fromEdge = await edge.signToken(edgeKey, claims);
    expect(fromEdge).toBe(await signToken(key, claims)); // same bytes in both realms
    expect(JSON.parse(JSON.stringify(await verifyToken(key, fromEdge, { kind: 'queue', eventId: 'ev-1', now: NOW })))).toEqual(claims);
    const verified = await edge.verifyToken(edgeKey, await signToken(key, claims), {
      kind: 'queue',
      eventId: 'ev-1',
      accountId: 'fan-1',
      deviceHash: device,
      now: NOW,
    });
    expect(JSON.parse(JSON.stringify(verified))).toEqual(claims);
  });

  it('refuses bad tokens inside the edge with the same codes', async () => {
    const edgeKey = await edge.createTokenKey(SECRET);
    const t = await signToken(key, queueClaims());
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (e: { code?: string; name?: string }) => `${e.name}:${e.code}`,
      );
    expect(await codeOf(edge.verifyToken(edgeKey, 'garbage', { kind: 'queue', eventId: 'ev-1', now: NOW }))).toBe(
      'TokenError:TOKEN_MALFORMED',
    );
    expect(await codeOf(edge.verifyToken(await edge.createTokenKey('x'.repeat(32)), t, { kind: 'queue', eventId: 'ev-1', now: NOW }))).toBe(
      'TokenError:TOKEN_FORGED',
    );
    expect(await codeOf(edge.verifyToken(edgeKey, t, { kind: 'queue', eventId: 'ev-1', now: (NOW_S + 7200) * 1000 }))).toBe(
      'TokenError:TOKEN_EXPIRED',
    );
    expect(await codeOf(edge.verifyToken(edgeKey, t, { kind: 'queue', eventId: 'ev-9', now: NOW }))).toBe('TokenError:TOKEN_WRONG_EVENT');
    expect(await codeOf(edge.verifyToken(edgeKey, t, { kind: 'queue', eventId: 'ev-1', deviceHash: '0'.repeat(64), now: NOW }))).toBe(
      'TokenError:TOKEN_WRONG_DEVICE',
    );
  });

  it('computes status inside the edge exactly as Node does, permutation included', async () => {
    const sealed = watermark({ cohortSize: 1000, seedHex: SEED, admittedThrough: 400 });
    for (const patch of [
      { cohort: 'PREOPEN' as const, joinIndex: 0 },
      { cohort: 'PREOPEN' as const, joinIndex: 999 },
      { joinIndex: 5000 },
    ]) {
      for (const w of [
        sealed,
        { ...sealed, state: 'PAUSED' as const },
        { ...sealed, heartbeatAt: NOW - 10_000 },
        { ...sealed, state: 'SOLD_OUT' as const },
      ]) {
        const inEdge = await edge.computeStatus(queueClaims(patch), w, NOW, { jitter: () => 0.25 });
        const inNode = await computeStatus(queueClaims(patch), w, NOW, { jitter: () => 0.25 });
        expect(JSON.parse(JSON.stringify(inEdge))).toEqual(inNode);
      }
    }
    const stale = await edge.computeStatus(queueClaims({ joinIndex: 0 }), watermark({ heartbeatAt: NOW - 6000 }), NOW, {});
    expect(stale.state).toBe('PAUSED');
    expect(stale.admit).toBe(false);
  });
});

describe('a Node origin key (synchronous HMAC beside the Web Crypto key)', () => {
  it('signs exactly what the Web Crypto key signs, and each verifies the other', async () => {
    const { createNodeTokenKey } = await import('./token-cache.js');
    const nodeKey = await createNodeTokenKey(SECRET);
    const claims = queueClaims();
    const a = await signToken(key, claims);
    const b = await signToken(nodeKey, claims);
    expect(b).toBe(a);
    await expect(verifyToken(nodeKey, a, { kind: 'queue', eventId: claims.eventId, now: 0 })).resolves.toMatchObject({
      joinIndex: claims.joinIndex,
    });
    const forged = a.slice(0, -2) + (a.endsWith('AA') ? 'BB' : 'AA');
    await rejects(verifyToken(nodeKey, forged, { kind: 'queue', eventId: claims.eventId, now: 0 }), 'TOKEN_FORGED');
  });
});

describe('positions not claimed in time', () => {
  it('expire once reached longer ago than the claim window, and only then', async () => {
    const claims = queueClaims({ joinIndex: 9, iat: NOW_S - 3600 }); // position 10 (FIFO), joined an hour ago
    const history = [
      [NOW - 15 * 60_000, 5],
      [NOW - 12 * 60_000, 12],
      [NOW - 60_000, 40],
    ] as const;
    const late = await computeStatus(claims, watermark({ admittedThrough: 40, history }), NOW);
    expect(late).toMatchObject({ expired: true, admit: false });
    const inTime = await computeStatus(claims, watermark({ admittedThrough: 40, history, claimWindowMs: 13 * 60_000 }), NOW);
    expect(inTime).toMatchObject({ state: 'ADMITTED', admit: true });
    const noHistory = await computeStatus(claims, watermark({ admittedThrough: 40 }), NOW);
    expect(noHistory.admit).toBe(true);
    expect(positionReachedAt(10, watermark({ history }))).toBe(NOW - 12 * 60_000);
    expect(positionReachedAt(41, watermark({ history }))).toBeNull();
  });
});

describe('a place taken after its position was passed', () => {
  it('does not expire before its fan joined (the clock starts at the later of reached and joined)', async () => {
    const history = [[NOW - 30 * 60_000, 100]] as const;
    const justJoined = queueClaims({ joinIndex: 9, iat: NOW_S - 60 });
    expect(await computeStatus(justJoined, watermark({ admittedThrough: 100, history }), NOW)).toMatchObject({ admit: true });
  });
});
