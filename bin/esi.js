#!/usr/bin/env node
// Launcher for the `esi` command: runs the compiled bundle (dist/esi/<fingerprint>/, bin/build.js) when it
// matches the sources, rebuilding it first if they changed; otherwise — the bundle cannot be built
// here, or ESI_BUILD=0 — loads the TypeScript sources through tsx's ESM loader.
import { freshBundle } from './build.js';

const bundle = process.env.ESI_BUILD === '0' ? null : await freshBundle();
if (bundle) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}
