/**
 * Checks `esi server` makes before it starts anything, so that a start that cannot work ends
 * at once with one line saying why and what to do, instead of a stack trace half-way through:
 * the data directory can be created and written, the ports are free, and the programs of the
 * features the configuration turns on are installed (src/drivers/host-tools.ts names their
 * Debian packages).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { findTool, toolNotFoundMessage } from '../drivers/host-tools.ts';
import { sqliteSchemaState } from '../store/sqlite-backup.ts';
import type { Config } from './config-types.ts';

/** A start-up check failed; the message is one line naming what and how to fix it. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

/** What a failed file-system call means, in words (the code when it has none). */
function fsReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  const words: Record<string, string> = {
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'read-only file system',
    ENOTDIR: 'a part of the path is a file, not a directory',
    ENOSPC: 'no space left on the device',
    EDQUOT: 'disk quota exceeded',
    ENOENT: 'the file system does not allow it there',
  };
  return (code !== undefined ? words[code] : undefined) ?? code ?? (err as Error).message;
}

/**
 * Create the data directory when it is not there and check this process can write in it (by
 * writing and removing a file: as root, permission bits alone say nothing).
 * @throws StartupError naming the directory and the reason
 */
export function checkDataDir(dir: string): void {
  const hint = 'choose another with --data-dir (ESI_DATA_DIR) or fix its permissions';
  if (fs.existsSync(dir) && !fs.statSync(dir).isDirectory()) {
    throw new StartupError(`data directory ${dir} is not a directory; ${hint}`);
  }
  try {
    makeDirs(dir);
  } catch (err) {
    throw new StartupError(`data directory ${dir} cannot be created: ${fsReason(err)}; ${hint}`);
  }
  const probe = path.join(dir, `.esi-write-check-${process.pid}`);
  try {
    fs.writeFileSync(probe, '');
    fs.rmSync(probe, { force: true });
  } catch (err) {
    throw new StartupError(`data directory ${dir} is not writable: ${fsReason(err)}; ${hint}`);
  }
}

/**
 * `mkdir -p`, one directory at a time from the deepest one there. (Node's own recursive mkdir
 * does not return on some file systems, e.g. under /proc, where a plain mkdir says ENOENT.)
 */
function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let d = path.resolve(dir); !fs.existsSync(d); d = path.dirname(d)) {
    missing.unshift(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of missing) fs.mkdirSync(d);
}

/**
 * The one-line explanation of a failure to listen on `host:port` (EADDRINUSE, EACCES, …).
 * @param flag the option that chooses the port (`--port`, `--lab-port`)
 */
export function listenFailure(err: unknown, what: string, host: string, port: number, flag: string): StartupError {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case 'EADDRINUSE':
      return new StartupError(
        `${what} port ${port} on ${host} is already in use: stop what listens there, or choose another port with ${flag}`,
      );
    case 'EACCES':
      return new StartupError(
        `cannot listen on ${what} port ${port} on ${host}: permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE); choose another with ${flag}`,
      );
    case 'EADDRNOTAVAIL':
      return new StartupError(`cannot listen on ${host}: it is not an address of this machine (--host)`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(`cannot listen on ${host}: no such host name (--host)`);
    default:
      return new StartupError(`cannot listen on ${what} port ${port} on ${host}: ${(err as Error).message}`);
  }
}

/**
 * Check that `host:port` can be listened on, by binding and closing it (port 0: that `host` is
 * an address of this machine).
 * @throws StartupError from {@link listenFailure}
 */
export async function checkPort(host: string, port: number, what: string, flag: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err) => reject(listenFailure(err, what, host, port, flag)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/**
 * The host programs the configuration needs, each with what needs it: QEMU lab nodes need
 * QEMU and iproute2, `--lab-ipmi` openipmi and ipmitool, a provisioning interface dnsmasq,
 * the tenant dataplane iproute2, nftables and dnsmasq.
 */
export function requiredTools(config: Config, extra: { readonly labIpmi?: boolean } = {}): Array<{ tool: string; why: string }> {
  const needs: Array<{ tool: string; why: string }> = [];
  const add = (why: string, ...tools: string[]): void => {
    for (const tool of tools) needs.push({ tool, why });
  };
  if (config.lab.qemu.nodes > 0) add('QEMU lab nodes (--lab-qemu)', 'qemu-system-x86_64', 'qemu-img', 'ip');
  if (extra.labIpmi === true) add('IPMI lab nodes (--lab-ipmi)', 'ipmi_sim', 'ipmitool');
  if (config.network.provisioningInterface !== null) add('provisioning DHCP (provisioning_interface)', '/usr/sbin/dnsmasq');
  if (config.network.dataplane !== null) add('the tenant dataplane (dataplane_bridge)', 'ip', 'nft', '/usr/sbin/dnsmasq');
  return needs;
}

/**
 * Check the programs of {@link requiredTools}.
 * @throws StartupError `<tool> not found: install the Debian package <pkg> (needed by …)` for
 *   each missing one, in one line
 */
export function checkTools(config: Config, extra: { readonly labIpmi?: boolean } = {}, pathEnv?: string): void {
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const { tool, why } of requiredTools(config, extra)) {
    if (seen.has(tool)) continue;
    seen.add(tool);
    if (findTool(tool, pathEnv) === null) problems.push(`${toolNotFoundMessage(tool, pathEnv)} (needed by ${why})`);
  }
  if (problems.length > 0) throw new StartupError(problems.join('; '));
}

/**
 * Every check before `esi server` starts: tools, data directory, the SQLite database when there
 * is one (an SQLite database of esi's that this esi knows: src/store/sqlite-file.ts; PostgreSQL
 * is checked when the store opens it), the API port (with the api role) and the lab's port
 * (with a lab).
 * @throws StartupError for the first check that fails; DatabaseFileError, SchemaTooNewError
 *   for a database esi must not use
 */
export async function preflight(config: Config, extra: { readonly labIpmi?: boolean } = {}): Promise<void> {
  checkTools(config, extra);
  checkDataDir(config.dataDir);
  const sqlite = path.join(config.dataDir, 'esi.sqlite');
  if (config.databaseUrl === null && fs.existsSync(sqlite)) sqliteSchemaState(sqlite);
  if (config.roles.includes('api')) await checkPort(config.host, config.port, 'the API', '--port (ESI_PORT)');
  if (config.lab.nodes > 0 || config.lab.qemu.nodes > 0)
    await checkPort(config.lab.host, config.lab.port, 'the lab', '--lab-port (ESI_LAB_PORT)');
}
