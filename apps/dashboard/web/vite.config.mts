import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

// The page is built into dist/ at the repository root; the dashboard app serves it from there.
export default defineConfig({
  root: here,
  base: '/',
  plugins: [react()],
  // The page checks addresses by the API's own rule (ADR 0403): the one domain module, pure.
  resolve: {
    alias: {
      '@meridian/networks': fileURLToPath(
        new URL('../../../libs/domain/networks/src/index.ts', import.meta.url),
      ),
    },
  },
  build: {
    outDir: fileURLToPath(new URL('../../../dist/apps/dashboard-web', import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 1_000,
  },
});
