/**
 * The ramdisk builder's parts that need no virtual machine: the cache key (src/ramdisk/
 * contents.ts `keyInputs`, `baseKeyInputs` with src/osimage/cache.ts `cacheKey`) — repeatable,
 * changed by every input, the base layer's key untouched by the agent —, the kernel module
 * resolution and unpacking (src/ramdisk/modules.ts), the cpio writer (src/ramdisk/cpio.ts) read
 * back by GNU cpio, and GRUB's configuration of a node ISO (src/ramdisk/iso.ts).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheKey } from '../../../src/osimage/cache.ts';
import { baseKeyInputs, keyInputs, planRamdisk, type KeyFacts } from '../../../src/ramdisk/contents.ts';
import { cpioArchive, type CpioEntry } from '../../../src/ramdisk/cpio.ts';
import { bootParams, grubConfig } from '../../../src/ramdisk/iso.ts';
import { moduleContents, moduleName, parseModuleIndex, resolveModules, unpackedPath } from '../../../src/ramdisk/modules.ts';
import { commandTool, describeNeeding, fileTool, type Tool } from '../../helpers/tools.ts';

const FACTS: KeyFacts = {
  builderVersion: 2,
  kernelRelease: '6.1.0-56-amd64',
  vmlinuz: 'a'.repeat(64),
  modulesDep: 'b'.repeat(64),
  modules: ['kernel/drivers/virtio/virtio.ko', 'kernel/drivers/net/virtio_net.ko'],
  packages: { 'busybox-static': '1:1.35.0-4', nodejs: '20.20.2-1', 'qemu-utils': '1:7.2', 'linux-image-6.1.0-56-amd64': '6.1.192-2' },
  files: { '/usr/bin/node': 'c'.repeat(64), '/lib/x86_64-linux-gnu/libc.so.6': 'd'.repeat(64) },
  nodeVersion: '20.20.2',
  agentBundle: 'e'.repeat(64),
  init: 'f'.repeat(64),
  dhcpScript: '0'.repeat(64),
};

describe('the ramdisk cache key', () => {
  it('is the same for the same inputs, whatever order they were gathered in', () => {
    const reordered: KeyFacts = {
      ...FACTS,
      packages: Object.fromEntries(Object.entries(FACTS.packages).reverse()),
      files: Object.fromEntries(Object.entries(FACTS.files).reverse()),
    };
    expect(cacheKey(keyInputs(reordered))).toBe(cacheKey(keyInputs(FACTS)));
    expect(cacheKey(keyInputs(FACTS))).toMatch(/^[0-9a-f]{64}$/);
  });

  it('changes when any input changes; the base layer key only with the base inputs', () => {
    const changes: Array<[string, Partial<KeyFacts>, boolean]> = [
      ['builder version', { builderVersion: 3 }, true],
      ['kernel release', { kernelRelease: '6.1.0-57-amd64' }, true],
      ['vmlinuz', { vmlinuz: '1'.repeat(64) }, true],
      ['modules.dep', { modulesDep: '2'.repeat(64) }, true],
      ['module list', { modules: [...FACTS.modules, 'kernel/drivers/block/virtio_blk.ko'] }, true],
      ['a package version', { packages: { ...FACTS.packages, 'busybox-static': '1:1.36.1-1' } }, true],
      ['a package removed', { packages: { ...FACTS.packages, nodejs: null } }, true],
      ['the node binary', { files: { ...FACTS.files, '/usr/bin/node': '3'.repeat(64) } }, true],
      ['a library', { files: { ...FACTS.files, '/lib/x86_64-linux-gnu/libz.so.1': '4'.repeat(64) } }, true],
      ['node version', { nodeVersion: '20.21.0' }, true],
      ['the agent bundle', { agentBundle: '5'.repeat(64) }, false],
      ['init.sh', { init: '6'.repeat(64) }, false],
      ['udhcpc.sh', { dhcpScript: '7'.repeat(64) }, false],
    ];
    const key = cacheKey(keyInputs(FACTS));
    const baseKey = cacheKey(baseKeyInputs(FACTS));
    for (const [what, change, base] of changes) {
      const facts = { ...FACTS, ...change };
      expect(cacheKey(keyInputs(facts)), what).not.toBe(key);
      if (base) expect(cacheKey(baseKeyInputs(facts)), what).not.toBe(baseKey);
      else expect(cacheKey(baseKeyInputs(facts)), what).toBe(baseKey);
    }
  });
});

const kernelTool: Tool = {
  what: '/boot/vmlinuz-*',
  pkg: 'linux-image-amd64',
  get present() {
    return fs.readdirSync('/boot').some((f) => f.startsWith('vmlinuz-'));
  },
};

describeNeeding(
  [kernelTool, fileTool('/bin/busybox', 'busybox-static'), commandTool('qemu-img', 'qemu-utils'), commandTool('sfdisk', 'fdisk')],
  'the ramdisk inputs of this machine',
  () => {
    it('give the same key twice (the build is repeatable), covering the kernel, node, qemu-img, sfdisk and their libraries', async () => {
      const a = await planRamdisk();
      const b = await planRamdisk();
      expect(cacheKey(keyInputs(a.facts))).toBe(cacheKey(keyInputs(b.facts)));
      expect(Object.keys(a.facts.files)).toEqual(
        expect.arrayContaining(['/bin/busybox', '/usr/bin/node', '/usr/bin/qemu-img', '/usr/sbin/sfdisk']),
      );
      expect(Object.keys(a.facts.files).some((f) => /\/libc\.so\.6$/.test(f))).toBe(true);
      expect(a.modules.order.map(moduleName)).toEqual(expect.arrayContaining(['virtio_net', 'virtio_blk', 'ahci', 'nvme', 'sd_mod']));
    });
  },
);

describe('kernel modules', () => {
  const DEP = [
    'kernel/drivers/virtio/virtio.ko.xz:',
    'kernel/drivers/virtio/virtio_ring.ko.xz:',
    'kernel/drivers/virtio/virtio_pci.ko.xz: kernel/drivers/virtio/virtio_ring.ko.xz kernel/drivers/virtio/virtio.ko.xz',
    'kernel/drivers/net/virtio_net.ko.xz: kernel/drivers/net/net_failover.ko.xz kernel/net/core/failover.ko.xz kernel/drivers/virtio/virtio.ko.xz kernel/drivers/virtio/virtio_ring.ko.xz',
    'kernel/drivers/net/net_failover.ko.xz: kernel/net/core/failover.ko.xz',
    'kernel/net/core/failover.ko.xz:',
    'kernel/lib/crc-t10dif.ko.zst:',
    '',
  ].join('\n');

  it('loads every module after its dependencies, each once; reports built-in and missing ones', () => {
    const index = parseModuleIndex(DEP, 'kernel/drivers/block/virtio_blk.ko\n');
    const r = resolveModules(index, ['virtio_pci', 'virtio_net', 'virtio_blk', 'crc-t10dif', 'no_such_driver']);
    expect(r.order).toEqual([
      'kernel/drivers/virtio/virtio_ring.ko.xz',
      'kernel/drivers/virtio/virtio.ko.xz',
      'kernel/drivers/virtio/virtio_pci.ko.xz',
      'kernel/net/core/failover.ko.xz',
      'kernel/drivers/net/net_failover.ko.xz',
      'kernel/drivers/net/virtio_net.ko.xz',
      'kernel/lib/crc-t10dif.ko.zst',
    ]);
    expect(r.builtin).toEqual(['virtio_blk']);
    expect(r.missing).toEqual(['no_such_driver']);
    expect(moduleName('kernel/lib/crc-t10dif.ko.zst')).toBe('crc_t10dif');
    expect(unpackedPath('kernel/lib/crc-t10dif.ko.zst')).toBe('kernel/lib/crc-t10dif.ko');
  });

  describeNeeding([commandTool('xz', 'xz-utils'), commandTool('zstd', 'zstd')], 'compressed modules', () => {
    let dir: string;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-modules-'));
    });
    afterAll(() => {
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    it('are unpacked from .ko.xz, .ko.zst and .ko.gz (busybox insmod takes plain .ko only)', async () => {
      const elf = Buffer.concat([Buffer.from('\x7fELF'), Buffer.alloc(5000, 7)]);
      const plain = path.join(dir, 'm.ko');
      fs.writeFileSync(plain, elf);
      execFileSync('xz', ['-k', '-c', plain], { stdio: ['ignore', fs.openSync(`${plain}.xz`, 'w'), 'ignore'] });
      execFileSync('zstd', ['-q', '-k', plain, '-o', `${plain}.zst`]);
      execFileSync('gzip', ['-k', plain]);
      for (const f of [plain, `${plain}.xz`, `${plain}.zst`, `${plain}.gz`]) expect((await moduleContents(f)).equals(elf), f).toBe(true);
      await expect(moduleContents(path.join(dir, 'm.txt'))).rejects.toThrow('is not a kernel module');
    });
  });
});

describeNeeding([commandTool('cpio', 'cpio')], 'the initramfs cpio writer', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-cpio-'));
  });
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('writes a newc archive GNU cpio reads: parents first, modes, links, device nodes, contents, owner root, mtime 0', async () => {
    const entries: CpioEntry[] = [
      { type: 'file', path: 'usr/bin/tool', mode: 0o755, data: async () => Buffer.from('#!/bin/sh\necho hi\n') },
      { type: 'symlink', path: 'bin/sh', target: '/bin/busybox' },
      { type: 'chardev', path: 'dev/console', mode: 0o600, major: 5, minor: 1 },
      { type: 'dir', path: 'tmp', mode: 0o1777 },
      { type: 'file', path: 'odd', mode: 0o644, data: async () => Buffer.from('abc') },
    ];
    const chunks: Buffer[] = [];
    for await (const c of cpioArchive(entries)) chunks.push(c);
    const archive = path.join(dir, 'a.cpio');
    fs.writeFileSync(archive, Buffer.concat(chunks));
    expect(Buffer.concat(chunks).length % 4).toBe(0);
    const listing = execFileSync('cpio', ['-t', '-v', '--quiet', '-F', archive], { encoding: 'utf8' }).trim().split('\n');
    expect(listing.map((l) => l.replace(/^.* 1970 /, ''))).toEqual([
      'bin',
      'bin/sh -> /bin/busybox',
      'dev',
      'dev/console',
      'odd',
      'tmp',
      'usr',
      'usr/bin',
      'usr/bin/tool',
    ]);
    const line = (name: string) => listing.find((l) => l.endsWith(` ${name}`) || l.includes(` ${name} ->`))!;
    expect(line('dev/console')).toMatch(/^crw------- +1 root +root +5, +1 /);
    expect(line('tmp')).toMatch(/^drwxrwxrwt /);
    expect(line('usr/bin/tool')).toMatch(/^-rwxr-xr-x +1 root +root +18 Jan +1 +1970 usr\/bin\/tool$/);
    const content = execFileSync('cpio', ['-i', '--to-stdout', '--quiet', '-F', archive, 'odd'], { encoding: 'utf8' });
    expect(content).toBe('abc');
  });

  it('refuses absolute and parent paths', async () => {
    const write = async (p: string) => {
      for await (const _ of cpioArchive([{ type: 'dir', path: p }])) void _;
    };
    await expect(write('/etc')).rejects.toThrow('bad archive path');
    await expect(write('a/../b')).rejects.toThrow('bad archive path');
  });
});

describe("a node ISO's GRUB configuration", () => {
  it('boots /esi/vmlinuz with the console parameters first, then the node parameters, each quoted for GRUB', () => {
    const cfg = grubConfig('ipa-api-url=http://10.0.0.1:8585/baremetal ipa-agent-token=abc');
    expect(cfg).toContain(
      "  linux /esi/vmlinuz 'console=ttyS0,115200' 'console=tty0' 'ipa-api-url=http://10.0.0.1:8585/baremetal' 'ipa-agent-token=abc'\n",
    );
    expect(cfg).toContain('  initrd /esi/initramfs\n');
    expect(cfg).toMatch(/serial --unit=0 --speed=115200\nterminal_input serial console\nterminal_output serial console/);
  });

  it('keeps the given console parameters, quotes quotes, and refuses newlines and over-long command lines', () => {
    expect(bootParams('console=ttyS1,115200 ipa-debug=1')).toBe('console=ttyS1,115200 ipa-debug=1');
    expect(grubConfig("a=it's console=ttyS0")).toContain(`linux /esi/vmlinuz 'a=it'\\''s' 'console=ttyS0'`);
    expect(() => bootParams('a=1\nlinux /evil')).toThrow('one line');
    expect(() => bootParams(`x=${'y'.repeat(2100)}`)).toThrow('too long');
  });
});
