import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { tanstackRouter } from '@tanstack/router-plugin/vite';

export default defineConfig({
  // The router plugin must run before React's so it can split route files first.
  plugins: [tanstackRouter({ target: 'react', autoCodeSplitting: true }), react()],
  server: {
    port: 5173,
    // In development the BFF runs on its own port; in production it serves this build itself, same origin.
    proxy: { '/trpc': 'http://127.0.0.1:3001' },
  },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
});
