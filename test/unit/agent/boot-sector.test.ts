/**
 * The deploy agent's check that a written whole-disk image can boot (src/agent/boot-sector.ts,
 * and its use by the image write, src/agent/image.ts, and the `write_image` deploy step,
 * src/agent/extensions.ts): disks partitioned by the real sfdisk (MBR, and GPT with its
 * protective MBR) carry the boot signature; a blob does not, and its write fails as IPA reports
 * a failed command — `command_status` FAILED with an `ImageWriteError` `command_error` — with the
 * disk's head zeroed and no config drive added. Without the check (a lab node's disk file) the
 * blob is written as it comes.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BOOT_SIGNATURE_OFFSET, checkBootSector, hasBootSignature } from '../../../src/agent/boot-sector.ts';
import { CommandRunner } from '../../../src/agent/commands.ts';
import { AgentCommandError } from '../../../src/agent/errors.ts';
import { buildHandlers } from '../../../src/agent/extensions.ts';
import { writeImage } from '../../../src/agent/image.ts';
import { readPartitionTable } from '../../../src/agent/partition-table.ts';
import {
  LINUX_FS,
  MIB,
  convertImage,
  hashOf,
  isZero,
  makeDisk,
  partition,
  quietConsole,
  readAt,
  startHttp,
  tempDir,
  type TestHttp,
} from './support.ts';

const DISK = 32 * MIB;
const CANNOT_BOOT = (disk: string) => `the image written to ${disk} has no partition table or boot sector: it cannot boot`;

describe('the boot sector check of a written image', () => {
  const t = tempDir('bootsector');
  const served = new Map<string, Buffer>();
  let server: TestHttp;
  let disk: string;
  /** 4 MiB of random bytes without the boot signature: a blob no firmware boots. */
  let blob: Buffer;
  /** A 4 MiB GPT disk image (sfdisk): its protective MBR carries the boot signature. */
  let gpt: Buffer;
  /** A 4 MiB MBR disk image (sfdisk). */
  let mbr: Buffer;

  /** A raw disk image of `size` bytes partitioned by sfdisk with `script`. */
  function partitioned(name: string, script: string): Buffer {
    const file = makeDisk(t.file(name), 4 * MIB);
    partition(file, script);
    return fs.readFileSync(file);
  }

  beforeAll(async () => {
    blob = randomBytes(4 * MIB);
    blob[BOOT_SIGNATURE_OFFSET] = 0;
    gpt = partitioned('gpt.raw', `label: gpt\nstart=2048, size=4096, type=${LINUX_FS}\n`);
    mbr = partitioned('mbr.raw', 'label: dos\nstart=2048, size=4096, type=83\n');
    server = await startHttp((req, res) => {
      const data = served.get(req.url ?? '');
      if (data === undefined) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-length': String(data.length) }).end(data);
    });
  });
  afterAll(async () => {
    await server.close();
    t.rm();
  });
  beforeEach(() => {
    // The disk holds an old system: its head is not zero, so a zeroed head shows the clean-up.
    disk = makeDisk(t.file('disk.img'), DISK, [[0, Buffer.alloc(MIB, 0xa5)]]);
  });

  /** Serve `data` at a fresh path; returns its `image_info`. */
  function image(data: Buffer, format: 'raw' | 'qcow2' = 'raw'): Record<string, unknown> {
    const path = `/img-${randomBytes(4).toString('hex')}`;
    served.set(path, data);
    return { id: 'img', urls: [`${server.url}${path}`], disk_format: format, os_hash_algo: 'sha256', os_hash_value: hashOf(data) };
  }

  it('finds the boot signature of MBR and GPT disks made by sfdisk, and none on zeros, a blob or a misplaced 55 AA', async () => {
    const check = async (name: string, data: Buffer) => hasBootSignature(makeDisk(t.file(name), DISK, [[0, data]]));
    expect(await check('mbr.img', mbr)).toBe(true);
    expect(await check('gpt.img', gpt)).toBe(true);
    expect((await readPartitionTable(t.file('gpt.img'))).type).toBe('gpt');
    expect(await check('zero.img', Buffer.alloc(MIB))).toBe(false);
    expect(await check('blob.img', blob)).toBe(false);
    expect(await check('shifted.img', Buffer.from([0, 0x55, 0xaa]))).toBe(false);
    // A disk shorter than one sector has no boot sector either.
    expect(await hasBootSignature(makeDisk(t.file('tiny.img'), 100))).toBe(false);
    const err = await checkBootSector(t.file('zero.img')).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AgentCommandError);
    expect((err as AgentCommandError).serialize()).toEqual({
      type: 'ImageWriteError',
      code: 500,
      message: 'Error writing image to device',
      details: CANNOT_BOOT(t.file('zero.img')),
    });
  });

  it('with the check, writing a blob fails (ImageWriteError) and zeroes the disk head; a GPT image, raw or qcow2, is written', async () => {
    const { out, lines } = quietConsole();
    const err = await writeImage(image(blob), disk, out, undefined, undefined, { requireBootSector: true }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AgentCommandError);
    expect((err as AgentCommandError).type).toBe('ImageWriteError');
    expect((err as AgentCommandError).details).toBe(CANNOT_BOOT(disk));
    expect(isZero(readAt(disk, 0, MIB))).toBe(true);
    expect(lines.join('\n')).toContain('image write failed, zeroed the first MiB of the disk');

    const raw = await writeImage(image(gpt), disk, out, undefined, undefined, { requireBootSector: true });
    expect(raw.bytes_written).toBe(gpt.length);
    expect(readAt(disk, 0, gpt.length).equals(gpt)).toBe(true);

    makeDisk(disk, DISK);
    const qcow2 = await writeImage(image(convertImage(gpt, 'qcow2', t.dir), 'qcow2'), disk, out, undefined, undefined, {
      requireBootSector: true,
    });
    expect(qcow2.disk_format).toBe('qcow2');
    expect(await hasBootSignature(disk)).toBe(true);
    // A qcow2 of a blob is converted, then refused the same way.
    const converted = await writeImage(image(convertImage(blob, 'qcow2', t.dir), 'qcow2'), disk, out, undefined, undefined, {
      requireBootSector: true,
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((converted as AgentCommandError).details).toBe(CANNOT_BOOT(disk));
    expect(isZero(readAt(disk, 0, MIB))).toBe(true);
  });

  it('without the check (a lab disk file), the blob is written as it comes', async () => {
    const { out } = quietConsole();
    const result = await writeImage(image(blob), disk, out);
    expect(result.bytes_written).toBe(blob.length);
    expect(readAt(disk, 0, blob.length).equals(blob)).toBe(true);
  });

  it('the write_image deploy step of a blob ends FAILED with the ImageWriteError, and no config drive is added', async () => {
    const { out } = quietConsole();
    const runner = new CommandRunner(buildHandlers({ diskPath: disk, requireBootSector: true, out, node: () => null, shutdown: () => {} }));
    const deploy = (imageInfo: Record<string, unknown>) => {
      const started = runner.start('deploy.execute_deploy_step', {
        step: { interface: 'deploy', step: 'write_image', args: { image_info: imageInfo, configdrive: { meta_data: { hostname: 'h' } } } },
        node: { uuid: '1be26c0b-03f2-4d2e-ae87-c02d7f33c123' },
      });
      return runner.wait(started.id, 60_000).then(() => runner.get(started.id)!);
    };
    const failed = await deploy(image(blob));
    expect(failed.command_status).toBe('FAILED');
    expect(failed.command_result).not.toHaveProperty('deploy_result');
    expect(failed.command_error).toEqual({
      type: 'ImageWriteError',
      code: 500,
      message: 'Error writing image to device',
      details: CANNOT_BOOT(disk),
    });
    expect(isZero(readAt(disk, 0, MIB))).toBe(true);
    // The config drive goes after the check: nothing was written at the disk's end.
    expect(isZero(readAt(disk, DISK - 2 * MIB, 2 * MIB))).toBe(true);

    const ok = await deploy(image(gpt));
    expect(ok.command_status, JSON.stringify(ok.command_error)).toBe('SUCCEEDED');
    expect(ok.command_result).toMatchObject({ deploy_result: { disk_format: 'raw', disk_flushed: true } });
    expect((await readPartitionTable(disk)).partitions.map((p) => p.name)).toContain('config-2');
  });
});
