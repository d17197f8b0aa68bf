import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

// The page is built into dist/ at the repository root; the dashboard app serves it from there.
export default defineConfig({
  root: here,
  base: '/',
  plugins: [react()],
  // The page checks its forms by the API's own rules, from their one home, pure modules only
  // (no node: import; web/src/page-imports.spec.ts): addresses (ADR 0403; the networks lib needs
  // @meridian/time), the plan table (Plan page; its lib needs @meridian/errors) and a webhook's
  // field bounds (the bounds entry of @meridian/webhooks, whose index needs node:crypto). Each
  // alias is the path tsconfig.base.json gives it; tools/stack/dashboard.ts watches each
  // (BUNDLED_LIBS) so that `npm start` rebuilds the page when one changes.
  resolve: {
    alias: {
      '@meridian/networks': fileURLToPath(
        new URL('../../../libs/domain/networks/src/index.ts', import.meta.url),
      ),
      '@meridian/errors': fileURLToPath(
        new URL('../../../libs/domain/errors/src/index.ts', import.meta.url),
      ),
      '@meridian/plans': fileURLToPath(
        new URL('../../../libs/domain/plans/src/index.ts', import.meta.url),
      ),
      '@meridian/time': fileURLToPath(
        new URL('../../../libs/domain/time/src/index.ts', import.meta.url),
      ),
      '@meridian/webhooks/bounds': fileURLToPath(
        new URL('../../../libs/domain/webhooks/src/bounds.ts', import.meta.url),
      ),
      '@meridian/webhooks/secret-rotation': fileURLToPath(
        new URL('../../../libs/domain/webhooks/src/secret-rotation.ts', import.meta.url),
      ),
    },
  },
  build: {
    outDir: fileURLToPath(new URL('../../../dist/apps/dashboard-web', import.meta.url)),
    emptyOutDir: true,
    // No source maps served: the page needs none, and QA read the whole source through them.
    sourcemap: false,
    chunkSizeWarningLimit: 1_000,
  },
});
