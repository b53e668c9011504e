/**
 * The deploy agent as one ES module for the ramdisk (`/esi-agent.mjs`, run by `node`): the
 * agent's standalone entry point src/agent/cli.ts bundled with esbuild, as the lab bundles it
 * (src/lab/agent-bundle.ts), but in memory and with the repository root as esbuild's working
 * directory, so that the same sources give the same bytes wherever the build runs from (the
 * bundle's content hash is part of the ramdisk's cache key).
 */
import { PROJECT_ROOT } from '../project-root.ts';

const REPO = PROJECT_ROOT;
const ENTRY = 'src/agent/cli.ts';

/** CommonJS packages in an ES module bundle need `require` (node:module createRequire). */
const BANNER = "import { createRequire as __esiCreateRequire } from 'node:module'; const require = __esiCreateRequire(import.meta.url);";

/**
 * Bundle the agent.
 * @returns the module's source, bytes
 * @throws Error when esbuild is missing or the build fails
 */
export async function agentBundleBytes(): Promise<Buffer> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    absWorkingDir: REPO,
    entryPoints: [ENTRY],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: 'esi-agent.mjs',
    banner: { js: BANNER },
    write: false,
    logLevel: 'silent',
  });
  const out = result.outputFiles[0];
  if (out === undefined) throw new Error('esbuild produced no agent bundle');
  return Buffer.from(out.contents);
}
