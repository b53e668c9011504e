/**
 * The lab's agent program: src/agent/cli.ts bundled into one ES module with esbuild (a
 * dependency of esi's TypeScript loader, tsx), so that each virtual node's agent starts with
 * `node <bundle> agent …` — about 0.13 s of CPU instead of 0.6 s for `node bin/esi.js agent`,
 * which loads the TypeScript loader and every `esi` command first. A fleet of 50 booting
 * agents then costs the machine ~6 CPU seconds instead of ~30.
 *
 * The bundle is built once per directory and process (`<dir>/esi-agent.mjs`); when it cannot
 * be built, the lab falls back to `node bin/esi.js`.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { fromRoot } from '../project-root.ts';

const ENTRY = fromRoot('src', 'agent', 'cli.ts');

/** CommonJS packages in an ES module bundle need `require` (node:module createRequire). */
const BANNER = "import { createRequire as __esiCreateRequire } from 'node:module'; const require = __esiCreateRequire(import.meta.url);";

const built = new Map<string, Promise<string>>();

/**
 * Build (once per `dir` in this process) the agent bundle and return its path.
 * @param dir a directory the lab owns (created if missing)
 * @throws Error when esbuild is missing or the build fails
 */
export function agentBundle(dir: string): Promise<string> {
  const out = path.join(dir, 'esi-agent.mjs');
  let p = built.get(out);
  if (p === undefined) {
    p = build(out);
    built.set(out, p);
    p.catch(() => built.delete(out));
  }
  return p;
}

async function build(out: string): Promise<string> {
  const esbuild = await import('esbuild');
  await fs.mkdir(path.dirname(out), { recursive: true });
  const tmp = `${out}.${process.pid}.tmp`;
  await esbuild.build({
    entryPoints: [ENTRY],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: tmp,
    banner: { js: BANNER },
    logLevel: 'silent',
  });
  await fs.rename(tmp, out);
  return out;
}
