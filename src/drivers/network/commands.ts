/**
 * The programs the tenant dataplane runs — iproute2's `ip` (namespaces, links, addresses,
 * routes; `-batch` for several changes in one process), procps' `sysctl` and nftables' `nft`
 * inside a namespace (`ip netns exec`) — each failure a {@link DataplaneError} carrying the
 * command and its stderr. Needs CAP_NET_ADMIN and CAP_SYS_ADMIN (root).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { DataplaneError } from '../../domain/networking/dataplane.ts';
import { missingToolError } from '../host-tools.ts';

/** Where iproute2 keeps named network namespaces (bind mounts, one file each). */
export const NETNS_DIR = '/run/netns';

const TIMEOUT_MS = 30_000;

/**
 * Run a program.
 * @param input written to its stdin (then closed)
 * @returns its stdout
 * @throws DataplaneError naming the command, with its stderr (first lines)
 */
export function run(command: string, args: readonly string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, [...args], { timeout: TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (!err) return resolve(stdout);
      const missing = missingToolError(command, err);
      if (missing !== null) return reject(new DataplaneError(missing.message, { cause: err }));
      const detail = (stderr || err.message).trim().split('\n').slice(0, 6).join('; ');
      reject(new DataplaneError(`${command} ${args.join(' ')} failed: ${detail}`, { cause: err }));
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** `ip` in namespace `netns` (null: the host's). */
export function ip(netns: string | null, args: readonly string[], input?: string): Promise<string> {
  return run('ip', [...(netns ? ['-n', netns] : []), ...args], input);
}

/**
 * Run `ip -batch -` with `lines` (nothing when there are none). The batch stops at its first
 * failing line; the error names it.
 */
export async function ipBatch(netns: string | null, lines: readonly string[]): Promise<void> {
  if (lines.length > 0) await ip(netns, ['-batch', '-'], `${lines.join('\n')}\n`);
}

/** `ip -j <args>` parsed (an empty answer is an empty list). */
export async function ipJson<T>(netns: string | null, args: readonly string[]): Promise<T[]> {
  const out = await ip(netns, ['-j', ...args]);
  return JSON.parse(out.trim() === '' ? '[]' : out) as T[];
}

/** Run a program inside namespace `netns`. */
export function inNamespace(netns: string, command: string, args: readonly string[], input?: string): Promise<string> {
  return run('ip', ['netns', 'exec', netns, command, ...args], input);
}

/**
 * The identity of a named namespace (device and inode of its bind mount, which is the
 * namespace's own inode), or null when there is none by that name.
 */
export async function namespaceIdentity(name: string): Promise<string | null> {
  try {
    const st = await fs.stat(`${NETNS_DIR}/${name}`);
    return `${st.dev}:${st.ino}`;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new DataplaneError(`cannot read namespace ${name}: ${(err as Error).message}`, { cause: err });
  }
}

/** The names of every named namespace (`ip netns list`). */
export async function namespaceNames(): Promise<string[]> {
  const list = await ipJson<{ name: string }>(null, ['netns', 'list']);
  return list.map((n) => n.name);
}

/** Create namespace `name` with its loopback up. */
export async function addNamespace(name: string): Promise<void> {
  await ip(null, ['netns', 'add', name]);
  await ip(name, ['link', 'set', 'dev', 'lo', 'up']);
}

/** Delete namespace `name` (nothing when it does not exist). */
export async function deleteNamespace(name: string): Promise<void> {
  if ((await namespaceIdentity(name)) === null) return;
  await ip(null, ['netns', 'del', name]);
}

/** A link as `ip -j addr show` reports it (the fields used). */
export interface NsLink {
  readonly ifname: string;
  /** MAC address. */
  readonly address?: string;
  readonly mtu?: number;
  readonly flags?: readonly string[];
  readonly master?: string;
  readonly addr_info?: ReadonlyArray<{ readonly family?: string; readonly local?: string; readonly prefixlen?: number }>;
}

/** A route as `ip -j route show` reports it (the fields used). */
export interface NsRoute {
  readonly dst?: string;
  readonly gateway?: string;
  readonly dev?: string;
}
