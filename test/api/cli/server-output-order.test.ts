/**
 * `esi server` as a log sees it (issue 19, "messages arrive in the order things happen"): stdout
 * and stderr merged into one pipe (`2>&1`, not a terminal), JSON log lines at level debug. A log
 * entry written while starting (`esi api listening`) comes before the `esi: listening on` line
 * printed after it, and every start line before `esi: ready`; on SIGTERM, `stopping` comes first
 * and `esi: stopped` last.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, ROOT } from '../../helpers/esi-process.ts';
import { testDb } from '../../helpers/harness.ts';
import { waitFor } from '../../helpers/wait-for.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** The line's text: an `esi:` line as is, a JSON log line's `msg`. */
function text(line: string): string {
  if (!line.startsWith('{')) return line;
  return `log: ${(JSON.parse(line) as { msg?: string }).msg ?? ''}`;
}

// A process on the data directory's SQLite database whatever the project: run once, in api-sqlite.
describe.runIf(testDb() === 'sqlite')('esi server output order', () => {
  it('writes its log entries and its esi: lines in the order they happen, starting and stopping', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-order-'));
    dirs.push(dataDir);
    const port = await freePort();
    const child = spawn(
      '/bin/sh',
      ['-c', 'exec "$@" 2>&1', 'sh', process.execPath, 'bin/esi.js', 'server', '--port', String(port), '--data-dir', dataDir],
      {
        cwd: ROOT,
        env: { ...process.env, ESI_ADMIN_PASSWORD: 'pw', ESI_CONDUCTOR_WORKERS: '0', ESI_LOG_LEVEL: 'debug', ESI_LOG_FORMAT: 'json' },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(
        () => out,
        (o) => o.includes('esi: ready;'),
        { timeoutMs: 60_000, what: 'the ready line', show: (o) => o },
      );
      // Anything still on its way would show up now, after the ready line.
      await new Promise((r) => setTimeout(r, 300));
      const started = out.trimEnd().split('\n').map(text);
      const at = (re: RegExp): number => started.findIndex((l) => re.test(l));
      expect(at(/^log: esi api listening$/), out).toBeGreaterThanOrEqual(0);
      expect(at(/^log: esi api listening$/), out).toBeLessThan(at(/^esi: listening on /));
      expect(at(/^esi: listening on /)).toBeLessThan(at(/^esi: admin credentials: /));
      // The ready line is the last one: nothing logged while starting arrives after it.
      expect(started.at(-1), out).toMatch(/^esi: ready; stop with Ctrl-C/);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    const stopping = out.trimEnd().split('\n').map(text);
    const from = stopping.findIndex((l) => l.startsWith('esi: SIGTERM: stopping'));
    expect(from, out).toBeGreaterThan(0);
    expect(stopping.at(-1), out).toBe('esi: stopped');
  });
});
