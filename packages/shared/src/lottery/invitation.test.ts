import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { createNodeTokenKey } from '../queue/token-cache.js';
import { bundleForEdge } from '../testing/edge-bundle.js';
import { signInvitation, type InvitationClaims } from './invitation.js';

// An edge checks invitation codes without the origin: invitation.ts (with edge.ts and fairness.ts) bundles to one
// neutral ESM file with no Node import and verifies, in a bare V8 context, a code the origin signed.

const SECRET = 'an edge invitation test secret of 32+ characters';

describe('invitation.ts as an edge runs it', () => {
  let bundle = '';
  let inputs: string[] = [];
  let edge: typeof import('./invitation.js') & typeof import('../tokens/signing.js');

  beforeAll(async () => {
    ({
      bundle,
      inputs,
      module: edge,
    } = await bundleForEdge<typeof edge>({
      contents: "export * from './invitation.ts'; export { createTokenKey } from '../tokens/signing.ts';",
      resolveDir: fileURLToPath(new URL('.', import.meta.url)),
    }));
  });

  it('bundles with no node: import, require or process', () => {
    // This file and the token primitives it imports (tokens/signing.ts, which imports nothing), beside the entry.
    expect(
      inputs
        .map((p) => p.replace(/^.*src\//, ''))
        .filter((p) => !p.endsWith('edge-entry.ts'))
        .sort(),
    ).toEqual(['lottery/invitation.ts', 'tokens/signing.ts']);
    expect(bundle).not.toMatch(/node:|\brequire\s*\(|\bprocess\./);
  });

  it("verifies the origin's code with Web Crypto alone, and refuses it outside the window or forged", async () => {
    const claims: InvitationClaims = {
      kind: 'invitation',
      eventId: 'ev',
      accountId: 'fan',
      rank: 7,
      cohort: 2,
      nbf: 2_000_000,
      exp: 2_003_600,
    };
    const code = await signInvitation(await createNodeTokenKey(SECRET), claims);
    const key = await edge.createTokenKey(SECRET);
    expect(await edge.verifyInvitation(key, code, { eventId: 'ev', accountId: 'fan', now: 2_000_000_000 })).toEqual(claims);
    await expect(edge.verifyInvitation(key, code, { eventId: 'ev', accountId: 'fan', now: 2_003_600_000 })).rejects.toMatchObject({
      code: 'INVITATION_EXPIRED',
    });
    const otherKey = await edge.createTokenKey('x'.repeat(40));
    await expect(edge.verifyInvitation(otherKey, code, { eventId: 'ev', accountId: 'fan', now: 2_000_000_000 })).rejects.toMatchObject({
      code: 'INVITATION_FORGED',
    });
  });
});
