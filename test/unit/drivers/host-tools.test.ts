/**
 * The host programs esi runs (src/drivers/host-tools.ts) and the start-up checks built on them
 * (src/server/preflight.ts): a missing program is named with the Debian package to install,
 * looked up on the PATH given (as a spawn would), and a spawn's ENOENT says the same.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  findTool,
  missingToolError,
  missingTools,
  packageOf,
  requireTool,
  TOOL_PACKAGES,
  toolNotFoundMessage,
  ToolNotFoundError,
} from '../../../src/drivers/host-tools.ts';
import { loadConfig } from '../../../src/server/config.ts';
import { checkDataDir, checkPort, checkTools, requiredTools, StartupError } from '../../../src/server/preflight.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-host-tools-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A directory holding an executable `name` (a shell script), for a PATH. */
function binDir(...names: string[]): string {
  const d = fs.mkdtempSync(path.join(dir, 'bin-'));
  for (const n of names) fs.writeFileSync(path.join(d, n), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  return d;
}

describe('host tools', () => {
  it('knows the Debian package of each program esi runs', () => {
    expect(packageOf('qemu-system-x86_64')).toBe('qemu-system-x86');
    expect(packageOf('/usr/sbin/dnsmasq')).toBe('dnsmasq-base');
    expect(packageOf('mkfs.vfat')).toBe('dosfstools');
    expect(TOOL_PACKAGES.xorriso).toBe('xorriso');
    expect(TOOL_PACKAGES.ipmitool).toBe('ipmitool');
    expect(packageOf('no-such-tool')).toBeNull();
  });

  it('finds a program on the PATH given, and only there', () => {
    const d = binDir('qemu-system-x86_64');
    fs.writeFileSync(path.join(d, 'not-executable'), '', { mode: 0o644 });
    expect(findTool('qemu-system-x86_64', d)).toBe(path.join(d, 'qemu-system-x86_64'));
    expect(findTool('not-executable', d)).toBeNull();
    expect(findTool('qemu-system-x86_64', binDir())).toBeNull();
    expect(findTool(path.join(d, 'qemu-system-x86_64'), '')).toBe(path.join(d, 'qemu-system-x86_64'));
  });

  it('says "<tool> not found: install the Debian package <pkg>"', () => {
    const empty = binDir();
    expect(toolNotFoundMessage('xorriso', empty)).toBe('xorriso not found: install the Debian package xorriso');
    expect(toolNotFoundMessage('mystery', empty)).toBe('mystery not found: install it');
    expect(() => requireTool('qemu-system-x86_64', 'QEMU lab nodes need it', empty)).toThrow(
      'qemu-system-x86_64 not found: install the Debian package qemu-system-x86 (QEMU lab nodes need it)',
    );
    expect(missingTools(['xorriso', 'qemu-img', 'xorriso'], empty)).toBe(
      'xorriso not found: install the Debian package xorriso; qemu-img not found: install the Debian package qemu-utils',
    );
    expect(missingTools(['x'], binDir('x'))).toBeNull();
  });

  it('a program in /usr/sbin but not on the PATH is said to be there', () => {
    const sbin = ['/usr/sbin', '/sbin'].find((d) => fs.existsSync(path.join(d, 'ip')));
    if (sbin === undefined) return; // no iproute2 here: nothing to show
    expect(toolNotFoundMessage('ip', binDir())).toBe(`ip not found on the PATH: it is ${sbin}/ip; add ${sbin} to the PATH`);
  });

  it("turns a spawn's ENOENT into the message, and leaves other errors alone", async () => {
    const err = await new Promise<Error | null>((resolve) => execFile('esi-no-such-program', [], (e) => resolve(e)));
    const missing = missingToolError('esi-no-such-program', err);
    expect(missing).toBeInstanceOf(ToolNotFoundError);
    expect(missing?.message).toBe('esi-no-such-program not found: install it');
    const failed = await new Promise<Error | null>((resolve) => execFile('sh', ['-c', 'exit 3'], (e) => resolve(e)));
    expect(missingToolError('sh', failed)).toBeNull();
  });
});

describe('the programs esi runs say the same', () => {
  it('an image-build step whose program is missing (src/osimage/run.ts)', async () => {
    const { run } = await import('../../../src/osimage/run.ts');
    // The spawn looks the program up on its environment's PATH.
    await expect(run('xorriso', ['-version'], { env: { PATH: binDir() } })).rejects.toThrow(
      'cannot run xorriso: xorriso not found: install the Debian package xorriso',
    );
  });
});

describe('start-up checks', () => {
  it('QEMU lab nodes need QEMU: one line naming the package', () => {
    const config = loadConfig({ labQemu: 1, dataDir: dir }, {});
    expect(requiredTools(config).map((t) => t.tool)).toEqual(['qemu-system-x86_64', 'qemu-img', 'ip']);
    const path = binDir('qemu-img', 'ip');
    expect(() => checkTools(config, {}, path)).toThrow(StartupError);
    expect(() => checkTools(config, {}, path)).toThrow(
      /^qemu-system-x86_64 not found: install the Debian package qemu-system-x86 \(needed by QEMU lab nodes \(--lab-qemu\)\)$/,
    );
    expect(() => checkTools(config, {}, binDir('qemu-img', 'ip', 'qemu-system-x86_64'))).not.toThrow();
    expect(() => checkTools(loadConfig({ dataDir: dir }, {}), {}, binDir())).not.toThrow();
  });

  it('--lab-ipmi needs ipmi_sim and ipmitool', () => {
    const config = loadConfig({ dataDir: dir }, {});
    expect(() => checkTools(config, { labIpmi: true }, binDir('ipmitool'))).toThrow(
      'ipmi_sim not found: install the Debian package openipmi (needed by IPMI lab nodes (--lab-ipmi))',
    );
  });

  it('a data directory under a file cannot be created; one in place is written to and left clean', () => {
    const file = path.join(dir, 'a-file');
    fs.writeFileSync(file, '');
    expect(() => checkDataDir(path.join(file, 'data'))).toThrow(
      `data directory ${path.join(file, 'data')} cannot be created: a part of the path is a file, not a directory;`,
    );
    expect(() => checkDataDir(file)).toThrow(`data directory ${file} is not a directory;`);
    const ok = path.join(dir, 'new', 'data');
    checkDataDir(ok);
    expect(fs.readdirSync(ok)).toEqual([]);
  });

  it('a port in use is named, with the option that changes it', async () => {
    const net = await import('node:net');
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      await expect(checkPort('127.0.0.1', port, 'the API', '--port (ESI_PORT)')).rejects.toThrow(
        `the API port ${port} on 127.0.0.1 is already in use: stop what listens there, or choose another port with --port (ESI_PORT)`,
      );
    } finally {
      server.close();
    }
    await expect(checkPort('127.0.0.1', 0, 'the API', '--port')).resolves.toBeUndefined();
    // A documentation address (RFC 5737) no interface has.
    await expect(checkPort('192.0.2.254', 0, 'the API', '--port')).rejects.toThrow(
      'cannot listen on 192.0.2.254: it is not an address of this machine (--host)',
    );
  });
});
