/**
 * The pure parts of the OS image builder (src/osimage/): GRUB's BIOS boot sector and core image
 * patched as grub-bios-setup patches them (checked against the fields of GRUB 2.06's
 * include/grub/i386/pc/boot.h), the GRUB menu and fstab, the identifiers derived from the cache
 * key, the cache key itself, and the cache's atomic publish (real directories in a temp dir).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CacheEntry, cacheKey, cacheRoot } from '../../../src/osimage/cache.ts';
import { debianLayout } from '../../../src/osimage/debian.ts';
import { espFsUuid, fstab } from '../../../src/osimage/disk.ts';
import { biosBootSector, biosCoreImage, grubConfig } from '../../../src/osimage/grub.ts';

describe('GRUB for BIOS', () => {
  it('the MBR keeps the partition table and points at the core', () => {
    const boot = Buffer.alloc(512, 0xaa);
    boot[0x1fe] = 0x55;
    const mbr = Buffer.alloc(512, 0);
    mbr.fill(0x11, 0x1b8, 0x1fe);
    mbr.fill(0x22, 0x03, 0x5a);
    const out = biosBootSector(boot, mbr, 2048);
    expect(out.length).toBe(512);
    expect(out.subarray(0x1b8, 0x1fe).every((b) => b === 0x11)).toBe(true);
    expect(out.subarray(0x03, 0x5a).every((b) => b === 0x22)).toBe(true);
    expect(out.readBigUInt64LE(0x5c)).toBe(2048n);
    expect(out[0x64]).toBe(0xff);
    expect([out[0x66], out[0x67]]).toEqual([0x90, 0x90]);
    expect(out[0]).toBe(0xaa);
    expect(out[0x1fe]).toBe(0x55);
  });

  it('the core image lists the sectors after its first one', () => {
    const core = Buffer.alloc(512 * 3 + 100, 1);
    const out = biosCoreImage(core, 2048);
    expect(out.length).toBe(512 * 4);
    expect(out.readBigUInt64LE(500)).toBe(2049n);
    expect(out.readUInt16LE(508)).toBe(3);
    expect(out.readUInt16LE(510)).toBe(0x820);
    expect(() => biosCoreImage(Buffer.alloc(100), 2048)).toThrow(/two sectors/);
  });
});

describe('image configuration', () => {
  const layout = debianLayout('0'.repeat(64));

  it('derives stable, well-formed identifiers from the key', () => {
    expect(debianLayout('0'.repeat(64))).toEqual(layout);
    expect(debianLayout('1'.repeat(64)).rootFsUuid).not.toBe(layout.rootFsUuid);
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    for (const u of [layout.diskGuid, layout.rootFsUuid, ...Object.values(layout.partUuids)]) expect(u).toMatch(uuid);
    expect(new Set([layout.diskGuid, layout.rootFsUuid, ...Object.values(layout.partUuids)]).size).toBe(5);
    expect(layout.espVolumeId).toMatch(/^[0-9a-f]{8}$/);
    expect(layout.sizeMiB).toBeLessThanOrEqual(1024);
  });

  it('fstab and the GRUB menu name the root by UUID; the kernel logs to ttyS0', () => {
    const tab = fstab(layout);
    expect(tab).toContain(`UUID=${layout.rootFsUuid} /             ext4`);
    expect(tab).toContain(`UUID=${espFsUuid(layout.espVolumeId)}`);
    expect(espFsUuid('d6b2be3a')).toBe('D6B2-BE3A');
    const cfg = grubConfig({ title: layout.title, rootFsUuid: layout.rootFsUuid, cmdline: layout.cmdline });
    expect(cfg).toContain(`linux /vmlinuz root=UUID=${layout.rootFsUuid} ro console=tty0 console=ttyS0,115200`);
    expect(cfg).toContain('serial --unit=0 --speed=115200');
    expect(cfg).toContain('initrd /initrd.img');
  });
});

describe('cache', () => {
  const dirs: string[] = [];
  const temp = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-osimage-cache-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it('keys depend on every input, not on their order', () => {
    const a = cacheKey({ x: '1', y: Buffer.from('2') });
    expect(cacheKey({ y: '2', x: '1' })).toBe(a);
    expect(cacheKey({ x: '1', y: '3' })).not.toBe(a);
    expect(cacheKey({ x: '12', y: '' })).not.toBe(cacheKey({ x: '1', y: '2' }));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the root is $ESI_CACHE_DIR, else ~/.cache/esi', () => {
    expect(cacheRoot({ ESI_CACHE_DIR: '/srv/cache' })).toBe('/srv/cache');
    expect(cacheRoot({})).toBe(path.join(os.homedir(), '.cache', 'esi'));
  });

  it('publishes atomically; the first of two builds wins unless replacing', async () => {
    const root = temp();
    const entry = new CacheEntry(root, 'kind', 'k1');
    expect(await entry.exists()).toBe(false);
    const a = await entry.makeTemp();
    const b = await entry.makeTemp();
    fs.writeFileSync(path.join(a, 'f'), 'a');
    fs.writeFileSync(path.join(b, 'f'), 'b');
    expect(await entry.publish(a, false)).toBe(true);
    expect(await entry.publish(b, false)).toBe(false);
    expect(fs.readFileSync(path.join(entry.dir, 'f'), 'utf8')).toBe('a');
    expect(fs.existsSync(b)).toBe(false);
    const c = await entry.makeTemp();
    fs.writeFileSync(path.join(c, 'f'), 'c');
    expect(await entry.publish(c, true)).toBe(true);
    expect(fs.readFileSync(path.join(entry.dir, 'f'), 'utf8')).toBe('c');
    expect(fs.readdirSync(path.join(root, 'kind'))).toEqual(['k1']);
  });

  it('removes the temporary directories of builds whose process is gone', async () => {
    const root = temp();
    const stale = path.join(root, 'kind', '.tmp-999999999-abc');
    fs.mkdirSync(path.join(stale, 'work'), { recursive: true });
    const mine = await new CacheEntry(root, 'kind', 'k2').makeTemp();
    expect(fs.existsSync(stale)).toBe(false);
    expect(path.basename(mine)).toMatch(new RegExp(`^\\.tmp-${process.pid}-`));
  });
});
