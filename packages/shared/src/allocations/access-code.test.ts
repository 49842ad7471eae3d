import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { createNodeTokenKey } from '../queue/token-cache.js';
import { bundleForEdge } from '../testing/edge-bundle.js';
import { checkAccessCode, signAccessCode, type AccessCodeClaims } from './access-code.js';

// A presale access code is checked where the fan joins the tier's queue, which may be an edge: access-code.ts (with
// the token primitives of tokens/signing.ts) bundles to one neutral file with no Node import and checks, in a bare V8 context, the
// codes the origin signs.

const SECRET = 'an edge access-code test secret of 32+ characters';
const NOW = 2_000_000_000_000;
const claims: AccessCodeClaims = { kind: 'access', eventId: 'ev-1', tier: 'FANCLUB', codeId: 'c-1', exp: NOW / 1000 + 3600 };

describe('access-code.ts as an edge runs it', () => {
  let bundle = '';
  let inputs: string[] = [];
  let edge: typeof import('./access-code.js') & typeof import('../tokens/signing.js');

  beforeAll(async () => {
    ({
      bundle,
      inputs,
      module: edge,
    } = await bundleForEdge<typeof edge>({
      contents: "export * from './access-code.ts'; export { createTokenKey } from '../tokens/signing.ts';",
      resolveDir: fileURLToPath(new URL('.', import.meta.url)),
    }));
  });

  it('bundles with no node: import, require or process', () => {
    // This file and what it imports (beside the bundle's own entry), nothing else: the token primitives
    // (tokens/signing.ts, which imports nothing), not the queue's token rules.
    expect(
      inputs
        .map((p) => p.replace(/^.*src\//, ''))
        .filter((p) => !p.endsWith('edge-entry.ts'))
        .sort(),
    ).toEqual(['allocations/access-code.ts', 'tokens/signing.ts']);
    expect(bundle).not.toMatch(/node:|\brequire\s*\(|\bprocess\./);
  });

  it("accepts the origin's code for its event and tier, and names what is wrong with any other", async () => {
    const code = await signAccessCode(await createNodeTokenKey(SECRET), claims);
    const key = await edge.createTokenKey(SECRET);
    const expected = { eventId: 'ev-1', tier: 'FANCLUB', accountId: 'fan-1', now: NOW };
    expect(await edge.checkAccessCode(key, code, expected)).toEqual({ ok: true, claims });
    const problem = async (c: string, over: Partial<typeof expected> = {}, k = key) => {
      const r = await edge.checkAccessCode(k, c, { ...expected, ...over });
      return r.ok ? 'ok' : r.problem;
    };
    expect(await problem(code, { tier: 'CARD' })).toBe('ACCESS_CODE_WRONG_TIER');
    expect(await problem(code, { eventId: 'ev-2' })).toBe('ACCESS_CODE_WRONG_EVENT');
    expect(await problem(code, { now: NOW + 3600_000 })).toBe('ACCESS_CODE_EXPIRED');
    expect(await problem(code, {}, await edge.createTokenKey('y'.repeat(40)))).toBe('ACCESS_CODE_FORGED');
    expect(await problem('not-a-code')).toBe('ACCESS_CODE_MALFORMED');
    const bound = await signAccessCode(await createNodeTokenKey(SECRET), { ...claims, codeId: 'c-2', accountId: 'fan-2' });
    expect(await problem(bound)).toBe('ACCESS_CODE_WRONG_ACCOUNT');
    expect(await problem(bound, { accountId: 'fan-2' })).toBe('ok');
  });

  it('agrees with the origin: the same check runs under Node', async () => {
    const key = await createNodeTokenKey(SECRET);
    const code = await signAccessCode(key, claims);
    expect(await checkAccessCode(key, code, { eventId: 'ev-1', tier: 'FANCLUB', accountId: 'anyone', now: NOW })).toEqual({
      ok: true,
      claims,
    });
  });
});
