/**
 * Short-lived signed URLs for image data, so that the deploy agent — which has no Keystone
 * token — can download the image it writes (the role Swift temp URLs play for Ironic's
 * `direct` deploy with Glance, Ironic 21.4 `ironic/common/glance_service/image_service.py`), or
 * upload the image it captures from a node's disk.
 *
 * URL: `<publicUrl>/image/v2/images/<id>/file?temp_url_sig=<hex>&temp_url_expires=<epoch s>`.
 * The signature is HMAC-SHA256 (`SecretBox.mac`, purpose `image-temp-url`) of
 * `<METHOD>\n<expires>\n/image/v2/images/<id>/file`, the layout of Swift's temp URLs. A `GET`
 * URL grants reading that one image's data until it expires; a `PUT` URL uploading it; nothing
 * else.
 */
import { timingSafeEqual } from 'node:crypto';
import type { AuthContext } from '../auth.ts';
import type { SecretBox } from '../secrets.ts';

/** `SecretBox.mac` purpose of image temp URLs. */
const PURPOSE = 'image-temp-url';

/** The path an image's data is served at, below the server's public URL. */
export function imageFilePath(imageId: string): string {
  return `/image/v2/images/${encodeURIComponent(imageId)}/file`;
}

/** The HTTP methods a temp URL can be signed for. */
export type TempUrlMethod = 'GET' | 'PUT';

/** The signature of a temp URL. @param expiresS epoch seconds */
function signature(secrets: SecretBox, method: TempUrlMethod, imageId: string, expiresS: number): string {
  return secrets.mac(PURPOSE, `${method}\n${expiresS}\n${imageFilePath(imageId)}`);
}

/**
 * A temp URL for the data of image `imageId`.
 * @param publicUrl the server's public URL (no trailing slash)
 * @param nowMs epoch ms; @param ttlS validity, seconds
 */
export function signImageTempUrl(
  secrets: SecretBox,
  publicUrl: string,
  imageId: string,
  nowMs: number,
  ttlS: number,
  method: TempUrlMethod = 'GET',
): string {
  const expires = Math.floor(nowMs / 1000) + Math.max(1, Math.floor(ttlS));
  return `${publicUrl}${imageFilePath(imageId)}?temp_url_sig=${signature(secrets, method, imageId, expires)}&temp_url_expires=${expires}`;
}

/**
 * True when `sig`/`expires` (the query values) are a valid, unexpired temp URL of `imageId`.
 * @param nowMs epoch ms
 */
export function verifyImageTempUrl(
  secrets: SecretBox,
  imageId: string,
  sig: unknown,
  expires: unknown,
  nowMs: number,
  method: TempUrlMethod = 'GET',
): boolean {
  if (typeof sig !== 'string' || typeof expires !== 'string' || !/^[0-9a-f]{64}$/.test(sig) || !/^\d{1,12}$/.test(expires)) return false;
  const e = Number(expires);
  if (e * 1000 < nowMs) return false;
  const want = Buffer.from(signature(secrets, method, imageId, e), 'utf8');
  return timingSafeEqual(want, Buffer.from(sig, 'utf8'));
}

/**
 * The identity the conductor (and a temp URL download) reads images with: a system-scoped
 * admin, as Ironic uses its service user with Glance. Never given to a caller of the API.
 */
export const DEPLOY_SERVICE_CONTEXT: AuthContext = Object.freeze({
  anonymous: false,
  userId: 'esi-conductor',
  userName: 'esi-conductor',
  userDomainId: 'default',
  projectId: null,
  projectName: null,
  projectDomainId: null,
  systemScope: 'all',
  roles: Object.freeze(['admin', 'member', 'reader']),
  tokenId: '',
  expiresAt: null,
});

/** Signs and checks image temp URLs with the server's key, public URL and clock. */
export class ImageTempUrls {
  constructor(
    private readonly secrets: SecretBox,
    private readonly publicUrl: string,
    private readonly now: () => number,
  ) {}

  /** A temp URL for `method` on image `imageId`'s data, valid `ttlS` seconds from now. */
  sign(imageId: string, ttlS: number, method: TempUrlMethod = 'GET'): string {
    return signImageTempUrl(this.secrets, this.publicUrl, imageId, this.now(), ttlS, method);
  }

  /** True when the query values are a valid, unexpired temp URL for `method` on `imageId`. */
  verify(imageId: string, sig: unknown, expires: unknown, method: TempUrlMethod = 'GET'): boolean {
    return verifyImageTempUrl(this.secrets, imageId, sig, expires, this.now(), method);
  }
}
