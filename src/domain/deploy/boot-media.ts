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
 * fetches it without credentials; the ISO holds no secret.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { SecretBox } from '../secrets.ts';
import type { Clock } from '../clock.ts';
import { NotFoundError } from '../errors.ts';

const PURPOSE = 'boot-media-temp-url';

/** The path of a node's ISO below the server's public URL. */
export function bootMediaPath(nodeUuid: string): string {
  return `/boot/media/${encodeURIComponent(nodeUuid)}.iso`;
}

function signature(secrets: SecretBox, nodeUuid: string, expiresS: number): string {
  return secrets.mac(PURPOSE, `GET\n${expiresS}\n${bootMediaPath(nodeUuid)}`);
}

/**
 * The signed URL of a node's ISO.
 * @param publicUrl esi's public URL (no trailing slash)
 * @param expiresS epoch seconds after which the URL is refused
 */
export function signBootMediaUrl(secrets: SecretBox, publicUrl: string, nodeUuid: string, expiresS: number): string {
  return `${publicUrl}${bootMediaPath(nodeUuid)}?temp_url_sig=${signature(secrets, nodeUuid, expiresS)}&temp_url_expires=${expiresS}`;
}

/**
 * True when `sig` and `expires` (the query values) sign `nodeUuid`'s ISO and have not expired.
 * @param nowS epoch seconds
 */
export function verifyBootMediaUrl(secrets: SecretBox, nodeUuid: string, sig: unknown, expires: unknown, nowS: number): boolean {
  if (typeof sig !== 'string' || typeof expires !== 'string' || !/^\d{1,12}$/.test(expires)) return false;
  const expiresS = Number(expires);
  if (expiresS < nowS) return false;
  const want = Buffer.from(signature(secrets, nodeUuid, expiresS));
  const got = Buffer.from(sig);
  return want.length === got.length && timingSafeEqual(want, got);
}

/** The stored per-node ISOs (implemented by the process that builds them). */
export interface BootMediaFiles {
  /** The node's ISO as a stream with its size, or null when there is none. */
  open(nodeUuid: string): Promise<{ stream: Readable; bytes: number } | null>;
}

/** Serves the per-node ISOs to whoever holds a valid signed URL (the BMC). */
export class BootMediaService {
  constructor(
    private readonly files: BootMediaFiles,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
  ) {}

  /**
   * The ISO of `nodeUuid` for a request carrying `temp_url_sig` and `temp_url_expires`.
   * @throws NotFoundError for a bad or expired signature, or no ISO (404 either way: nothing is revealed)
   */
  async open(nodeUuid: string, sig: unknown, expires: unknown): Promise<{ stream: Readable; bytes: number }> {
    if (!verifyBootMediaUrl(this.secrets, nodeUuid, sig, expires, Math.floor(this.clock.now() / 1000))) {
      throw new NotFoundError('boot media', nodeUuid);
    }
    const file = await this.files.open(nodeUuid);
    if (file === null) throw new NotFoundError('boot media', nodeUuid);
    return file;
  }
}
