/**
 * Per-node boot media for Ironic's `redfish-virtual-media` boot interface: when a node's
 * `driver_info` names the agent's kernel and ramdisk (`deploy_kernel`, `deploy_ramdisk`) instead
 * of a ready ISO, the conductor builds a small ISO that boots them with the kernel parameters the
 * agent needs (`ipa-api-url=…`), serves it over esi's HTTP with a signed, expiring URL, and has
 * the BMC insert it (Ironic 21.4 `ironic/drivers/modules/image_utils.py` `prepare_deploy_iso`,
 * which publishes it under `[deploy] http_url` or as a Swift temp URL).
 *
 * URL: `<publicUrl>/boot/media/<node uuid>.iso?temp_url_sig=<hex>&temp_url_expires=<epoch s>`,
 * the signature HMAC-SHA256 (`SecretBox.mac`, purpose `boot-media-temp-url`) of
 * `GET\n<expires>\n/boot/media/<uuid>.iso`, like the image temp URLs (./temp-url.ts). The BMC
 * fetches it without credentials; the ISO holds no secret. For network boot the same scheme
 * serves the agent's kernel and ramdisk at `/boot/media/<uuid>/kernel` and `…/ramdisk`, staged
 * from `deploy_kernel`/`deploy_ramdisk` (Ironic publishes them under `[deploy] http_url`).
 */
import { timingSafeEqual } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { SecretBox } from '../secrets.ts';
import type { Clock } from '../clock.ts';
import { NotFoundError } from '../errors.ts';

const PURPOSE = 'boot-media-temp-url';

/**
 * The boot files esi serves for a node: the virtual media ISO, and for network boot the
 * agent's kernel and ramdisk (staged from `deploy_kernel`/`deploy_ramdisk` when those are not
 * http(s) URLs iPXE can fetch itself).
 */
export type BootFile = 'iso' | 'kernel' | 'ramdisk';

/** The boot files, in the form of the route's last path segment. */
export const BOOT_FILES: readonly BootFile[] = ['iso', 'kernel', 'ramdisk'];

/** The path of a node's boot file below the server's public URL. */
export function bootMediaPath(nodeUuid: string, file: BootFile = 'iso'): string {
  const node = encodeURIComponent(nodeUuid);
  return file === 'iso' ? `/boot/media/${node}.iso` : `/boot/media/${node}/${file}`;
}

function signature(secrets: SecretBox, nodeUuid: string, file: BootFile, expiresS: number): string {
  return secrets.mac(PURPOSE, `GET\n${expiresS}\n${bootMediaPath(nodeUuid, file)}`);
}

/**
 * The signed URL of a node's boot file.
 * @param publicUrl esi's public URL (no trailing slash)
 * @param expiresS epoch seconds after which the URL is refused
 */
export function signBootMediaUrl(
  secrets: SecretBox,
  publicUrl: string,
  nodeUuid: string,
  expiresS: number,
  file: BootFile = 'iso',
): string {
  return `${publicUrl}${bootMediaPath(nodeUuid, file)}?temp_url_sig=${signature(secrets, nodeUuid, file, expiresS)}&temp_url_expires=${expiresS}`;
}

/**
 * True when `sig` and `expires` (the query values) sign `nodeUuid`'s ISO and have not expired.
 * @param nowS epoch seconds
 */
export function verifyBootMediaUrl(
  secrets: SecretBox,
  nodeUuid: string,
  sig: unknown,
  expires: unknown,
  nowS: number,
  file: BootFile = 'iso',
): boolean {
  if (typeof sig !== 'string' || typeof expires !== 'string' || !/^\d{1,12}$/.test(expires)) return false;
  const expiresS = Number(expires);
  if (expiresS < nowS) return false;
  const want = Buffer.from(signature(secrets, nodeUuid, file, expiresS));
  const got = Buffer.from(sig);
  return want.length === got.length && timingSafeEqual(want, got);
}

/** The stored per-node boot files (implemented by the process that builds them). */
export interface BootMediaFiles {
  /** The node's boot file as a stream with its size, or null when there is none. */
  open(nodeUuid: string, file: BootFile): Promise<{ stream: Readable; bytes: number } | null>;
}

/** Serves the per-node ISOs to whoever holds a valid signed URL (the BMC). */
export class BootMediaService {
  constructor(
    private readonly files: BootMediaFiles,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
  ) {}

  /**
   * A boot file of `nodeUuid` (the ISO unless `which` says otherwise) for a request carrying
   * `temp_url_sig` and `temp_url_expires`.
   * @throws NotFoundError for a bad or expired signature, or no ISO (404 either way: nothing is revealed)
   */
  async open(nodeUuid: string, sig: unknown, expires: unknown, which: BootFile = 'iso'): Promise<{ stream: Readable; bytes: number }> {
    if (!verifyBootMediaUrl(this.secrets, nodeUuid, sig, expires, Math.floor(this.clock.now() / 1000), which)) {
      throw new NotFoundError('boot media', nodeUuid);
    }
    const file = await this.files.open(nodeUuid, which);
    if (file === null) throw new NotFoundError('boot media', nodeUuid);
    return file;
  }
}
