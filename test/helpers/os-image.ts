/**
 * Test disk images that look like an operating system to the lab: a GPT disk (sfdisk, Debian
 * fdisk) whose first partition holds an ext4 file system (mkfs.ext4, Debian e2fsprogs) with a
 * volume label — the "OS name" the lab prints when a node boots the disk
 * (src/lab/disk-report.ts). Optionally converted to qcow2 with qemu-img.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const LINUX_FS = '0FC63DAF-8483-4772-8E79-3D69D8477DE4';

/**
 * Build an image file.
 * @param label the ext4 volume label (≤ 16 bytes)
 * @param sizeMiB image size, MiB (≥ 4)
 * @param format `raw` or `qcow2`
 * @returns the image bytes
 */
export function osImage(label: string, sizeMiB = 8, format: 'raw' | 'qcow2' = 'raw'): Buffer {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-osimg-'));
  try {
    const raw = path.join(dir, 'disk.raw');
    fs.writeFileSync(raw, '');
    fs.truncateSync(raw, sizeMiB * 1024 * 1024);
    const sectors = (sizeMiB - 2) * 2048;
    execFileSync('sfdisk', ['-q', raw], { input: `label: gpt\nstart=2048, size=${sectors}, type=${LINUX_FS}, name="root"\n` });
    execFileSync('mkfs.ext4', ['-q', '-F', '-L', label, '-E', 'offset=1048576', raw, `${(sizeMiB - 2) * 1024}k`]);
    if (format === 'raw') return fs.readFileSync(raw);
    const q = path.join(dir, 'disk.qcow2');
    execFileSync('qemu-img', ['convert', '-q', '-f', 'raw', '-O', 'qcow2', raw, q]);
    return fs.readFileSync(q);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
