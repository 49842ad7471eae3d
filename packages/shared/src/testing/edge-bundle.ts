import { createRequire } from 'node:module';
import vm from 'node:vm';

// What an edge (a CDN worker) runs: a module bundled to one neutral ESM file with no Node import, loaded in a
// bare V8 context that has Web Crypto and the text codecs but no process, require or Buffer. The edge tests of
// the queue tokens, presale access codes and lottery invitations all load their modules this way.

interface Esbuild {
  build(o: Record<string, unknown>): Promise<{ outputFiles: { text: string }[]; metafile: { inputs: Record<string, unknown> } }>;
  transform(code: string, o: Record<string, unknown>): Promise<{ code: string }>;
}

/** esbuild as installed for the toolchain (tsx's and vite's dependency); no new dependency. */
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

export interface EdgeBundle<M> {
  /** The bundle's text, to check for Node-isms. */
  bundle: string;
  /** The source files that went into it. */
  inputs: string[];
  /** The bundle's exports, as loaded in the bare context. */
  module: M;
  context: vm.Context;
}

/** Bundles `entry` (a file, or source text resolved from `resolveDir`) for an edge and loads it in a bare V8 context. */
export async function bundleForEdge<M>(entry: { path: string } | { contents: string; resolveDir: string }): Promise<EdgeBundle<M>> {
  const esbuild = loadEsbuild();
  const out = await esbuild.build({
    ...('path' in entry
      ? { entryPoints: [entry.path] }
      : { stdin: { contents: entry.contents, resolveDir: entry.resolveDir, sourcefile: 'edge-entry.ts', loader: 'ts' } }),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const bundle = out.outputFiles[0]!.text;
  // vm.Script runs scripts, not modules: wrap the very same bundle as an IIFE exposing its exports.
  const script = (await esbuild.transform(bundle, { format: 'iife', globalName: '__edge', target: 'es2022', loader: 'js' })).code;
  const context = vm.createContext({ crypto: globalThis.crypto, TextEncoder, TextDecoder, atob, btoa, URL });
  vm.runInContext(script, context, { filename: 'edge.bundle.js' });
  return { bundle, inputs: Object.keys(out.metafile.inputs), module: (context as { __edge: M }).__edge, context };
}
