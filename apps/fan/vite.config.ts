import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

/** Writes .br and .gz beside each script and stylesheet: the store API serves them as they are (preCompressed). */
function precompress(): Plugin {
  let outDir = 'dist';
  return {
    name: 'onsale-precompress',
    apply: 'build',
    configResolved(c) {
      outDir = c.build.outDir;
    },
    writeBundle() {
      const assets = join(outDir, 'assets');
      for (const f of readdirSync(assets).filter((n) => /\.(js|css|svg)$/.test(n))) {
        const body = readFileSync(join(assets, f));
        writeFileSync(join(assets, `${f}.gz`), gzipSync(body, { level: 9 }));
        writeFileSync(join(assets, `${f}.br`), brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
      }
    },
  };
}

// The fans' page is written against React's API and built with preact/compat: the same components render in the
// console's preview with React itself, while a fan's phone downloads a tenth of the script (docs/fan-pages.md).
export default defineConfig({
  base: '/e/',
  plugins: [precompress()],
  resolve: {
    alias: [
      { find: /^react-dom\/client$/, replacement: 'preact/compat/client' },
      { find: /^react-dom$/, replacement: 'preact/compat' },
      { find: /^react\/jsx-runtime$/, replacement: 'preact/compat/jsx-runtime' },
      { find: /^react\/jsx-dev-runtime$/, replacement: 'preact/compat/jsx-dev-runtime' },
      { find: /^react$/, replacement: 'preact/compat' },
    ],
  },
  server: {
    port: 5174,
    // In development the store API runs on its own port; in production it serves this build itself, same origin.
    proxy: { '^/(events|holds|listings|me|waitlist|auth|fan)(/|$)': 'http://127.0.0.1:3000' },
  },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, target: 'es2022' },
  worker: { format: 'es' },
});
