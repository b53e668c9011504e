/**
 * What the lab reads from a node's disk on a disk boot (src/lab/disk-report.ts): blank disks,
 * MBR and GPT partition tables, and a `config-2` ISO (made by genisoimage, as the agent makes
 * it) at a partition's start or near the end of a disk without a partition table.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeDisk, inspectDisk } from '../../../src/lab/disk-report.ts';
import { itNeeding, TOOLS } from '../../helpers/tools.ts';

const MIB = 1024 * 1024;
/** The config drive tests need genisoimage (a failure without it, see test/helpers/tools.ts). */
const ISO_TOOLS = [TOOLS.genisoimage];

describe('lab disk report', () => {
  let dir: string;
  let iso: Buffer;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'disk-report-'));
    if (!TOOLS.genisoimage.present) return;
    const tree = path.join(dir, 'tree/openstack/latest');
    fs.mkdirSync(tree, { recursive: true });
    fs.writeFileSync(path.join(tree, 'meta_data.json'), JSON.stringify({ hostname: 'h1', uuid: 'u-1' }));
    execFileSync('genisoimage', [
      '-quiet',
      '-o',
      path.join(dir, 'cd.iso'),
      '-ldots',
      '-allow-lowercase',
      '-allow-multidot',
      '-l',
      '-J',
      '-r',
      '-V',
      'config-2',
      path.join(dir, 'tree'),
    ]);
    iso = fs.readFileSync(path.join(dir, 'cd.iso'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  function disk(name: string, size: number, writes: Array<[number, Buffer]>): string {
    const file = path.join(dir, name);
    const fd = fs.openSync(file, 'w+');
    fs.ftruncateSync(fd, size);
    for (const [off, buf] of writes) fs.writeSync(fd, buf, 0, buf.length, off);
    fs.closeSync(fd);
    return file;
  }

  it('a missing or zeroed disk is blank', async () => {
    expect((await inspectDisk(path.join(dir, 'none.img'))).blank).toBe(true);
    const r = await inspectDisk(disk('zero.img', 4 * MIB, []));
    expect(r.blank).toBe(true);
    expect(describeDisk(r)[0]).toMatch(/blank/);
  });

  itNeeding(ISO_TOOLS, 'MBR: finds the config-2 partition and its hostname', async () => {
    const mbr = Buffer.alloc(512);
    mbr.writeUInt8(0x83, 446 + 4);
    mbr.writeUInt32LE(2048, 446 + 8);
    mbr.writeUInt32LE(8192, 446 + 12);
    mbr.writeUInt16LE(0xaa55, 510);
    const r = await inspectDisk(
      disk('mbr.img', 8 * MIB, [
        [0, mbr],
        [MIB, iso],
      ]),
    );
    expect(r.table).toBe('mbr');
    expect(r.partitions).toEqual([{ start: MIB, size: 4 * MIB }]);
    expect(r.metaData).toEqual({ hostname: 'h1', uuid: 'u-1' });
    expect(describeDisk(r).join('\n')).toMatch(/config-2 hostname h1 uuid u-1/);
  });

  itNeeding(ISO_TOOLS, 'GPT: reads the partition entries', async () => {
    const pmbr = Buffer.alloc(1024);
    pmbr.writeUInt8(0xee, 446 + 4);
    pmbr.writeUInt32LE(1, 446 + 8);
    pmbr.writeUInt32LE(0xffffffff, 446 + 12);
    pmbr.writeUInt16LE(0xaa55, 510);
    pmbr.write('EFI PART', 512, 'latin1');
    pmbr.writeBigUInt64LE(2n, 512 + 72);
    pmbr.writeUInt32LE(128, 512 + 80);
    pmbr.writeUInt32LE(128, 512 + 84);
    const entry = Buffer.alloc(128);
    entry.fill(0x11, 0, 16);
    entry.writeBigUInt64LE(4096n, 32);
    entry.writeBigUInt64LE(4096n + 8191n, 40);
    const r = await inspectDisk(
      disk('gpt.img', 8 * MIB, [
        [0, pmbr],
        [1024, entry],
        [2 * MIB, iso],
      ]),
    );
    expect(r.table).toBe('gpt');
    expect(r.partitions).toEqual([{ start: 2 * MIB, size: 4 * MIB }]);
    expect(r.metaData?.hostname).toBe('h1');
  });

  itNeeding(ISO_TOOLS, 'no partition table: a config drive near the end of the disk is found', async () => {
    const head = Buffer.alloc(MIB, 0x5a);
    const r = await inspectDisk(
      disk('raw.img', 16 * MIB, [
        [0, head],
        [16 * MIB - 4 * MIB, iso],
      ]),
    );
    expect(r.table).toBe('none');
    expect(r.blank).toBe(false);
    expect(r.metaData?.hostname).toBe('h1');
  });
});
