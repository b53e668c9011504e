/**
 * The deploy agent's config drives (src/agent/configdrive.ts, configdrive-partition.ts): the
 * JSON form made into a `config-2` ISO by genisoimage and read back with isoinfo and the lab's
 * disk reader, (gzipped) base64 ISOs, refused garbage, and where the ISO goes on real disk
 * files partitioned by sfdisk — a new GPT/MBR partition, the end of a disk without a table, or
 * an existing config-2 partition.
 */
import fs from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CONFIGDRIVE, configDriveFiles, configDriveImage } from '../../../src/agent/configdrive.ts';
import { writeConfigDrive } from '../../../src/agent/configdrive-partition.ts';
import { AgentCommandError } from '../../../src/agent/errors.ts';
import { isoVolumeIdAt, readPartitionTable } from '../../../src/agent/partition-table.ts';
import { inspectDisk } from '../../../src/lab/disk-report.ts';
import {
  LINUX_FS,
  MIB,
  isoFile,
  isZero,
  makeDisk,
  makeIso,
  partition,
  quietConsole,
  readAt,
  sfdiskJson,
  sfdiskVerify,
  startHttp,
  tempDir,
  type TestHttp,
} from './support.ts';

const NODE = { uuid: '1be26c0b-03f2-4d2e-ae87-c02d7f33c123', name: 'node-7' };

/** The AgentCommandError a promise rejects with. */
async function refusal(p: Promise<unknown>): Promise<AgentCommandError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentCommandError);
  return err as AgentCommandError;
}

describe('config drive images', () => {
  const t = tempDir('cd');
  let iso: Buffer;
  let server: TestHttp;

  beforeAll(async () => {
    iso = makeIso(t.dir, { 'openstack/latest/meta_data.json': JSON.stringify({ hostname: 'from-iso' }) });
    server = await startHttp((req, res) => {
      if (req.url === '/cd.gz.b64') return res.writeHead(200).end(`${gzipSync(iso).toString('base64')}\n`);
      return res.writeHead(404).end();
    });
  });
  afterAll(async () => {
    await server.close();
    t.rm();
  });

  it('builds a config-2 ISO from the JSON form whose meta_data, user_data, network_data and vendor_data read back', async () => {
    const cd = {
      meta_data: { hostname: 'web1', public_keys: { mykey: 'ssh-ed25519 AAAA me@host' } },
      user_data: '#cloud-config\npackages: [htop]\n',
      network_data: { links: [{ id: 'eth0', type: 'phy' }], networks: [], services: [] },
      vendor_data: { colour: 'blue' },
    };
    const image = await configDriveImage(cd, NODE);
    const file = t.file('json.iso');
    fs.writeFileSync(file, image);
    expect(await isoVolumeIdAt(file, 0)).toBe('config-2');
    for (const version of ['latest', '2012-08-10']) {
      const md = JSON.parse(isoFile(file, `/openstack/${version}/meta_data.json`));
      // Ironic fills uuid and name from the node; a given hostname is kept.
      expect(md).toEqual({ hostname: 'web1', public_keys: { mykey: 'ssh-ed25519 AAAA me@host' }, uuid: NODE.uuid, name: NODE.name });
      expect(isoFile(file, `/openstack/${version}/user_data`)).toBe(cd.user_data);
      expect(JSON.parse(isoFile(file, `/openstack/${version}/network_data.json`))).toEqual(cd.network_data);
      expect(JSON.parse(isoFile(file, `/openstack/${version}/vendor_data.json`))).toEqual(cd.vendor_data);
    }
    // The lab's disk reader sees the same drive on a disk without a partition table.
    const disk = makeDisk(t.file('json-disk.img'), 8 * MIB, [[4 * MIB, image]]);
    const report = await inspectDisk(disk);
    expect(report.metaData).toMatchObject({ hostname: 'web1', uuid: NODE.uuid });
    expect(report.userDataBytes).toBe(cd.user_data.length);
  });

  it('fills hostname from the node name, keeps a given uuid, and serialises object user_data as JSON', () => {
    const files = configDriveFiles({ meta_data: { uuid: 'given' }, user_data: { runcmd: ['true'] } }, NODE);
    expect(JSON.parse(files.get('meta_data.json')!)).toEqual({ uuid: 'given', name: NODE.name, hostname: NODE.name });
    expect(files.get('user_data')).toBe('{"runcmd":["true"]}');
    expect(files.has('network_data.json')).toBe(false);
  });

  it('accepts the JSON form without meta_data, as Ironic does (uuid and name from the node)', async () => {
    const files = configDriveFiles({ user_data: '#!/bin/sh\n' }, NODE);
    expect(JSON.parse(files.get('meta_data.json')!)).toEqual({ uuid: NODE.uuid, name: NODE.name, hostname: NODE.name });
    const image = await configDriveImage({ user_data: '#!/bin/sh\n' }, { uuid: NODE.uuid });
    expect(image.subarray(32_769, 32_774).toString('latin1')).toBe('CD001');
  });

  it('refuses invalid JSON forms naming the problem', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ meta_data: {}, extra: 1 }, /unknown keys: extra/],
      [{ meta_data: 'x' }, /meta_data must be an object/],
      [{ meta_data: [] }, /meta_data must be an object/],
      [{ meta_data: { hostname: 5 } }, /meta_data\.hostname must be a string/],
      [{ meta_data: { public_keys: ['k'] } }, /public_keys must be an object/],
      [{ meta_data: { public_keys: { k: 1 } } }, /public_keys must be an object/],
      [{ meta_data: {}, user_data: 42 }, /user_data must be a string, an object or a list/],
      [{ meta_data: {}, network_data: [] }, /network_data must be an object/],
      [{ meta_data: {}, vendor_data: 'x' }, /vendor_data must be an object/],
    ];
    for (const [cd, message] of cases) {
      const err = await refusal(configDriveImage(cd, NODE));
      expect(err.type).toBe('InvalidCommandParamsError');
      expect(err.details).toMatch(message);
    }
  });

  it('takes a gzipped base64 ISO, a plain base64 ISO (line-wrapped too) and a URL of one', async () => {
    expect((await configDriveImage(gzipSync(iso).toString('base64'), NODE)).equals(iso)).toBe(true);
    expect((await configDriveImage(iso.toString('base64'), NODE)).equals(iso)).toBe(true);
    const wrapped = gzipSync(iso)
      .toString('base64')
      .replace(/(.{76})/g, '$1\n');
    expect((await configDriveImage(wrapped, NODE)).equals(iso)).toBe(true);
    expect((await configDriveImage(`${server.url}/cd.gz.b64`, NODE)).equals(iso)).toBe(true);
    const gone = await refusal(configDriveImage(`${server.url}/missing?sig=s3cret`, NODE));
    expect(gone.type).toBe('InstanceDeployFailure');
    expect(gone.details).toMatch(/config drive at http:\/\/127\.0\.0\.1:\d+\/missing could not be fetched: HTTP 404/);
    expect(gone.message).not.toContain('s3cret');
  });

  it('refuses garbage: not base64, not an ISO, a broken gzip stream, a gzip bomb, and other types', async () => {
    const notIso = Buffer.alloc(64 * 1024, 1);
    const cases: Array<[unknown, RegExp]> = [
      ['this is not base64!', /neither JSON nor base64/],
      [notIso.toString('base64'), /not an ISO9660 image/],
      [gzipSync(notIso).toString('base64'), /not an ISO9660 image/],
      [Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6]).toString('base64'), /not a valid gzip stream/],
      [
        gzipSync(Buffer.alloc(MAX_CONFIGDRIVE + MIB)).toString('base64'),
        new RegExp(`larger than ${MAX_CONFIGDRIVE} bytes once decompressed`),
      ],
      ['', /must be a JSON object or a \(gzipped\) base64 ISO9660 image/],
      [42, /must be a JSON object or a \(gzipped\) base64 ISO9660 image/],
      [['a'], /must be a JSON object or a \(gzipped\) base64 ISO9660 image/],
    ];
    for (const [cd, message] of cases) {
      const err = await refusal(configDriveImage(cd, NODE));
      expect(err.type).toBe('InvalidCommandParamsError');
      expect(err.details).toMatch(message);
    }
  });
});

describe('config drive placement on the disk', () => {
  const t = tempDir('cdpart');
  let iso: Buffer;
  let image: Buffer;

  beforeAll(async () => {
    iso = await configDriveImage({ meta_data: { hostname: 'h1' } }, NODE);
    // An 8 MiB GPT image with one partition: its backup header lies at 8 MiB, inside a larger disk.
    const img = makeDisk(t.file('gpt-image.raw'), 8 * MIB);
    partition(img, `label: gpt\nstart=2048, size=12288, type=${LINUX_FS}, name="root"\n`);
    image = fs.readFileSync(img);
  });
  afterAll(() => t.rm());

  it('GPT: adds a 64 MiB config-2 partition at the end after moving the backup header to the disk end', async () => {
    const disk = makeDisk(t.file('gpt.img'), 128 * MIB, [[0, image]]);
    const { out } = quietConsole();
    const placed = await writeConfigDrive(disk, iso, image.length, out);
    expect(placed).toEqual({ method: 'new-partition', partition: 2, offset: 63 * MIB, size: 64 * MIB });
    const table = sfdiskJson(disk);
    expect(table.label).toBe('gpt');
    expect(table.lastlba).toBe(128 * 2048 - 34);
    expect(table.partitions).toHaveLength(2);
    expect(table.partitions[0]).toMatchObject({ start: 2048, size: 12288, name: 'root' });
    expect(table.partitions[1]).toMatchObject({ start: 63 * 2048, size: 64 * 2048, name: 'config-2', type: LINUX_FS });
    expect(sfdiskVerify(disk)).toMatch(/No errors detected/);
    expect(readAt(disk, 63 * MIB, iso.length).equals(iso)).toBe(true);
    const report = await inspectDisk(disk);
    expect(report.table).toBe('gpt');
    expect(report.metaData).toMatchObject({ hostname: 'h1', uuid: NODE.uuid });
  });

  it('GPT with less than 64 MiB free: the partition is the ISO size rounded up to 1 MiB', async () => {
    const disk = makeDisk(t.file('gpt-small.img'), 12 * MIB, [[0, image]]);
    const { out } = quietConsole();
    const placed = await writeConfigDrive(disk, iso, image.length, out);
    const size = Math.ceil(iso.length / MIB) * MIB;
    expect(placed.method).toBe('new-partition');
    expect(placed.size).toBe(size);
    expect(placed.offset).toBe(Math.floor((12 * MIB - 34 * 512 - size) / MIB) * MIB);
    expect(placed.offset).toBeGreaterThanOrEqual(8 * MIB);
    expect(sfdiskJson(disk).partitions[1]).toMatchObject({ name: 'config-2', size: size / 512 });
  });

  it('reuses an existing config-2 partition: a second write replaces the drive in place', async () => {
    const disk = makeDisk(t.file('gpt-again.img'), 128 * MIB, [[0, image]]);
    const { out } = quietConsole();
    const first = await writeConfigDrive(disk, iso, image.length, out);
    const iso2 = await configDriveImage({ meta_data: { hostname: 'h2' } }, NODE);
    const second = await writeConfigDrive(disk, iso2, image.length, out);
    expect(second).toEqual({ ...first, method: 'existing-partition' });
    expect(sfdiskJson(disk).partitions).toHaveLength(2);
    expect((await inspectDisk(disk)).metaData?.hostname).toBe('h2');
  });

  it('MBR: adds a type 83 partition; an unnamed partition holding a config-2 ISO is found and reused', async () => {
    const disk = makeDisk(t.file('mbr.img'), 96 * MIB);
    partition(disk, 'label: dos\nlabel-id: 0x0badcafe\nstart=2048, size=12288, type=83\n');
    const { out } = quietConsole();
    const placed = await writeConfigDrive(disk, iso, 8 * MIB, out);
    expect(placed).toEqual({ method: 'new-partition', partition: 2, offset: 32 * MIB, size: 64 * MIB });
    const table = sfdiskJson(disk);
    expect(table.label).toBe('dos');
    expect(table.partitions[1]).toMatchObject({ start: 32 * 2048, size: 64 * 2048, type: '83' });
    expect((await inspectDisk(disk)).metaData?.hostname).toBe('h1');
    const again = await writeConfigDrive(disk, iso, 8 * MIB, out);
    expect(again.method).toBe('existing-partition');
    expect(again.partition).toBe(2);
  });

  it('MBR with four primary partitions is refused, the disk unchanged', async () => {
    const disk = makeDisk(t.file('mbr4.img'), 96 * MIB);
    partition(
      disk,
      'label: dos\nstart=2048, size=2048, type=83\nstart=4096, size=2048, type=83\nstart=6144, size=2048, type=83\nstart=8192, size=2048, type=83\n',
    );
    const before = readAt(disk, 0, MIB);
    const { out } = quietConsole();
    const err = await refusal(writeConfigDrive(disk, iso, 8 * MIB, out));
    expect(err.type).toBe('InstanceDeployFailure');
    expect(err.details).toMatch(/already has 4 primary partitions/);
    expect(readAt(disk, 0, MIB).equals(before)).toBe(true);
    expect(isZero(readAt(disk, 95 * MIB, MIB))).toBe(true);
  });

  it('a partition table without free space at the end is refused', async () => {
    const disk = makeDisk(t.file('full.img'), 16 * MIB);
    partition(disk, `label: gpt\nstart=2048, type=${LINUX_FS}\n`);
    const { out } = quietConsole();
    const err = await refusal(writeConfigDrive(disk, iso, 16 * MIB, out));
    expect(err.details).toMatch(/no free space at the end of the 16777216-byte disk/);
  });

  it('a disk without a partition table gets the ISO in its last MiB-aligned bytes, unless that overlaps the image', async () => {
    const disk = makeDisk(t.file('bare.img'), 20 * MIB, [[0, Buffer.alloc(MIB, 0xee)]]);
    const { out } = quietConsole();
    const placed = await writeConfigDrive(disk, iso, MIB, out);
    const offset = 20 * MIB - Math.ceil(iso.length / MIB) * MIB;
    expect(placed).toEqual({ method: 'end-of-disk', partition: null, offset, size: iso.length });
    expect(readAt(disk, offset, iso.length).equals(iso)).toBe(true);
    expect((await readPartitionTable(disk)).type).toBeNull();
    const report = await inspectDisk(disk);
    expect(report.table).toBe('none');
    expect(report.metaData?.hostname).toBe('h1');
    const err = await refusal(writeConfigDrive(disk, iso, 20 * MIB - MIB / 2, out));
    expect(err.details).toMatch(/no room for a \d+-byte config drive after the image/);
  });
});
