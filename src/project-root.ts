/**
 * Where esi's own files are, whichever way its code runs: from the TypeScript sources (tsx,
 * vitest) or from the compiled bundle `dist/esi/<fingerprint>/main.js` (bin/build.js). Modules that read files
 * shipped next to the sources (migrations are code; but shell scripts, lab models, the web
 * dashboard's build, the agent's entry point for esbuild…) name them from the project root, never
 * relative to their own `import.meta.url`, which is the bundle's once compiled.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package name that marks the project root's package.json. */
const PACKAGE_NAME = 'esi';

/**
 * The nearest directory at or above `start` holding esi's package.json.
 * @param start an absolute directory
 * @throws Error when no such directory exists up to the file system's root
 */
export function findProjectRoot(start: string): string {
  for (let dir = start; ;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const name = (JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: unknown }).name;
      if (name === PACKAGE_NAME) return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json of ${PACKAGE_NAME} at or above ${start}`);
    dir = parent;
  }
}

/** The checkout's (or installed package's) root directory, absolute. */
export const PROJECT_ROOT = findProjectRoot(path.dirname(fileURLToPath(import.meta.url)));

/**
 * An absolute path inside the project.
 * @param segments path segments relative to the root, e.g. `('src', 'lab', 'models')`
 */
export function fromRoot(...segments: string[]): string {
  return path.join(PROJECT_ROOT, ...segments);
}
