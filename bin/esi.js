#!/usr/bin/env node
// Launcher for the `esi` command: loads the TypeScript sources through tsx's ESM loader.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
