/**
 * The files of a QEMU lab system, under `<dataDir>/lab/<id>/`:
 *
 * | file             | what                                                                   |
 * |------------------|------------------------------------------------------------------------|
 * | `disk.qcow2`     | the disk (virtio), made with `qemu-img create` on first use, kept across restarts |
 * | `OVMF_VARS.fd`   | the UEFI variable store, a copy of OVMF_VARS_4M.fd made on the first UEFI boot |
 * | `media/`         | the ISO in the virtual CD drive (./media.ts)                           |
 * | `console.log`    | the serial console (src/lab/serial.ts)                                 |
 * | `qmp.sock`       | QMP (./qmp.ts); in /tmp when the path is too long for a unix socket    |
 * | `qemu.pid`       | QEMU's pidfile (./process.ts)                                          |
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { run } from '../network.ts';

/** The files of a node (paths; see the module documentation). */
export interface QemuNodeFiles {
  readonly dir: string;
  readonly disk: string;
  readonly vars: string;
  readonly media: string;
  readonly qmp: string;
  readonly pidfile: string;
}

/** The files of system `id` under `<dataDir>/lab/<id>/`; the QMP socket moves to /tmp when the path is too long for a unix socket. */
export function nodeFiles(dataDir: string, id: string): QemuNodeFiles {
  const dir = path.join(dataDir, 'lab', id);
  const qmp = path.join(dir, 'qmp.sock');
  return {
    dir,
    disk: path.join(dir, 'disk.qcow2'),
    vars: path.join(dir, 'OVMF_VARS.fd'),
    media: path.join(dir, 'media'),
    // sun_path holds 108 bytes.
    qmp:
      Buffer.byteLength(qmp) < 100
        ? qmp
        : path.join('/tmp', `esi-qmp-${crypto.createHash('sha256').update(dir).digest('hex').slice(0, 24)}.sock`),
    pidfile: path.join(dir, 'qemu.pid'),
  };
}

/**
 * Create the qcow2 disk `file` of `diskGiB` GiB on first use; grow it when it is smaller (never shrink).
 * @throws Error with qemu-img's message
 */
export async function prepareDisk(file: string, diskGiB: number): Promise<void> {
  const size = diskGiB * 1024 ** 3;
  if (!fs.existsSync(file)) {
    await run('qemu-img', ['create', '-q', '-f', 'qcow2', file, String(size)]);
    return;
  }
  const info = JSON.parse(await run('qemu-img', ['info', '-U', '--output=json', file])) as { 'virtual-size'?: number };
  if ((info['virtual-size'] ?? size) < size) await run('qemu-img', ['resize', '-q', file, String(size)]);
}
