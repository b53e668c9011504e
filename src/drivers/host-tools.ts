/**
 * The programs of the host that esi runs (ipmitool, dnsmasq, QEMU, iproute2, …) and the Debian
 * package of each: the one place that turns "not there" into a message an operator can act on,
 * `<tool> not found: install the Debian package <pkg>`.
 *
 * Use {@link findTool}/{@link requireTool} to look before running (at start-up, for a feature
 * the configuration turns on), and {@link missingToolError} on a spawn's error (ENOENT) after.
 * The lookups read `process.env.PATH` unless given one: the PATH a spawn of this process
 * searches, not a setting (configuration stays in src/server/config.ts).
 */
import fs from 'node:fs';
import path from 'node:path';

/** Program (base name) → the Debian package that installs it. */
export const TOOL_PACKAGES: Readonly<Record<string, string>> = Object.freeze({
  bridge: 'iproute2',
  busybox: 'busybox-static',
  cpio: 'cpio',
  debootstrap: 'debootstrap',
  dnsmasq: 'dnsmasq-base',
  'dpkg-query': 'dpkg',
  genisoimage: 'genisoimage',
  'grub-mkimage': 'grub-common',
  'grub-mkrescue': 'grub-common',
  ip: 'iproute2',
  ipmi_sim: 'openipmi',
  ipmitool: 'ipmitool',
  ldd: 'libc-bin',
  mcopy: 'mtools',
  'mkfs.ext4': 'e2fsprogs',
  'mkfs.fat': 'dosfstools',
  'mkfs.vfat': 'dosfstools',
  mmd: 'mtools',
  nft: 'nftables',
  'qemu-img': 'qemu-utils',
  'qemu-system-x86_64': 'qemu-system-x86',
  setpriv: 'util-linux',
  sfdisk: 'fdisk',
  stdbuf: 'coreutils',
  sysctl: 'procps',
  unshare: 'util-linux',
  xorriso: 'xorriso',
  zstd: 'zstd',
});

/** Directories with administrators' programs, often not on a service user's PATH. */
const SBIN_DIRS = ['/usr/sbin', '/sbin', '/usr/local/sbin'];

/** A program esi needs is not installed (or not on the PATH); the message says what to install. */
export class ToolNotFoundError extends Error {
  /** The program as asked for (a name, or an absolute path). */
  readonly tool: string;
  /** Its Debian package, or null when {@link TOOL_PACKAGES} does not know it. */
  readonly pkg: string | null;

  constructor(tool: string, detail = '') {
    super(toolNotFoundMessage(tool) + detail);
    this.name = 'ToolNotFoundError';
    this.tool = tool;
    this.pkg = packageOf(tool);
  }
}

/** The Debian package of `tool` (a name or a path: its base name is looked up), or null. */
export function packageOf(tool: string): string | null {
  return TOOL_PACKAGES[path.basename(tool)] ?? null;
}

/**
 * `<tool> not found: install the Debian package <pkg>` (without a package when none is known);
 * a tool that is in /usr/sbin or /sbin but not on `pathEnv` is said to be there.
 */
export function toolNotFoundMessage(tool: string, pathEnv: string | undefined = process.env.PATH): string {
  if (!tool.includes('/')) {
    const elsewhere = SBIN_DIRS.map((d) => path.join(d, tool)).find(isExecutable);
    const onPath = (pathEnv ?? '').split(path.delimiter).filter((d) => d !== '');
    if (elsewhere !== undefined && !onPath.includes(path.dirname(elsewhere))) {
      return `${tool} not found on the PATH: it is ${elsewhere}; add ${path.dirname(elsewhere)} to the PATH`;
    }
  }
  const pkg = packageOf(tool);
  return pkg === null ? `${tool} not found: install it` : `${tool} not found: install the Debian package ${pkg}`;
}

/**
 * Where `tool` is: an absolute or relative path is taken as it is, a name is looked for in the
 * directories of `pathEnv` (as a spawn does).
 * @returns the executable's path, or null when there is none
 */
export function findTool(tool: string, pathEnv: string | undefined = process.env.PATH): string | null {
  if (tool.includes('/')) return isExecutable(tool) ? tool : null;
  for (const dir of (pathEnv ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, tool);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

/**
 * The path of `tool`.
 * @param why what needs it, added to the message (e.g. `QEMU lab nodes need it`)
 * @throws ToolNotFoundError when it is not there
 */
export function requireTool(tool: string, why?: string, pathEnv: string | undefined = process.env.PATH): string {
  const found = findTool(tool, pathEnv);
  if (found === null) throw new ToolNotFoundError(tool, why === undefined ? '' : ` (${why})`);
  return found;
}

/**
 * The tools of `tools` that are missing, as one message (`a not found: …; b not found: …`), or
 * null when all are there.
 */
export function missingTools(tools: readonly string[], pathEnv: string | undefined = process.env.PATH): string | null {
  const missing = [...new Set(tools)].filter((t) => findTool(t, pathEnv) === null);
  return missing.length === 0 ? null : missing.map((t) => toolNotFoundMessage(t, pathEnv)).join('; ');
}

/**
 * For the error of running `tool` (a spawn's `error` event or execFile's callback error): a
 * {@link ToolNotFoundError} when the program is not there (ENOENT), else null.
 */
export function missingToolError(tool: string, err: unknown): ToolNotFoundError | null {
  const e = err as NodeJS.ErrnoException | null;
  return e !== null && typeof e === 'object' && e.code === 'ENOENT' && typeof e.syscall === 'string' && e.syscall.startsWith('spawn')
    ? new ToolNotFoundError(tool)
    : null;
}

/** True when `file` is a regular file this process may execute. */
function isExecutable(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
