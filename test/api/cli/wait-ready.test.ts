/**
 * `esi wait-ready` (src/cli/commands/wait-ready.ts): returns once a server answers `/readyz`,
 * also when started before the server is listening (the README's tour: `npm start &` then
 * `esi wait-ready`), says why it waits, and gives up after `--timeout` with status 1. The probe
 * needs no credentials: it behaves alike with any persona's OS_* settings or none.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/wait-for.ts';
import { createPersonas, startTestServer, type TestServer } from '../../helpers/harness.ts';
import { freePort } from '../../helpers/esi-process.ts';
import { esi, LOGINS, personaEnv, type LoginName } from './support.ts';

let ts: TestServer;

/** The esi command. */
const ESI_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/esi.js');

/** This process's environment without OS_* settings (the probe needs none). */
function withoutOsEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OS_')));
}

beforeAll(async () => {
  ts = await startTestServer();
  await createPersonas(ts);
});
afterAll(async () => ts?.close());

describe('esi wait-ready', () => {
  it('returns at once for a ready server, found by --url or by OS_AUTH_URL, for every persona and none', async () => {
    const byUrl = await esi(['wait-ready', '--url', ts.url], {});
    expect(byUrl.code, byUrl.stderr).toBe(0);
    expect(byUrl.stdout).toBe(`esi is ready at ${ts.url}\n`);
    for (const name of Object.keys(LOGINS) as LoginName[]) {
      const r = await esi(['wait-ready'], personaEnv(ts, name));
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`esi is ready at ${ts.url}\n`);
    }
  });

  it('started before the server listens, it waits and returns once the server is ready', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // The server starts only once the command has said it waits (however slowly it starts).
    const child = spawn(process.execPath, [ESI_BIN, 'wait-ready', '--url', url, '--timeout', '60'], { env: withoutOsEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await waitFor(
      () => stderr,
      (e) => e.includes(`waiting for ${url}: not listening yet`),
      { timeoutMs: 30_000, what: 'esi wait-ready to say it waits' },
    );
    const late = await startTestServer({ port });
    try {
      expect(await exited, stderr).toBe(0);
      expect(stdout).toBe(`esi is ready at ${url}\n`);
    } finally {
      await late.close();
    }
  });

  it('says why a server is not ready, and gives up after --timeout with status 1', async () => {
    const inventory = ts.server.services.inventory;
    const me = ts.server.services.config.conductor.hostname;
    const [mine] = (await inventory.conductorRepository.list()).filter((c) => c.hostname === me);
    await inventory.conductorRepository.upsert(me, mine!.conductor_group, mine!.drivers, Date.now() - 10 * 60_000);
    try {
      const r = await esi(['wait-ready', '--url', ts.url, '--timeout', '1'], {});
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `not ready (conductor: conductor ${me} has not heartbeated within its dead-after (ESI_CONDUCTOR_DEAD_AFTER))`,
      );
      expect(r.stderr).toMatch(/^esi: http:\/\/127\.0\.0\.1:\d+ was not ready after 1 s: not ready/m);
    } finally {
      await inventory.conductorRepository.upsert(me, mine!.conductor_group, mine!.drivers, Date.now());
    }
    const closed = await esi(['wait-ready', '--url', `http://127.0.0.1:${await freePort()}`, '--timeout', '0.5'], {});
    expect(closed.code).toBe(1);
    expect(closed.stderr).toMatch(/not listening yet/);
  });

  it('refuses a bad --timeout before probing anything', async () => {
    const r = await esi(['wait-ready', '--url', ts.url, '--timeout', 'soon'], {});
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/--timeout.*must be a positive number of seconds/);
    expect(r.stdout).toBe('');
  });
});
