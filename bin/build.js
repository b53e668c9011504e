// The compiled build of the `esi` command: src/main.ts and everything it imports bundled by esbuild
// into ES modules under dist/esi/ (npm packages stay external, loaded from node_modules).
//
// Why: the same modules loaded through tsx's loader take ~75 MB more resident memory (a loader
// thread with its own V8 heap, transformed sources and their source maps) and more CPU at start
// than the bundle run by plain node (bench/README.md, memory-at-scale).
//
// Each build lives in dist/esi/<fingerprint>/ (main.js and the chunks of lazily imported modules),
// where the fingerprint covers the sources it was built from (path, size and modification time of
// every file under src/, plus tsconfig.json, package.json and this file). `freshBundle()`
// recomputes the fingerprint (about 1,000 stats, a few ms) and returns the build of these sources,
// building it first when there is none (about 1 s), so stale output never runs. A build is written
// to a temporary directory and renamed when complete; a concurrent start that finds a build under
// way (a lock file younger than a minute) runs the sources instead of waiting.
//
// `node bin/build.js` builds it (npm's `prepare` runs it, so `npm install` / `npm ci` leave a
// fresh build); bin/esi.js calls `freshBundle()` and falls back to the sources through tsx when
// it returns null. `ESI_BUILD=0` makes bin/esi.js always run the sources.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The builds, one directory per fingerprint of the sources. */
export const BUILDS = path.join(ROOT, 'dist', 'esi');
const LOCK = path.join(BUILDS, 'build.lock');
/** A lock older than this (ms) is left by a build that died; it is ignored. */
const LOCK_STALE_MS = 60_000;
/**
 * Builds of other sources kept: the newest few, and any younger than an hour (a process started
 * from one may still load its lazily imported chunks); each is ~9 MB with its source maps.
 */
const KEEP_BUILDS = 5;
const OLD_BUILD_MS = 3_600_000;
/** Files outside src/ that change what the bundle holds. */
const EXTRA_INPUTS = ['tsconfig.json', 'package.json', 'bin/build.js'];

/** @param {string} dir @param {string[]} out relative paths of every file under `dir`, appended */
function listFiles(dir, out) {
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) listFiles(rel, out);
    else if (entry.isFile()) out.push(rel);
  }
  return out;
}

/**
 * The fingerprint of the bundle's inputs: a SHA-256 over every input's path, size and mtime,
 * 16 hex digits of it.
 * @returns {string}
 */
export function sourceFingerprint() {
  const hash = crypto.createHash('sha256');
  for (const rel of [...listFiles('src', []).sort(), ...EXTRA_INPUTS]) {
    const st = fs.statSync(path.join(ROOT, rel), { throwIfNoEntry: false });
    hash.update(st ? `${rel}\0${st.size}\0${st.mtimeMs}\n` : `${rel}\0missing\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

/** @param {string} fingerprint @returns {string} the entry module of the build of these sources */
export function entryOf(fingerprint) {
  return path.join(BUILDS, fingerprint, 'main.js');
}

/**
 * Build the bundle of the current sources into `dist/esi/<fingerprint>/` (into a temporary
 * directory first, renamed when complete, so that a directory of that name is always whole).
 * @param {string} fingerprint the sources' fingerprint, taken before esbuild reads them (a file
 *   changed during the build changes the next fingerprint, and the bundle is built again)
 * @returns {Promise<string>} the entry module's path
 * @throws Error when esbuild is missing or the sources do not compile
 */
export async function build(fingerprint = sourceFingerprint()) {
  const esbuild = await import('esbuild');
  const target = path.join(BUILDS, fingerprint);
  const tmp = `${target}.${process.pid}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  try {
    await esbuild.build({
      absWorkingDir: ROOT,
      entryPoints: ['src/main.ts'],
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      outdir: tmp,
      sourcemap: 'linked',
      banner: {
        js: "import { createRequire as __esiCreateRequire } from 'node:module'; const require = __esiCreateRequire(import.meta.url);",
      },
      logLevel: 'silent',
    });
    try {
      fs.renameSync(tmp, target);
    } catch (err) {
      // Another process built the same sources first: its directory is as good as ours.
      if (!fs.existsSync(entryOf(fingerprint))) throw err;
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  removeOldBuilds(fingerprint);
  return entryOf(fingerprint);
}

/** Remove the builds of other sources but the newest {@link KEEP_BUILDS} and the recent ones. @param {string} keep */
function removeOldBuilds(keep) {
  const others = fs
    .readdirSync(BUILDS, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== keep && !e.name.endsWith('.tmp'))
    .map((e) => ({
      dir: path.join(BUILDS, e.name),
      mtimeMs: fs.statSync(path.join(BUILDS, e.name), { throwIfNoEntry: false })?.mtimeMs ?? 0,
    }))
    .sort((x, y) => y.mtimeMs - x.mtimeMs);
  for (const { dir, mtimeMs } of others.slice(KEEP_BUILDS)) {
    if (Date.now() - mtimeMs > OLD_BUILD_MS) fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** @returns {boolean} true when this process now holds the build lock */
function takeLock() {
  try {
    fs.mkdirSync(BUILDS, { recursive: true });
    fs.writeFileSync(LOCK, String(process.pid), { flag: 'wx' });
    return true;
  } catch {
    const st = fs.statSync(LOCK, { throwIfNoEntry: false });
    if (st && Date.now() - st.mtimeMs > LOCK_STALE_MS) {
      fs.rmSync(LOCK, { force: true });
      return takeLock();
    }
    return false;
  }
}

/**
 * The file URL of the build of the current sources — built first when there is none and this
 * process can build it — or null (no esbuild, a read-only install, a build under way in another
 * process, a compile error: the caller runs the sources instead).
 * @returns {Promise<string | null>}
 */
export async function freshBundle() {
  const fingerprint = sourceFingerprint();
  const entry = entryOf(fingerprint);
  if (fs.existsSync(entry)) return pathToFileURL(entry).href;
  if (!takeLock()) return null;
  try {
    await build(fingerprint);
    const { stop } = await import('esbuild');
    await stop();
    return pathToFileURL(entry).href;
  } catch {
    return null;
  } finally {
    fs.rmSync(LOCK, { force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await build();
}
