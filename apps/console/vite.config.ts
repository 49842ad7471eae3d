import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { tanstackRouter } from '@tanstack/router-plugin/vite';
import { compression } from 'vite-plugin-compression2';

export default defineConfig({
  // The router plugin must run before React's so it can split route files first. Compression writes .br and .gz
  // beside each script, stylesheet and the page: the BFF sends them as they are (preCompressed), no CPU per request.
  plugins: [
    tanstackRouter({ target: 'react', autoCodeSplitting: true }),
    react(),
    compression({ algorithms: ['brotliCompress', 'gzip'], include: /\.(js|css|html|svg|json)$/, threshold: 1024 }),
  ],
  server: {
    port: 5173,
    // In development the BFF runs on its own port; in production it serves this build itself, same origin.
    proxy: { '/trpc': 'http://127.0.0.1:3001' },
  },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
});
