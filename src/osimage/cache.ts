/**
 * The cache of slow build artefacts, outside the checkout:
 * `${ESI_CACHE_DIR:-$HOME/.cache/esi}/<kind>/<key>/`, where `key` is the sha256 of every input
 * of the build (see {@link cacheKey}). A build works in a temporary directory next to its
 * entry (`<kind>/.tmp-<pid>-<random>`) and publishes it with one `rename(2)`, so an entry is
 * either complete or absent: a killed build leaves only a temporary directory, which the next
 * build of the same kind removes once that process is gone.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { run } from './run.ts';
import { processAlive } from '../drivers/host-process.ts';

/**
 * The cache root: `$ESI_CACHE_DIR`, else `~/.cache/esi`.
 * @param env the environment to read (`process.env` in the CLI and the tests)
 */
export function cacheRoot(env: NodeJS.ProcessEnv): string {
  const dir = env.ESI_CACHE_DIR;
  return dir !== undefined && dir.trim() !== '' ? path.resolve(dir) : path.join(os.homedir(), '.cache', 'esi');
}

/**
 * The cache key of a build: the sha256 (hex) of its inputs, given as name → value pairs (a
 * version constant, file contents, package versions, …). Names are sorted, so the order in
 * which inputs are listed does not matter.
 */
export function cacheKey(inputs: Readonly<Record<string, string | Buffer>>): string {
  const h = crypto.createHash('sha256');
  for (const name of Object.keys(inputs).sort()) {
    const v = inputs[name]!;
    const bytes = typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
    h.update(`${name}\0${bytes.length}\0`);
    h.update(bytes);
  }
  return h.digest('hex');
}

/** One entry of the cache. */
export class CacheEntry {
  /** The entry's directory, `<root>/<kind>/<key>` (exists only once published). */
  readonly dir: string;
  private readonly kindDir: string;

  constructor(
    root: string,
    kind: string,
    readonly key: string,
  ) {
    this.kindDir = path.join(root, kind);
    this.dir = path.join(this.kindDir, key);
  }

  /** Whether the entry has been published. */
  async exists(): Promise<boolean> {
    return fs.stat(this.dir).then(
      (s) => s.isDirectory(),
      () => false,
    );
  }

  /**
   * A fresh temporary directory to build the entry in, `<kind>/.tmp-<pid>-<random>` (on the same
   * file system, so that {@link publish} is one rename). Leftovers of killed builds of this kind
   * (their process is gone) are removed first.
   */
  async makeTemp(): Promise<string> {
    await fs.mkdir(this.kindDir, { recursive: true });
    for (const name of await fs.readdir(this.kindDir)) {
      const pid = /^\.tmp-(\d+)-/.exec(name)?.[1];
      if (pid !== undefined && !processAlive(Number(pid))) await removeTree(path.join(this.kindDir, name));
    }
    return fs.mkdtemp(path.join(this.kindDir, `.tmp-${process.pid}-`));
  }

  /**
   * Publish `tempDir` as the entry, atomically. With `replace`, an existing entry is moved
   * aside and removed (a reader that already opened its files keeps them); without, an entry
   * another build published first wins and `tempDir` is removed.
   * @returns true when `tempDir` became the entry
   */
  async publish(tempDir: string, replace: boolean): Promise<boolean> {
    await fs.chmod(tempDir, 0o755); // mkdtemp made it 0700; the entry is readable by all
    if (replace && (await this.exists())) {
      const old = `${tempDir}.old`;
      await fs.rename(this.dir, old);
      await removeTree(old);
    }
    try {
      await fs.rename(tempDir, this.dir);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
      await removeTree(tempDir);
      return false;
    }
  }
}

/**
 * Remove a directory tree without crossing into other file systems (`rm -rf
 * --one-file-system`): a mount left inside a build tree is never followed.
 */
export async function removeTree(dir: string): Promise<void> {
  await run('rm', ['-rf', '--one-file-system', '--', dir]);
}
