import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { createNodeTokenKey } from '../queue/token-cache.js';
import { signInvitation, type InvitationClaims } from './invitation.js';

// An edge checks invitation codes without the origin: invitation.ts (with edge.ts and fairness.ts) bundles to one
// neutral ESM file with no Node import and verifies, in a bare V8 context, a code the origin signed.

interface Esbuild {
  build(o: Record<string, unknown>): Promise<{ outputFiles: { text: string }[]; metafile: { inputs: Record<string, unknown> } }>;
  transform(code: string, o: Record<string, unknown>): Promise<{ code: string }>;
}
/** esbuild as installed for the toolchain (tsx's dependency); no new dependency. */
function loadEsbuild(): Esbuild {
  const here = createRequire(import.meta.url);
  for (const host of ['tsx/package.json', 'vitest/package.json']) {
    try {
      let from = here.resolve(host);
      if (host.startsWith('vitest')) from = createRequire(from).resolve('vite/package.json');
      return createRequire(from)('esbuild') as Esbuild;
    } catch {
      // try the next host
    }
  }
  throw new Error('esbuild not found next to tsx or vite');
}

const SECRET = 'an edge invitation test secret of 32+ characters';

describe('invitation.ts as an edge runs it', () => {
  let bundle = '';
  let inputs: string[] = [];
  let edge: typeof import('./invitation.js') & typeof import('../queue/edge.js');

  beforeAll(async () => {
    const esbuild = loadEsbuild();
    const out = await esbuild.build({
      stdin: { contents: "export * from './invitation.ts'; export { createTokenKey } from '../queue/edge.ts';", resolveDir: fileURLToPath(new URL('.', import.meta.url)), sourcefile: 'edge-entry.ts', loader: 'ts' },
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      target: 'es2022',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    bundle = out.outputFiles[0]!.text;
    inputs = Object.keys(out.metafile.inputs);
    const script = (await esbuild.transform(bundle, { format: 'iife', globalName: '__edge', target: 'es2022', loader: 'js' })).code;
    const context = vm.createContext({ crypto: globalThis.crypto, TextEncoder, TextDecoder, atob, btoa });
    vm.runInContext(script, context);
    edge = (context as unknown as { __edge: typeof edge }).__edge;
  });

  it('bundles with no node: import, require or process', () => {
    expect(inputs.map((p) => p.replace(/^.*src\//, ''))).toEqual(expect.arrayContaining(['lottery/invitation.ts', 'queue/edge.ts']));
    expect(bundle).not.toMatch(/node:|\brequire\s*\(|\bprocess\./);
  });

  it("verifies the origin's code with Web Crypto alone, and refuses it outside the window or forged", async () => {
    const claims: InvitationClaims = { kind: 'invitation', eventId: 'ev', accountId: 'fan', rank: 7, cohort: 2, nbf: 2_000_000, exp: 2_003_600 };
    const code = await signInvitation(await createNodeTokenKey(SECRET), claims);
    const key = await edge.createTokenKey(SECRET);
    expect(await edge.verifyInvitation(key, code, { eventId: 'ev', accountId: 'fan', now: 2_000_000_000 })).toEqual(claims);
    await expect(edge.verifyInvitation(key, code, { eventId: 'ev', accountId: 'fan', now: 2_003_600_000 })).rejects.toMatchObject({ code: 'INVITATION_EXPIRED' });
    const otherKey = await edge.createTokenKey('x'.repeat(40));
    await expect(edge.verifyInvitation(otherKey, code, { eventId: 'ev', accountId: 'fan', now: 2_000_000_000 })).rejects.toMatchObject({ code: 'INVITATION_FORGED' });
  });
});
