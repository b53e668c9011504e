/**
 * Reading and checking the header of a qcow2 image (QEMU's `docs/interop/qcow2.txt`, header
 * versions 2 and 3), from the first bytes of an upload — cheap, no full parse.
 *
 * Layout used (big-endian):
 *
 * | offset | size | field                                  |
 * |--------|------|----------------------------------------|
 * | 0      | 4    | magic `QFI\xfb`                        |
 * | 4      | 4    | version (2 or 3)                       |
 * | 8      | 8    | backing_file_offset (0: no backing file) |
 * | 16     | 4    | backing_file_size                      |
 * | 20     | 4    | cluster_bits (9…21)                    |
 * | 24     | 8    | size: the virtual disk size, bytes     |
 * | 32     | 4    | crypt_method                           |
 * | 72     | 8    | incompatible_features (version 3)      |
 * | 100    | 4    | header_length (version 3, ≥ 104)       |
 *
 * Safety: a qcow2 file that names a backing file, or (v3) sets the "external data file"
 * incompatible feature (bit 2), makes `qemu-img convert` read another file of the machine that
 * converts it — on deploy, the conductor host. Such images are refused, as Glance's format
 * inspector refuses them (OSSA-2024-001).
 */

/** Bytes needed to judge a header: the version 3 header length. */
export const QCOW2_HEADER_BYTES = 104;

/** Bytes of a version 2 header. */
const V2_HEADER_BYTES = 72;

const MAGIC = 0x514649fb;
const EXTERNAL_DATA_FILE_BIT = 1n << 2n;

/** What the header says. */
export interface Qcow2Header {
  readonly version: 2 | 3;
  /** Virtual disk size, bytes. */
  readonly virtualSize: number;
  readonly clusterBits: number;
}

/** Outcome of {@link inspectQcow2}: the header, or why the data is not an acceptable qcow2 image. */
export type Qcow2Inspection = { readonly ok: true; readonly header: Qcow2Header } | { readonly ok: false; readonly reason: string };

/** True when `head` starts with the qcow2 magic (`QFI\xfb`). */
export function hasQcow2Magic(head: Uint8Array): boolean {
  return head.length >= 4 && Buffer.from(head.buffer, head.byteOffset, 4).readUInt32BE(0) === MAGIC;
}

/**
 * Inspect the first bytes of an image that claims to be qcow2.
 * @param head the first bytes of the data: at least {@link QCOW2_HEADER_BYTES}, or all of it
 *   when the data is shorter
 * @returns the header, or a reason the data is refused (not qcow2, truncated, unsupported
 *   version, backing file, external data file, implausible fields)
 */
export function inspectQcow2(head: Uint8Array): Qcow2Inspection {
  const b = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  if (!hasQcow2Magic(b)) return { ok: false, reason: 'the data is not in qcow2 format (no qcow2 magic)' };
  if (b.length < V2_HEADER_BYTES) return { ok: false, reason: 'the qcow2 header is truncated' };
  const version = b.readUInt32BE(4);
  if (version !== 2 && version !== 3) return { ok: false, reason: `qcow2 version ${version} is not supported` };
  if (b.readBigUInt64BE(8) !== 0n || b.readUInt32BE(16) !== 0)
    return { ok: false, reason: 'qcow2 images with a backing file are not allowed' };
  const clusterBits = b.readUInt32BE(20);
  if (clusterBits < 9 || clusterBits > 21) return { ok: false, reason: `the qcow2 cluster size (2^${clusterBits}) is invalid` };
  const size = b.readBigUInt64BE(24);
  if (size > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, reason: 'the qcow2 virtual size is implausibly large' };
  if (version === 3) {
    if (b.length < QCOW2_HEADER_BYTES) return { ok: false, reason: 'the qcow2 header is truncated' };
    if ((b.readBigUInt64BE(72) & EXTERNAL_DATA_FILE_BIT) !== 0n)
      return { ok: false, reason: 'qcow2 images with an external data file are not allowed' };
    if (b.readUInt32BE(100) < QCOW2_HEADER_BYTES) return { ok: false, reason: 'the qcow2 header length is invalid' };
  }
  return { ok: true, header: { version, virtualSize: Number(size), clusterBits } };
}
