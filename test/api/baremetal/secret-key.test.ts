/**
 * `ESI_SECRET_KEY`: the configured key is used (no key file is written), and with request
 * logging at trace level no BMC password reaches the log. Its own file because it starts a
 * server with a custom logger (one server per file keeps PostgreSQL schemas apart).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { generateSecretKey } from '../../../src/domain/secrets.ts';
import { LOG_REDACT } from '../../../src/server/container.ts';
import { loadConfig } from '../../../src/server/config.ts';
import { startServer } from '../../../src/server/main.ts';
import { ADMIN_PASSWORD, createPersonas, TEST_PG_URL, testDb, type TestServer } from '../../helpers/harness.ts';
import { bm, nodeRow } from './helpers.ts';

const PASSWORD = 'Sup3r-Secret-BMC-Pa55';

describe('with ESI_SECRET_KEY and request logging on', () => {
  it('uses the configured key, writes no key file, and never logs the password', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-secret-'));
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const schema = testDb() === 'postgres' ? `t_sec_${Date.now().toString(36)}` : undefined;
    const config = loadConfig(
      { port: 0, dataDir },
      {
        ESI_ADMIN_PASSWORD: ADMIN_PASSWORD,
        ESI_LOG_LEVEL: 'trace',
        ESI_SECRET_KEY: generateSecretKey(),
        ...(schema ? { ESI_DATABASE_URL: TEST_PG_URL } : {}),
      },
    );
    let server: Awaited<ReturnType<typeof startServer>> | null = null;
    try {
      server = await startServer(config, {
        logger: pino({ level: 'trace', redact: LOG_REDACT }, sink),
        ...(schema ? { store: { pgSchema: schema, pgPoolSize: 4 } } : {}),
      });
      const local = { url: server.url!, server, config, dataDir, schema, close: async () => {} } as unknown as TestServer;
      const personas = await createPersonas(local);
      const r = await bm(local, personas.admin, 'POST', '/v1/nodes', {
        driver: 'redfish',
        name: 'logged',
        driver_info: { redfish_address: 'http://127.0.0.1:9', redfish_username: 'root', redfish_password: PASSWORD },
      });
      expect(r.status).toBe(201);
      await bm(local, personas.admin, 'PATCH', '/v1/nodes/logged', [
        { op: 'replace', path: '/driver_info/redfish_password', value: PASSWORD },
      ]);
      // A BMC failure is a 500 whose error is logged: neither response nor log holds the password.
      const failed = await bm(local, personas.admin, 'GET', '/v1/nodes/logged/management/boot_device');
      expect(failed.status).toBe(500);
      expect(failed.text).not.toContain(PASSWORD);
      expect(lines.some((l) => l.includes('baremetal API request failed'))).toBe(true);
      expect(fs.existsSync(path.join(dataDir, 'secret.key'))).toBe(false);
      expect(JSON.stringify(await nodeRow(local, r.body.uuid))).not.toContain(PASSWORD);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.join('')).not.toContain(PASSWORD);
    } finally {
      await server?.close();
      if (schema) {
        const pg = (await import('pg')).default;
        const c = new pg.Client({ connectionString: TEST_PG_URL });
        await c.connect();
        await c.query(`drop schema if exists ${schema} cascade`);
        await c.end();
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
