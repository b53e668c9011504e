/**
 * Test fixtures: qcow2 headers built field by field after QEMU's `docs/interop/qcow2.txt`
 * (big-endian), for the header checks of src/domain/images/qcow2.ts.
 */

/** Options of {@link qcow2Header}. */
export interface Qcow2HeaderOptions {
  readonly version?: number;
  /** Virtual size, bytes (default 1 GiB). */
  readonly size?: number;
  readonly backing?: boolean;
  readonly externalData?: boolean;
  readonly clusterBits?: number;
}

/** A qcow2 header (104 bytes for version 3, 72 for version 2) with the given fields. */
export function qcow2Header(o: Qcow2HeaderOptions = {}): Buffer {
  const version = o.version ?? 3;
  const b = Buffer.alloc(version >= 3 ? 104 : 72);
  b.writeUInt32BE(0x514649fb, 0);
  b.writeUInt32BE(version, 4);
  if (o.backing) {
    b.writeBigUInt64BE(BigInt(version >= 3 ? 104 : 72), 8);
    b.writeUInt32BE(12, 16);
  }
  b.writeUInt32BE(o.clusterBits ?? 16, 20);
  b.writeBigUInt64BE(BigInt(o.size ?? 1024 ** 3), 24);
  if (version >= 3) {
    b.writeBigUInt64BE(o.externalData ? 1n << 2n : 0n, 72);
    b.writeUInt32BE(4, 96);
    b.writeUInt32BE(104, 100);
  }
  return b;
}
