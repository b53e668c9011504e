#!/usr/bin/env node
// Runs a TypeScript file (first argument) through tsx's ESM loader: `node bin/run-ts.js bench/run.ts`.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

register();
const file = process.argv[2];
if (!file) {
  console.error('usage: run-ts.js <file.ts> [args...]');
  process.exit(2);
}
process.argv.splice(1, 1);
await import(pathToFileURL(path.resolve(file)).href);
