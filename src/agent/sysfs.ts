/**
 * Reading the kernel's /proc and /sys below a root directory (`/` on a machine, a fake tree in
 * tests): text attributes, directory listings, existence. Nothing here throws: a file that
 * cannot be read is null, a directory that cannot be listed is empty.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

/** A text file below `root`, trimmed; null when it cannot be read. */
export async function readText(root: string, file: string): Promise<string | null> {
  try {
    return (await fs.readFile(path.join(root, file), 'utf8')).trim();
  } catch {
    return null;
  }
}

/** The entries of a directory below `root`, sorted (empty when it cannot be listed). */
export async function listDir(root: string, dir: string): Promise<string[]> {
  return fs.readdir(path.join(root, dir)).then(
    (names) => names.sort(),
    () => [],
  );
}

/** True when `p` below `root` exists (following links). */
export async function exists(root: string, p: string): Promise<boolean> {
  return fs.stat(path.join(root, p)).then(
    () => true,
    () => false,
  );
}
