import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

// The dashboard is a static bundle served by the app itself (dashboard.routes.ts), so everything
// it needs (scripts, styles) is bundled: the CSP allows no inline scripts and no other origin.
const root = decodeURIComponent(new URL('.', import.meta.url).pathname);

export default defineConfig({
  root,
  base: '/',
  plugins: [preact()],
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // One small app: a single chunk keeps loading to two requests (script and stylesheet).
    chunkSizeWarningLimit: 200,
  },
  server: {
    // `npx vite --config src/dashboard/vite.config.ts` for UI work, with the API on :3000.
    proxy: { '/api': 'http://127.0.0.1:3000' },
  },
});
