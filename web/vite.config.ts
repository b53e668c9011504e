/**
 * Vite build of the dashboard (web/): a single-page React app that esi serves itself
 * (src/api/dashboard/pages.ts) — `index.html` at `/` and under `/dashboard/`, the hashed bundle
 * under `/dashboard/assets/`. Built by `npm run build:web` (run by npm's `prepare` at
 * `npm install`/`npm ci`), into web/dist (not committed).
 */
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  root: import.meta.dirname,
  base: '/dashboard/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 800,
  },
});
