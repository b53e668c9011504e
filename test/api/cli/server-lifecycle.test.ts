/**
 * `esi server` as an operator starts and stops it (issue 19, item 1): once ready it prints the
 * URL, the `source …/admin-openrc` line and how to stop it; Ctrl-C (SIGINT) says what it is
 * doing, exits 0 within seconds and leaves nothing listening. `--log-format pretty` writes one
 * human line per log entry, `json` pino's JSON lines; another value is refused at start.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, ROOT, spawnEsiServer } from '../../helpers/esi-process.ts';
import { testDb } from '../../helpers/harness.ts';
import { waitFor } from '../../helpers/wait-for.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Whether something accepts TCP connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

// A process on the data directory's SQLite database whatever the project: run once, in api-sqlite.
describe.runIf(testDb() === 'sqlite')('esi server start and stop', () => {
  it('prints where the credentials are and how to stop; SIGINT stops it cleanly with status 0', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-lifecycle-'));
    dirs.push(dataDir);
    const port = await freePort();
    const server = await spawnEsiServer(['--port', String(port), '--data-dir', dataDir], {
      ESI_ADMIN_PASSWORD: 'pw',
      ESI_CONDUCTOR_WORKERS: '0',
    });
    await waitFor(
      () => server.output(),
      (o) => /esi: ready; stop with Ctrl-C/.test(o),
      { timeoutMs: 10_000, what: 'the ready line', show: (o) => o },
    );
    const out = server.output();
    expect(out).toContain(`esi: listening on http://127.0.0.1:${port}; data in ${dataDir}\n`);
    expect(out).toContain(`esi: admin credentials: source ${path.join(dataDir, 'admin-openrc')}\n`);
    expect(out).toContain(`esi: ready; stop with Ctrl-C (or kill -TERM ${server.child.pid})\n`);
    expect(out).not.toContain('pw\n');

    const t0 = Date.now();
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    server.child.kill('SIGINT');
    const code = await exited;
    expect(code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(server.output()).toContain('esi: SIGINT: stopping (background work, the API, the lab, the database)…\n');
    expect(server.output()).toContain('esi: stopped\n');
    expect(await listening(port)).toBe(false);
  });

  it('--log-format pretty writes human lines, json writes JSON lines; an unknown format is refused', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-logformat-'));
    dirs.push(dataDir);
    // The first start sets the admin password; a later one with another logs a warning.
    for (const [format, password] of [
      ['json', 'one'],
      ['pretty', 'two'],
      ['json', 'three'],
    ] as const) {
      const port = await freePort();
      const server = await spawnEsiServer(['--port', String(port), '--data-dir', dataDir, '--log-format', format], {
        ESI_ADMIN_PASSWORD: password,
        ESI_CONDUCTOR_WORKERS: '0',
        ESI_LOG_LEVEL: 'info',
      });
      await server.stop();
      if (password === 'one') continue;
      const warning = server
        .output()
        .split('\n')
        .find((l) => l.includes('ESI_ADMIN_PASSWORD differs') && !l.startsWith('esi: '));
      expect(warning, server.output()).toBeDefined();
      if (format === 'pretty') expect(warning).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: ESI_ADMIN_PASSWORD differs/);
      else expect(JSON.parse(warning!)).toMatchObject({ level: 40, msg: expect.stringContaining('ESI_ADMIN_PASSWORD differs') });
    }
    const bad = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        ['bin/esi.js', 'server', '--data-dir', dataDir, '--log-format', 'xml'],
        { cwd: ROOT, timeout: 30_000 },
        (err, _o, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stderr }),
      ),
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('log format must be one of pretty, json, auto (got "xml")');
  });
});
