/**
 * The dnsmasq supervisor's file chores (src/drivers/dhcp/files.ts): atomic writes and the
 * check that dnsmasq's unprivileged user can reach its files.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RotatingLog, unreachableForOthers, writeFileAtomic } from '../../../src/drivers/dhcp/files.ts';

describe('dnsmasq files', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'esi-dhcp-files-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('writes atomically, world-readable, leaving no temporary file', async () => {
    const f = path.join(dir, 'hosts');
    await writeFileAtomic(f, 'one\n');
    await writeFileAtomic(f, 'two\n');
    expect(await fs.readFile(f, 'utf8')).toBe('two\n');
    expect((await fs.stat(f)).mode & 0o777).toBe(0o644);
    expect(await fs.readdir(dir)).toEqual(['hosts']);
  });

  it('says which directory keeps others out', async () => {
    const sub = path.join(dir, 'dhcp');
    await fs.mkdir(sub, { mode: 0o755 });
    await fs.chmod(dir, 0o700);
    expect(await unreachableForOthers(sub)).toMatch(new RegExp(`${dir} \\(mode 0700\\) is not searchable by others`));
    await fs.chmod(dir, 0o711);
    expect(await unreachableForOthers(sub)).toBeNull();
    const secret = path.join(sub, 'f');
    await fs.writeFile(secret, 'x', { mode: 0o600 });
    expect(await unreachableForOthers(secret)).toMatch(/is not readable by others/);
    expect(await unreachableForOthers(path.join(sub, 'missing'))).toMatch(/ENOENT/);
  });

  it('rotates the log past its size, keeping one old generation', async () => {
    const f = path.join(dir, 'log');
    const log = await RotatingLog.open(f, 10);
    log.write('12345678\n');
    log.write('abcdefgh\n');
    await log.close();
    expect(await fs.readFile(f, 'utf8')).toBe('abcdefgh\n');
    expect(await fs.readFile(`${f}.1`, 'utf8')).toBe('12345678\n');
  });
});
