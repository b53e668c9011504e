/**
 * `esi server` refuses a start that cannot work with one line on stderr and status 1, never a
 * stack trace (issue 19): a config file key it does not know (naming the nearest known key), the
 * API port in use (naming it and `--port`), a data directory it cannot create or write, and a
 * program a feature needs that is not installed (naming its Debian package).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, ROOT } from '../../helpers/esi-process.ts';
import { testDb } from '../../helpers/harness.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-startup-'));
  dirs.push(d);
  return d;
}

/** Run `esi server <args>` to its end (it is expected to refuse to start). */
function esiServer(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/esi.js', 'server', ...args],
      { cwd: ROOT, timeout: 60_000, env: { ...process.env, ESI_LOG_LEVEL: 'warn', ESI_CONDUCTOR_WORKERS: '0', ...env } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

/** The refusal: status 1, and stderr exactly one line `esi: <message>` without a stack trace. */
function expectRefusal(r: { code: number | null; stderr: string }, message: string | RegExp): void {
  expect(r.code, r.stderr).toBe(1);
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^esi: /);
  if (typeof message === 'string') expect(lines[0]).toContain(message);
  else expect(lines[0]).toMatch(message);
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

// Processes on the data directory's SQLite database whatever the project: run once, in api-sqlite.
describe.runIf(testDb() === 'sqlite')('esi server refuses a start that cannot work', () => {
  it('a config file with an unknown key: names it and the nearest known key', async () => {
    const d = tempDir();
    const file = path.join(d, 'esi.yaml');
    fs.writeFileSync(file, 'port: 0\nlog_levle: debug\n');
    const r = await esiServer(['--config', file, '--data-dir', d]);
    expectRefusal(r, `config file ${file}: unknown key "log_levle" (did you mean "log_level"?)`);
    expect(fs.readdirSync(d)).toEqual(['esi.yaml']);
  });

  it('the API port in use: names the port and --port', async () => {
    const port = await freePort();
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      const r = await esiServer(['--port', String(port), '--data-dir', tempDir()]);
      expectRefusal(r, `the API port ${port} on 127.0.0.1 is already in use: stop what listens there, or choose another port with --port`);
    } finally {
      taken.close();
    }
  });

  it('a data directory that cannot be created, or written', async () => {
    const file = path.join(tempDir(), 'not-a-dir');
    fs.writeFileSync(file, '');
    const under = path.join(file, 'data');
    expectRefusal(
      await esiServer(['--port', '0', '--data-dir', under]),
      `data directory ${under} cannot be created: a part of the path is a file`,
    );
    // /proc refuses new directories even to root.
    expectRefusal(
      await esiServer(['--port', '0', '--data-dir', '/proc/esi-data']),
      /^esi: data directory \/proc\/esi-data cannot be created: /,
    );
    // /proc is a directory nobody may write files in.
    expectRefusal(await esiServer(['--port', '0', '--data-dir', '/proc']), /^esi: data directory \/proc is not writable: /);
    if (process.getuid?.() !== 0) {
      const ro = tempDir();
      fs.chmodSync(ro, 0o500);
      expectRefusal(await esiServer(['--port', '0', '--data-dir', ro]), `data directory ${ro} is not writable: permission denied`);
    }
  });

  it('QEMU lab nodes without QEMU on the PATH: names the Debian package', async () => {
    const emptyBin = tempDir();
    const r = await esiServer(['--port', '0', '--data-dir', tempDir(), '--lab-qemu', '1'], { PATH: emptyBin });
    expectRefusal(r, 'qemu-system-x86_64 not found: install the Debian package qemu-system-x86 (needed by QEMU lab nodes (--lab-qemu))');
  });
});
