/**
 * The deploy agent on real disk files partitioned by sfdisk: partition table parsing
 * (src/agent/partition-table.ts: GPT names and GUIDs, MBR ids), the clean steps
 * (src/agent/erase.ts: what `erase_devices_metadata` zeroes and what it leaves, `erase_devices`
 * zeroing everything while a sparse file stays sparse), and the capture (src/agent/capture.ts:
 * the extent without the config drive, and the upload to a real HTTP server).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureExtent, captureImage } from '../../../src/agent/capture.ts';
import type { CommandProgress } from '../../../src/agent/commands.ts';
import { configDriveImage } from '../../../src/agent/configdrive.ts';
import { writeConfigDrive } from '../../../src/agent/configdrive-partition.ts';
import { eraseDevices, eraseDevicesMetadata } from '../../../src/agent/erase.ts';
import { AgentCommandError } from '../../../src/agent/errors.ts';
import { buildHandlers } from '../../../src/agent/extensions.ts';
import { readPartitionTable } from '../../../src/agent/partition-table.ts';
import {
  LINUX_FS,
  MIB,
  allocated,
  isZero,
  makeDisk,
  partition,
  quietConsole,
  readAt,
  sfdiskJson,
  startHttp,
  tempDir,
  type TestHttp,
} from './support.ts';

const EFI = 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B';
const DISK_GUID = '11111111-2222-4333-8444-555555555555';
const ROOT_GUID = 'AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE';
const ESP_GUID = '0FEDCBA9-8765-4321-8FED-CBA987654321';

/** The AgentCommandError a promise rejects with. */
async function refusal(p: Promise<unknown>): Promise<AgentCommandError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentCommandError);
  return err as AgentCommandError;
}

const mark = (n: number, byte = 0xaa) => Buffer.alloc(n, byte);

describe('partition tables', () => {
  const t = tempDir('pt');
  afterAll(() => t.rm());

  /** A 16 MiB GPT disk with an EFI system partition and a root partition (each test makes its own). */
  function gptDisk(name: string): string {
    const disk = makeDisk(t.file(name), 16 * MIB);
    partition(
      disk,
      [
        'label: gpt',
        `label-id: ${DISK_GUID}`,
        `start=2048, size=2048, type=${EFI}, uuid=${ESP_GUID}, name="EFI system"`,
        `start=8192, size=4096, type=${LINUX_FS}, uuid=${ROOT_GUID}, name="root fs"`,
        '',
      ].join('\n'),
    );
    return disk;
  }

  /** A 32 MiB MBR disk with one primary partition and an extended container holding a logical one. */
  function mbrDisk(name: string): string {
    const disk = makeDisk(t.file(name), 32 * MIB);
    partition(
      disk,
      'label: dos\nlabel-id: 0x0badcafe\nstart=2048, size=4096, type=83\nstart=8192, size=16384, type=5\nstart=10240, size=2048, type=83\n',
    );
    return disk;
  }

  it('reads GPT partitions with their numbers, byte ranges, unique GUIDs and names, and the disk GUID', async () => {
    const disk = gptDisk('gpt.img');
    const table = await readPartitionTable(disk);
    expect(table).toEqual({
      type: 'gpt',
      diskId: DISK_GUID.toLowerCase(),
      partitions: [
        { number: 1, start: MIB, size: MIB, uuid: ESP_GUID.toLowerCase(), name: 'EFI system' },
        { number: 2, start: 4 * MIB, size: 2 * MIB, uuid: ROOT_GUID.toLowerCase(), name: 'root fs' },
      ],
    });
    // The same as sfdisk sees it.
    const sf = sfdiskJson(disk);
    expect(sf.partitions.map((p) => [p.start * 512, p.size * 512, p.uuid?.toLowerCase(), p.name])).toEqual(
      table.partitions.map((p) => [p.start, p.size, p.uuid, p.name]),
    );
  });

  it('reads MBR primaries with blkid-style ids, skipping empty slots and the extended container', async () => {
    const disk = mbrDisk('mbr.img');
    const table = await readPartitionTable(disk);
    expect(table.type).toBe('dos');
    expect(table.diskId).toBe('0badcafe');
    expect(table.partitions).toEqual([{ number: 1, start: MIB, size: 2 * MIB, uuid: '0badcafe-01', name: null }]);
    // A gap in the slots keeps the numbers sfdisk shows.
    const gap = makeDisk(t.file('gap.img'), 32 * MIB);
    partition(gap, 'label: dos\nlabel-id: 0x00c0ffee\n1: start=2048, size=2048, type=83\n3: start=8192, size=2048, type=c\n');
    expect((await readPartitionTable(gap)).partitions.map((p) => [p.number, p.uuid])).toEqual([
      [1, '00c0ffee-01'],
      [3, '00c0ffee-03'],
    ]);
  });

  it('a blank disk, or one whose boot signature is missing, has no table', async () => {
    expect(await readPartitionTable(makeDisk(t.file('blank.img'), MIB))).toEqual({ type: null, diskId: null, partitions: [] });
    expect((await readPartitionTable(makeDisk(t.file('junk.img'), MIB, [[0, mark(510)]]))).type).toBeNull();
  });

  it('standby.get_partition_uuids answers the root (disk) id and the partitions', async () => {
    const { out } = quietConsole();
    const handlers = buildHandlers({ diskPath: gptDisk('uuids-gpt.img'), out, node: () => null, shutdown: () => undefined });
    const result = await handlers.get('standby.get_partition_uuids')!({}, () => undefined);
    expect(result).toEqual({
      'root uuid': DISK_GUID.toLowerCase(),
      'efi system partition uuid': null,
      'PReP Boot partition uuid': null,
      partitions: { 1: ESP_GUID.toLowerCase(), 2: ROOT_GUID.toLowerCase() },
    });
    const mbr = buildHandlers({ diskPath: mbrDisk('uuids-mbr.img'), out, node: () => null, shutdown: () => undefined });
    expect((await mbr.get('standby.get_partition_uuids')!({}, () => undefined))?.['root uuid']).toBe('0x0badcafe');
  });
});

describe('clean steps', () => {
  const t = tempDir('erase');
  afterAll(() => t.rm());

  it("erase_devices_metadata zeroes the table, both GPT headers and each partition's first and last MiB — and nothing else", async () => {
    const disk = makeDisk(t.file('meta.img'), 64 * MIB);
    partition(
      disk,
      `label: gpt\nstart=2048, size=40960, type=${LINUX_FS}, name="root"\nstart=81920, size=32768, type=${LINUX_FS}, name="data"\n`,
    );
    const fd = fs.openSync(disk, 'r+');
    const writes: Array<[number, boolean]> = [
      [MIB + 1024, true], // root: superblock
      [10 * MIB, false], // root: the middle
      [21 * MIB - 4096, true], // root: its last MiB
      [40 * MIB + 32 * 1024, true], // data: its start
      [48 * MIB, false], // data: the middle
      [56 * MIB - 512, true], // data: its last sector
      [60 * MIB, false], // free space
    ];
    for (const [off] of writes) fs.writeSync(fd, mark(512), 0, 512, off);
    fs.closeSync(fd);
    expect(readAt(disk, 64 * MIB - 512, 8).toString('latin1')).toBe('EFI PART');
    const result = await eraseDevicesMetadata(disk);
    expect(result.ranges).toBe(2 + 2 * 2);
    expect(result.bytes).toBe(6 * MIB);
    for (const [off, zeroed] of writes) expect([off, isZero(readAt(disk, off, 512))]).toEqual([off, zeroed]);
    expect(isZero(readAt(disk, 0, MIB))).toBe(true);
    expect(isZero(readAt(disk, 63 * MIB, MIB))).toBe(true);
    expect((await readPartitionTable(disk)).type).toBeNull();
    expect(() => execFileSync('sfdisk', ['-J', disk], { stdio: 'pipe' })).toThrow();
    expect(fs.statSync(disk).size).toBe(64 * MIB);
  });

  it('erase_devices_metadata finds a config-2 ISO in the last 64 MiB of a disk without a table, not one further in', async () => {
    const iso = await configDriveImage({ meta_data: { hostname: 'x' } }, {});
    const disk = makeDisk(t.file('bare.img'), 100 * MIB, [
      [0, mark(4096)],
      [20 * MIB, iso],
      [90 * MIB, iso],
    ]);
    const result = await eraseDevicesMetadata(disk);
    expect(result.ranges).toBe(3);
    expect(isZero(readAt(disk, 0, MIB))).toBe(true);
    expect(isZero(readAt(disk, 90 * MIB, iso.length))).toBe(true);
    expect(readAt(disk, 20 * MIB, iso.length).equals(iso)).toBe(true);
  });

  it('erase_devices zeroes the whole disk, rewriting only blocks that are not zero: a sparse file stays sparse', async () => {
    const size = 41 * MIB; // not a multiple of the 4 MiB block
    const disk = makeDisk(t.file('full.img'), size, [
      [0, mark(4096)],
      [17 * MIB, mark(4096)],
      [size - 100, mark(100)],
    ]);
    expect(allocated(disk)).toBeLessThan(MIB);
    const fractions: number[] = [];
    const bytes: Array<[number, number]> = [];
    const result = await eraseDevices(
      disk,
      (f) => fractions.push(f),
      (b, total) => bytes.push([b, total]),
    );
    expect(result).toEqual({ size, rewritten: 4 * MIB + 4 * MIB + MIB });
    expect(isZero(fs.readFileSync(disk))).toBe(true);
    expect(fs.statSync(disk).size).toBe(size);
    // Only the three rewritten blocks take space; the holes stay holes.
    expect(allocated(disk)).toBeLessThanOrEqual(9 * MIB + 64 * 1024);
    expect(bytes.at(-1)).toEqual([size, size]);
    expect(fractions.length).toBeGreaterThanOrEqual(9);
    expect(fractions.at(-1)).toBe(1);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
  });

  it('the clean handlers run the steps, refuse unknown ones and a clean version from another hardware manager', async () => {
    const disk = makeDisk(t.file('h.img'), 8 * MIB, [[0, mark(4096)]]);
    const { out } = quietConsole();
    const handlers = buildHandlers({ diskPath: disk, out, node: () => null, shutdown: () => undefined });
    const run = handlers.get('clean.execute_clean_step')!;
    const progress: CommandProgress[] = [];
    const res = await run(
      { step: { step: 'erase_devices', interface: 'deploy', args: { secret: 'x' } }, clean_version: { generic_hardware_manager: '1.2' } },
      (p) => progress.push(p),
    );
    expect(res).toEqual({
      clean_result: { size: 8 * MIB, rewritten: 4 * MIB },
      clean_step: { step: 'erase_devices', interface: 'deploy' },
    });
    expect(progress.at(-1)).toEqual({ phase: 'erase', bytes: 8 * MIB, total: 8 * MIB });
    const unknown = await refusal(run({ step: { step: 'burnin_cpu' } }, () => undefined));
    expect(unknown.type).toBe('HardwareManagerMethodNotFound');
    const mismatch = await refusal(
      run({ step: { step: 'erase_devices' }, clean_version: { generic_hardware_manager: '0.9' } }, () => undefined),
    );
    expect(mismatch.type).toBe('CleanVersionMismatch');
    expect((await refusal(run({ step: 'erase_devices' }, () => undefined))).type).toBe('InvalidCommandParamsError');
  });
});

describe('capture', () => {
  const t = tempDir('capture');
  const uploads: Buffer[] = [];
  let server: TestHttp;
  let gptDisk: string;
  let iso: Buffer;

  beforeAll(async () => {
    iso = await configDriveImage({ meta_data: { hostname: 'secret-host' } }, {});
    server = await startHttp((req, res, body) => {
      if (req.method !== 'PUT') return res.writeHead(405).end();
      if (req.url?.startsWith('/full'))
        return res.writeHead(413, { 'content-type': 'application/json' }).end('{"message": "the store is full"}');
      uploads.push(body);
      return res.writeHead(204).end();
    });
    // An instance disk: a root partition of 6 MiB with data, then the config drive partition.
    gptDisk = makeDisk(t.file('gpt.img'), 96 * MIB);
    partition(gptDisk, `label: gpt\nstart=2048, size=12288, type=${LINUX_FS}, name="root"\n`);
    const fd = fs.openSync(gptDisk, 'r+');
    fs.writeSync(fd, mark(MIB, 0x5a), 0, MIB, 3 * MIB);
    fs.closeSync(fd);
    const { out } = quietConsole();
    await writeConfigDrive(gptDisk, iso, 7 * MIB, out);
  });
  afterAll(async () => {
    await server.close();
    t.rm();
  });

  it("the extent ends with the instance's last partition (MiB-rounded), leaving the config drive out", async () => {
    expect(await captureExtent(gptDisk)).toBe(7 * MIB);
    // An MBR config drive partition is recognised by its ISO's volume id.
    const mbr = makeDisk(t.file('mbr.img'), 64 * MIB);
    partition(mbr, 'label: dos\nstart=2048, size=4095, type=83\nstart=40960, size=8192, type=83\n');
    fs.writeFileSync(t.file('iso.bin'), iso);
    execFileSync('dd', ['status=none', 'conv=notrunc', `if=${t.file('iso.bin')}`, `of=${mbr}`, `seek=${40960 * 512}`, 'oflag=seek_bytes']);
    expect(await captureExtent(mbr)).toBe(3 * MIB);
  });

  it('without a partition table: up to a config-2 ISO in the last 64 MiB, else the whole disk', async () => {
    const bare = makeDisk(t.file('bare.img'), 80 * MIB, [
      [0, mark(MIB)],
      [70 * MIB, iso],
    ]);
    expect(await captureExtent(bare)).toBe(70 * MIB);
    expect(await captureExtent(makeDisk(t.file('plain.img'), 80 * MIB, [[0, mark(MIB)]]))).toBe(80 * MIB);
    const onlyCd = makeDisk(t.file('only-cd.img'), 80 * MIB);
    partition(onlyCd, `label: gpt\nstart=2048, size=8192, type=${LINUX_FS}, name="config-2"\n`);
    const err = await refusal(captureExtent(onlyCd));
    expect(err.details).toMatch(/no partition besides the config drive/);
  });

  it('uploads the extent raw, or converted to qcow2 by qemu-img, with upload progress', async () => {
    const { out } = quietConsole();
    const progress: CommandProgress[] = [];
    uploads.length = 0;
    const raw = await captureImage({ upload_url: `${server.url}/up?temp_url_sig=s3cret`, disk_format: 'raw' }, gptDisk, out, (p) =>
      progress.push(p),
    );
    expect(raw).toEqual({ extent: 7 * MIB, disk_format: 'raw', bytes_uploaded: 7 * MIB });
    expect(uploads[0]!.equals(readAt(gptDisk, 0, 7 * MIB))).toBe(true);
    expect(uploads[0]!.includes(Buffer.from('secret-host'))).toBe(false);
    expect(progress.at(-1)).toEqual({ phase: 'upload', bytes: 7 * MIB, total: 7 * MIB });
    expect(server.requests.at(-1)?.headers['content-length']).toBe(String(7 * MIB));

    const q = await captureImage({ upload_url: `${server.url}/up`, disk_format: 'qcow2' }, gptDisk, out, () => undefined);
    expect(q.disk_format).toBe('qcow2');
    const qcow2 = uploads[1]!;
    expect(qcow2.subarray(0, 4).toString('latin1')).toBe('QFI\xfb');
    expect(q.bytes_uploaded).toBe(qcow2.length);
    fs.writeFileSync(t.file('up.qcow2'), qcow2);
    execFileSync('qemu-img', ['convert', '-q', '-f', 'qcow2', '-O', 'raw', t.file('up.qcow2'), t.file('back.raw')]);
    expect(fs.readFileSync(t.file('back.raw')).equals(readAt(gptDisk, 0, 7 * MIB))).toBe(true);
    expect(fs.readdirSync(t.dir).filter((f) => f.includes('.capture-'))).toEqual([]);
  });

  it('a refused upload or bad parameters fail naming the cause', async () => {
    const { out } = quietConsole();
    const full = await refusal(
      captureImage({ upload_url: `${server.url}/full?temp_url_sig=s3cret`, disk_format: 'raw' }, gptDisk, out, () => undefined),
    );
    expect(full.type).toBe('ImageUploadError');
    expect(full.details).toMatch(/PUT http:\/\/127\.0\.0\.1:\d+\/full returned HTTP 413: .*the store is full/);
    expect(full.message).not.toContain('s3cret');
    expect((await refusal(captureImage({ upload_url: 'file:///tmp/x' }, gptDisk, out, () => undefined))).details).toMatch(
      /upload_url must be an http\(s\) URL/,
    );
    expect((await refusal(captureImage({ upload_url: server.url, disk_format: 'vmdk' }, gptDisk, out, () => undefined))).details).toMatch(
      /disk_format "vmdk" is not supported/,
    );
  });
});
