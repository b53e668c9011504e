/**
 * The per-node virtual media ISOs of this process (src/domain/deploy/boot-media.ts): built
 * from a node's `deploy_kernel` and `deploy_ramdisk` with the agent's kernel parameters, kept in
 * `<dataDir>/boot-media/`, served by the `/boot/media` route.
 *
 * - The kernel and ramdisk are read from `file://` paths inside the allowed directories
 *   (`ESI_FILE_URL_ALLOWED_PATHS`, Ironic's `file_url_allowed_paths`) or downloaded once from http(s) URLs
 *   into `<dataDir>/boot-media/cache/<sha256 of the URL>` (Ironic's image cache does the same).
 * - A base directory per kernel/ramdisk pair (`base-<sha256>`) holds GRUB's BIOS and UEFI boot
 *   tree (src/ramdisk/iso.ts `prepareGrubTree`, built once) and links to the two files; each
 *   node's ISO is written from it with its kernel parameters (`<uuid>.iso`, replaced atomically).
 * - The temporary files of builds killed with their process are removed at start and every 10
 *   minutes ({@link ServerBootMedia.sweepTemporary}, ./boot-media-sweep.ts).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { signBootMediaUrl, type BootFile, type BootMediaFiles } from '../domain/deploy/boot-media.ts';
import { agentKernelParams, type BootFileStager } from '../domain/deploy/network-boot.ts';
import type { Node } from '../domain/inventory/model.ts';
import type { SecretBox } from '../domain/secrets.ts';
import type { BootMediaEnv } from '../conductor/tasks/context.ts';
import { prepareGrubTree, writeIso } from '../ramdisk/iso.ts';
import { sweepBootMedia, type BootMediaSweepLog } from './boot-media-sweep.ts';

/** Validity of a boot media URL, seconds (the BMC fetches it at once; a slow BMC gets an hour). */
const URL_TTL_S = 3600;

/** The ISOs of one process (see the module documentation). */
export class ServerBootMedia implements BootMediaFiles, BootMediaEnv, BootFileStager {
  readonly #dir: string;
  readonly #building = new Map<string, Promise<string>>();

  constructor(
    dataDir: string,
    private readonly publicUrl: string,
    private readonly secrets: SecretBox,
    /** Directories `file://` kernels and ramdisks may be in (real paths checked, links resolved). */
    private readonly allowedDirs: readonly string[],
  ) {
    this.#dir = path.join(dataDir, 'boot-media');
  }

  /** Build the node's ISO and return its signed URL. */
  async nodeIso(node: Pick<Node, 'uuid' | 'driver_info'>, purpose: string): Promise<string> {
    const kernel = await this.#local(node.driver_info.deploy_kernel, 'deploy_kernel');
    const ramdisk = await this.#local(node.driver_info.deploy_ramdisk, 'deploy_ramdisk');
    const base = await this.#base(kernel, ramdisk);
    const params = agentKernelParams(`${this.publicUrl}/baremetal`, purpose === 'inspect');
    await writeIso(base, params, this.#iso(node.uuid));
    return signBootMediaUrl(this.secrets, this.publicUrl, node.uuid, Math.floor(Date.now() / 1000) + URL_TTL_S);
  }

  /** Publish the node's kernel and ramdisk for network boot (see {@link BootFileStager}). */
  async stage(node: Pick<Node, 'uuid' | 'driver_info'>): Promise<{ kernel: string; ramdisk: string }> {
    const dir = path.join(this.#dir, this.#uuid(node.uuid));
    await fs.mkdir(dir, { recursive: true });
    const expires = Math.floor(Date.now() / 1000) + URL_TTL_S;
    const out: Record<string, string> = {};
    for (const [file, key] of [
      ['kernel', 'deploy_kernel'],
      ['ramdisk', 'deploy_ramdisk'],
    ] as const) {
      await linkFresh(await this.#local(node.driver_info[key], key), path.join(dir, file));
      out[file] = signBootMediaUrl(this.secrets, this.publicUrl, node.uuid, expires, file);
    }
    return { kernel: out.kernel!, ramdisk: out.ramdisk! };
  }

  /**
   * Remove the temporary files of builds killed with their process (./boot-media-sweep.ts).
   * @returns the paths removed
   */
  sweepTemporary(log?: BootMediaSweepLog): Promise<string[]> {
    return sweepBootMedia(this.#dir, Date.now(), log);
  }

  /**
   * Remove the boot media of nodes that no longer exist (issue 23: a node deleted while its
   * process was down, or whose deletion did not reach the discard): each `<uuid>.iso` and
   * `<uuid>/` network-boot folder whose node `exists` denies.
   * @param exists whether a node of this UUID exists (read from the database)
   * @returns the paths removed
   */
  async sweepOrphans(exists: (uuid: string) => Promise<boolean>, log?: BootMediaSweepLog): Promise<string[]> {
    const removed: string[] = [];
    for (const e of await fs.readdir(this.#dir, { withFileTypes: true }).catch(() => [])) {
      const m = /^([0-9a-f-]{36})(\.iso)?$/.exec(e.name);
      if (m === null || (m[2] === undefined ? !e.isDirectory() : !e.isFile())) continue;
      if (await exists(m[1]!)) continue;
      const full = path.join(this.#dir, e.name);
      await fs.rm(full, { recursive: true, force: true });
      removed.push(full);
    }
    if (removed.length > 0) log?.info({ removed }, 'boot media: removed the boot media of deleted nodes');
    return removed;
  }

  async discard(uuid: string): Promise<void> {
    await fs.rm(this.#iso(uuid), { force: true }).catch(() => undefined);
    await fs.rm(path.join(this.#dir, this.#uuid(uuid)), { recursive: true, force: true }).catch(() => undefined);
  }

  async open(uuid: string, which: BootFile = 'iso'): Promise<{ stream: Readable; bytes: number } | null> {
    const file = which === 'iso' ? this.#iso(uuid) : path.join(this.#dir, this.#uuid(uuid), which);
    const stat = await fs.stat(file).catch(() => null);
    if (stat === null) return null;
    return { stream: createReadStream(file), bytes: stat.size };
  }

  #iso(uuid: string): string {
    return path.join(this.#dir, `${this.#uuid(uuid)}.iso`);
  }

  #uuid(uuid: string): string {
    if (!/^[0-9a-f-]{36}$/.test(uuid)) throw new Error(`not a node UUID: ${uuid}`);
    return uuid;
  }

  /** A local file holding what `ref` (a `file://` URL or path, or an http(s) URL) names. */
  async #local(ref: unknown, key: string): Promise<string> {
    if (typeof ref !== 'string' || ref.trim() === '') throw new Error(`driver_info.${key} is not set`);
    if (ref.startsWith('file://') || ref.startsWith('/')) return this.#allowedFile(ref.startsWith('/') ? ref : fileURLToPath(ref), key);
    if (!/^https?:\/\//.test(ref)) throw new Error(`driver_info.${key} must be an http(s) or file:// URL`);
    const cached = path.join(this.#dir, 'cache', createHash('sha256').update(ref).digest('hex'));
    if (
      await fs.stat(cached).then(
        () => true,
        () => false,
      )
    )
      return cached;
    await fs.mkdir(path.dirname(cached), { recursive: true });
    const res = await fetch(ref);
    if (!res.ok || res.body === null) throw new Error(`fetching driver_info.${key} (${ref}) answered ${res.status}`);
    const tmp = `${cached}.${process.pid}.tmp`;
    await pipeline(Readable.fromWeb(res.body), (await fs.open(tmp, 'w')).createWriteStream());
    await fs.rename(tmp, cached);
    return cached;
  }

  /**
   * The real path of a local file named in `driver_info`, when it lies in an allowed directory.
   * @throws Error naming the key and the allowed directories otherwise (the path is not echoed
   *   beyond what the caller wrote)
   */
  async #allowedFile(file: string, key: string): Promise<string> {
    const real = await fs.realpath(file).catch(() => null);
    const inside = async (dir: string): Promise<boolean> => {
      const d = await fs.realpath(dir).catch(() => null);
      return d !== null && real !== null && (real === d || real.startsWith(`${d}${path.sep}`));
    };
    for (const dir of this.allowedDirs) if (await inside(dir)) return real!;
    throw new Error(
      `driver_info.${key} names a file outside the directories esi may serve (ESI_FILE_URL_ALLOWED_PATHS: ${this.allowedDirs.join(', ')}) or a missing one`,
    );
  }

  /** The base directory (GRUB tree and the two files) of a kernel/ramdisk pair, built once. */
  #base(kernel: string, ramdisk: string): Promise<string> {
    const key = createHash('sha256').update(`${kernel}\n${ramdisk}`).digest('hex').slice(0, 32);
    let p = this.#building.get(key);
    if (p === undefined) {
      p = this.#makeBase(path.join(this.#dir, `base-${key}`), kernel, ramdisk);
      this.#building.set(key, p);
      p.catch(() => this.#building.delete(key));
    }
    return p;
  }

  async #makeBase(dir: string, kernel: string, ramdisk: string): Promise<string> {
    const done = path.join(dir, '.done');
    if (
      !(await fs.stat(done).then(
        () => true,
        () => false,
      ))
    ) {
      await fs.rm(dir, { recursive: true, force: true });
      await fs.mkdir(dir, { recursive: true });
      await prepareGrubTree(dir);
      await fs.writeFile(done, '');
    }
    // The files may have changed (a rebuilt ramdisk at the same path): link them afresh.
    for (const [name, src] of [
      ['vmlinuz', kernel],
      ['initramfs', ramdisk],
    ] as const)
      await linkFresh(src, path.join(dir, name));
    return dir;
  }
}

/**
 * Make `dst` hold `src`'s bytes: a hard link (a copy across file systems), replaced atomically
 * unless `dst` is already that file or a copy of the same size no older than `src`.
 */
async function linkFresh(src: string, dst: string): Promise<void> {
  const [a, b] = await Promise.all([fs.stat(src), fs.stat(dst).catch(() => null)]);
  if (b !== null && (b.ino === a.ino || (b.size === a.size && b.mtimeMs >= a.mtimeMs))) return;
  const tmp = `${dst}.${process.pid}.tmp`;
  await fs.rm(tmp, { force: true });
  await fs.link(src, tmp).catch(() => fs.copyFile(src, tmp));
  await fs.rename(tmp, dst);
}
