/**
 * Secrets: BMC passwords are masked in every response, sealed at rest (the database row never
 * holds them in clear), available in clear only to the conductor path, and absent from logs.
 * The key lives in `<data-dir>/secret.key` (0600); see secret-key.test.ts for `ESI_SECRET_KEY`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, createNode, nodeRow } from './helpers.ts';

const PASSWORD = 'Sup3r-Secret-BMC-Pa55';
let ts: TestServer;
let p: Personas;

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
});
afterAll(async () => ts?.close());

/** A redfish node whose BMC password (and a nested token) is PASSWORD. */
async function bmcNode(name: string): Promise<string> {
  const created = await createNode(ts, p, {
    name,
    driver: 'redfish',
    driver_info: {
      redfish_address: 'http://127.0.0.1:9',
      redfish_username: 'root',
      redfish_password: PASSWORD,
      redfish_system_id: '/redfish/v1/Systems/1',
      nested: { api_token: PASSWORD },
    },
  });
  return created.uuid as string;
}

describe('driver_info secrets', () => {
  it('are masked in create, show, list, detail and patch responses, for every caller', async () => {
    const created = await createNode(ts, p, {
      name: 'bmc1',
      driver: 'redfish',
      driver_info: {
        redfish_address: 'http://127.0.0.1:9',
        redfish_username: 'root',
        redfish_password: PASSWORD,
        nested: { api_token: PASSWORD },
      },
    });
    expect(created.driver_info).toEqual({
      redfish_address: 'http://127.0.0.1:9',
      redfish_username: 'root',
      redfish_password: '******',
      nested: { api_token: '******' },
    });
    const texts = [
      (await bm(ts, p.admin, 'GET', '/v1/nodes/bmc1')).text,
      (await bm(ts, p.owner, 'GET', '/v1/nodes/bmc1')).text,
      (await bm(ts, p.lessee, 'GET', '/v1/nodes/bmc1')).text,
      (await bm(ts, p.admin, 'GET', '/v1/nodes/detail')).text,
      (await bm(ts, p.admin, 'GET', '/v1/nodes?fields=driver_info')).text,
      (
        await bm(ts, p.admin, 'PATCH', '/v1/nodes/bmc1', [
          { op: 'add', path: '/driver_info/redfish_system_id', value: '/redfish/v1/Systems/1' },
        ])
      ).text,
      (await bm(ts, p.admin, 'GET', '/v1/nodes/bmc1/validate')).text,
    ];
    for (const t of texts) expect(t).not.toContain(PASSWORD);
  });

  it('are sealed in the database and unchanged by patches of other keys', async () => {
    const row = await nodeRow(ts, await bmcNode('bmc2'));
    const text = JSON.stringify(row);
    expect(text).not.toContain(PASSWORD);
    const info = JSON.parse(row!.driver_info as string);
    expect(info.redfish_password).toMatch(/^enc:v1:/);
    expect(info.nested.api_token).toMatch(/^enc:v1:/);
    expect(info.redfish_system_id).toBe('/redfish/v1/Systems/1');
    await bm(ts, p.admin, 'PATCH', '/v1/nodes/bmc2', [{ op: 'add', path: '/driver_info/redfish_verify_ca', value: false }]);
    const again = JSON.parse((await nodeRow(ts, row!.uuid as string))!.driver_info as string);
    expect(again.redfish_password).toBe(info.redfish_password);
  });

  it('are opened only for the conductor path (driverNode), and a changed password is re-sealed', async () => {
    const uuid = await bmcNode('bmc3');
    const dn = await ts.server.services.inventory.nodes.driverNode(uuid);
    expect(dn.driverInfo.redfish_password).toBe(PASSWORD);
    expect((dn.driverInfo.nested as Record<string, unknown>).api_token).toBe(PASSWORD);
    await bm(ts, p.admin, 'PATCH', '/v1/nodes/bmc3', [{ op: 'replace', path: '/driver_info/redfish_password', value: 'other-password' }]);
    expect((await ts.server.services.inventory.nodes.driverNode(uuid)).driverInfo.redfish_password).toBe('other-password');
    expect(JSON.stringify(await nodeRow(ts, uuid))).not.toContain('other-password');
  });

  it('mask instance_info secrets (configdrive, image_url, passwords)', async () => {
    const n = await createNode(ts, p, {
      name: 'ii',
      instance_info: { image_url: 'http://swift/tmp?sig=x', configdrive: 'H4sI', admin_pass: 'x', image_source: 'img' },
    });
    expect(n.instance_info).toEqual({ image_url: '******', configdrive: '******', admin_pass: '******', image_source: 'img' });
  });

  it('keep the key in <data-dir>/secret.key with mode 0600', () => {
    const st = fs.statSync(path.join(ts.dataDir, 'secret.key'));
    expect(st.mode & 0o777).toBe(0o600);
    expect(Buffer.from(fs.readFileSync(path.join(ts.dataDir, 'secret.key'), 'utf8').trim(), 'base64')).toHaveLength(32);
  });
});
