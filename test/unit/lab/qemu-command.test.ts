/**
 * The pure parts of the lab's QEMU nodes (src/lab/qemu/): the boot order of each override, the
 * QEMU command line, the options and the hardware model a QEMU system reports, its files, the ISO
 * 9660 check, and the lab model's QEMU-backed systems (ids after the simulated ones, pending and
 * recorded boots).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bootOrder, optValue, qemuArgs, wrapCommand, type QemuLaunch } from '../../../src/lab/qemu/command.ts';
import { nodeFiles } from '../../../src/lab/qemu/files.ts';
import { isIso9660, ISO9660_MAGIC_OFFSET } from '../../../src/lab/qemu/media.ts';
import { QEMU_CPU_MODEL, qemuLabModel, qemuSettings } from '../../../src/lab/qemu/options.ts';
import { LabState } from '../../../src/lab/state.ts';

const LAUNCH: QemuLaunch = {
  binary: 'qemu-system-x86_64',
  id: 'node-3',
  accel: 'tcg',
  firmware: 'uefi',
  ovmfCode: '/usr/share/OVMF/OVMF_CODE_4M.fd',
  ovmfVars: '/d/lab/node-3/OVMF_VARS.fd',
  memoryMiB: 1024,
  vcpus: 3,
  uuid: '11111111-2222-8333-8444-555555555555',
  mac: '52:54:00:aa:bb:cc',
  smbios: { manufacturer: 'QEMU', product: 'Standard PC (Q35 + ICH9, 2009)', serial: 'ABC' },
  diskSerial: 'DISKSERIAL0123456789XYZ',
  disk: '/d/lab/node-3/disk.qcow2',
  cdImage: null,
  qmpSocket: '/d/lab/node-3/qmp.sock',
  pidfile: '/d/lab/node-3/qemu.pid',
  tap: 'q1p3',
  order: bootOrder('Cd'),
};

/** The value after each occurrence of `flag`. */
function values(args: readonly string[], flag: string): string[] {
  return args.flatMap((a, i) => (a === flag ? [args[i + 1]!] : []));
}

describe('boot order', () => {
  it('puts the override device first and keeps disk, CD, network after it', () => {
    expect(bootOrder('Cd')).toEqual({ cd: 1, disk: 2, net: 3 });
    expect(bootOrder('Pxe')).toEqual({ net: 1, disk: 2, cd: 3 });
    expect(bootOrder('UefiHttp')).toEqual(bootOrder('Pxe'));
    for (const t of ['Hdd', 'None', 'BiosSetup', null] as const) expect(bootOrder(t)).toEqual({ disk: 1, cd: 2, net: 3 });
  });
});

describe('QEMU command line', () => {
  it('builds a q35 UEFI machine with the system identity, bootindexes, a tap NIC, QMP and a pidfile', () => {
    const args = qemuArgs(LAUNCH);
    expect(args).toEqual(expect.arrayContaining(['-nodefaults', '-no-user-config', '-S']));
    expect(values(args, '-machine')).toEqual(['q35,graphics=off']);
    expect(values(args, '-accel')).toEqual(['tcg']);
    expect(values(args, '-display')).toEqual(['none']);
    expect(values(args, '-m')).toEqual(['1024']);
    expect(values(args, '-smp')).toEqual(['3']);
    expect(values(args, '-uuid')).toEqual([LAUNCH.uuid]);
    // The comma of the product name is doubled (QEMU option syntax).
    expect(values(args, '-smbios')).toEqual(['type=1,manufacturer=QEMU,product=Standard PC (Q35 + ICH9,, 2009),serial=ABC']);
    expect(values(args, '-drive')).toEqual([
      'if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd',
      'if=pflash,format=raw,unit=1,file=/d/lab/node-3/OVMF_VARS.fd',
      'if=none,id=disk0,format=qcow2,file=/d/lab/node-3/disk.qcow2',
      'if=none,id=cd0,media=cdrom,readonly=on',
    ]);
    const devices = values(args, '-device');
    expect(devices).toContain('virtio-blk-pci,drive=disk0,id=disk,serial=DISKSERIAL0123456789,bootindex=2');
    expect(devices).toContain('ide-cd,drive=cd0,bus=ide.0,id=cdrom,bootindex=1');
    expect(devices).toContain('virtio-net-pci,netdev=net0,id=nic,mac=52:54:00:aa:bb:cc,bootindex=3');
    expect(values(args, '-netdev')).toEqual(['tap,id=net0,ifname=q1p3,script=no,downscript=no']);
    expect(values(args, '-qmp')).toEqual(['unix:/d/lab/node-3/qmp.sock,server=on,wait=off']);
    expect(values(args, '-pidfile')).toEqual(['/d/lab/node-3/qemu.pid']);
    expect(values(args, '-serial')).toEqual(['chardev:serial0']);
    expect(values(args, '-action')).toEqual(['reboot=shutdown,shutdown=pause']);
  });

  it('uses SeaBIOS (no pflash) for Legacy, a hub port without a tap, and the ISO in the CD drive', () => {
    const args = qemuArgs({ ...LAUNCH, firmware: 'bios', accel: 'kvm', tap: null, cdImage: '/m/a,b.iso', order: bootOrder('Pxe') });
    expect(values(args, '-drive').filter((d) => d.startsWith('if=pflash'))).toEqual([]);
    expect(values(args, '-drive')).toContain('if=none,id=cd0,media=cdrom,readonly=on,format=raw,file=/m/a,,b.iso');
    expect(values(args, '-netdev')).toEqual(['hubport,id=net0,hubid=0']);
    expect(values(args, '-accel')).toEqual(['kvm']);
    expect(values(args, '-device')).toContain('virtio-net-pci,netdev=net0,id=nic,mac=52:54:00:aa:bb:cc,bootindex=1');
  });

  it('wraps QEMU in setpriv --pdeathsig and ip netns exec when asked', () => {
    expect(wrapCommand('qemu', ['-S'], { netns: 'q1-sw', pdeathsig: true })).toEqual([
      'setpriv',
      '--pdeathsig',
      'KILL',
      'ip',
      'netns',
      'exec',
      'q1-sw',
      'qemu',
      '-S',
    ]);
    expect(wrapCommand('qemu', ['-S'], { netns: null, pdeathsig: false })).toEqual(['qemu', '-S']);
    expect(optValue('a,b,,c')).toBe('a,,b,,,,c');
  });
});

describe('options and hardware model', () => {
  it('fills in the defaults: 2048 MiB, 2 vCPUs, 8 GiB, UEFI, auto accelerator, VLAN 3900 on 10.42.0.1/24', () => {
    const s = qemuSettings({ count: 2, dataDir: '/d', network: { prefix: 'q1' } });
    expect(s).toMatchObject({ memoryMiB: 2048, vcpus: 2, diskGiB: 8, firmware: 'uefi', accel: 'auto', gracefulShutdownTimeoutS: 60 });
    expect(s.network).toEqual({ prefix: 'q1', provisioningVlan: 3900, provisioningAddress: '10.42.0.1/24' });
    expect(qemuSettings({ count: 1, dataDir: '/d' }).network).toBeNull();
  });

  it('refuses bad options', () => {
    expect(() => qemuSettings({ count: 1, dataDir: '/d', memoryMiB: 64 })).toThrow(/memoryMiB/);
    expect(() => qemuSettings({ count: 65, dataDir: '/d' })).toThrow(/count/);
    expect(() => qemuSettings({ count: 1, dataDir: '/d', network: { prefix: 'Bad-1' } })).toThrow(/prefix/);
    expect(() => qemuSettings({ count: 1, dataDir: '/d', network: { prefix: 'q', provisioningAddress: '10.42.0.300/24' } })).toThrow(
      /address/,
    );
    expect(() => qemuSettings({ count: 1, dataDir: '/d', network: { prefix: 'q', provisioningVlan: 4095 } })).toThrow(/provisioningVlan/);
    expect(() => qemuSettings({ count: 1, dataDir: '/d', firmware: 'coreboot' as 'uefi' })).toThrow(/firmware/);
  });

  it('describes the VM QEMU runs: vCPUs, memory, the virtio disk, one NIC, QEMU as the vendor', () => {
    const m = qemuLabModel(qemuSettings({ count: 1, dataDir: '/d', memoryMiB: 1536, vcpus: 3, diskGiB: 5, firmware: 'bios' }));
    expect(m.cpu).toMatchObject({ sockets: 1, coresPerSocket: 3, threadsPerCore: 1, model: QEMU_CPU_MODEL });
    expect(m.memoryMiB).toBe(1536);
    expect(m.disks).toEqual([expect.objectContaining({ name: '/dev/vda', count: 1, sizeBytes: 5 * 1024 ** 3 })]);
    expect(m.nics).toEqual([expect.objectContaining({ pxe: true, cabled: false })]);
    expect(m.bootMode).toBe('bios');
    expect(m.system.manufacturer).toBe('QEMU');
  });
});

describe('files', () => {
  it('keeps a node under <dataDir>/lab/<id>/ and moves a QMP socket whose path is too long to /tmp', () => {
    const f = nodeFiles('/srv/esi', 'node-7');
    expect(f).toMatchObject({ dir: '/srv/esi/lab/node-7', disk: '/srv/esi/lab/node-7/disk.qcow2', qmp: '/srv/esi/lab/node-7/qmp.sock' });
    const long = nodeFiles(`/srv/${'x'.repeat(120)}`, 'node-7');
    expect(long.qmp.startsWith('/tmp/esi-qmp-')).toBe(true);
    expect(Buffer.byteLength(long.qmp)).toBeLessThan(108);
    expect(nodeFiles(`/srv/${'y'.repeat(120)}`, 'node-7').qmp).not.toBe(long.qmp);
  });

  it('recognises an ISO 9660 image by CD001 at byte 32769', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-iso-'));
    try {
      const iso = Buffer.alloc(ISO9660_MAGIC_OFFSET + 2048);
      iso.write('CD001', ISO9660_MAGIC_OFFSET, 'latin1');
      fs.writeFileSync(path.join(dir, 'a.iso'), iso);
      fs.writeFileSync(path.join(dir, 'b.txt'), 'not an image');
      fs.writeFileSync(path.join(dir, 'c.img'), Buffer.alloc(ISO9660_MAGIC_OFFSET + 2048));
      expect(await isIso9660(path.join(dir, 'a.iso'))).toBe(true);
      expect(await isIso9660(path.join(dir, 'b.txt'))).toBe(false);
      expect(await isIso9660(path.join(dir, 'c.img'))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('QEMU-backed systems in the lab model', () => {
  it('puts them after the simulated systems and records the boots their VMs do', () => {
    const state = new LabState({ nodes: 3, qemu: 2, username: 'admin', password: 'password', seed: 's' });
    expect(state.systems().map((s) => [s.id, s.backing])).toEqual([
      ['node-0', 'simulated'],
      ['node-1', 'qemu'],
      ['node-2', 'qemu'],
    ]);
    state.patchSystem('node-1', { boot: { target: 'Pxe', enabled: 'Once', mode: 'Legacy' } });
    expect(state.pendingBoot('node-1')).toEqual({ override: 'Pxe', mode: 'Legacy' });
    // Looking changes nothing; the boot uses the override up.
    expect(state.pendingBoot('node-1')).toEqual({ override: 'Pxe', mode: 'Legacy' });
    state.setPowerState('node-1', 'On');
    expect(state.system('node-1')).toMatchObject({ bootCount: 1, lastBootOverride: 'Pxe', boot: { enabled: 'Disabled' } });
    expect(state.pendingBoot('node-1')).toEqual({ override: null, mode: 'Legacy' });
    state.recordBoot('node-1');
    expect(state.system('node-1')).toMatchObject({ bootCount: 2, lastBootOverride: null });
    expect(() => new LabState({ nodes: 1, qemu: 2, username: 'a', password: 'b' })).toThrow(RangeError);
  });
});
