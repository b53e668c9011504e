/**
 * Ironic's console state API (`GET|PUT /v1/nodes/{id}/states/console`,
 * https://docs.openstack.org/api-ref/baremetal/#start-stop-console)
 * for every persona, with esi's `console_info` (a websocket on esi, never the BMC), the
 * `console_interface` field and driver list, bad input; and the `esi:node:console:write` rule
 * overridden by an operator policy file (lessees may then type), on fake-hardware's echoing
 * `fake` console.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, createNode, expectError } from '../baremetal/helpers.ts';
import { closedWithin, connect } from './support.ts';

let ts: TestServer;
let p: Personas;
let seq = 0;

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
});
afterAll(async () => ts?.close());

const redfishInfo = {
  redfish_address: 'http://127.0.0.1:9',
  redfish_system_id: '/redfish/v1/Systems/node-0',
  redfish_username: 'admin',
  redfish_password: 'secret-bmc-pw',
};

describe('GET|PUT /v1/nodes/{id}/states/console', () => {
  it('admin, owner and lessee read and set it; console_info is a websocket on esi; other 404; anonymous 401', async () => {
    const n = await createNode(ts, p, {
      name: `cs-${++seq}`,
      driver: 'redfish',
      driver_info: redfishInfo,
      console_interface: 'redfish-serial',
    });
    expect(n.console_interface).toBe('redfish-serial');
    for (const who of [p.admin, p.owner, p.lessee]) {
      const r = await bm(ts, who, 'GET', `/v1/nodes/${n.uuid}/states/console`);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ console_enabled: false, console_info: null });
    }
    expectError(await bm(ts, p.other, 'GET', `/v1/nodes/${n.uuid}/states/console`), 404);
    expectError(await bm(ts, p.anonymous, 'GET', `/v1/nodes/${n.uuid}/states/console`), 401);
    for (const who of [p.admin, p.owner, p.lessee]) {
      expect((await bm(ts, who, 'PUT', `/v1/nodes/${n.uuid}/states/console`, { enabled: true })).status).toBe(202);
      const r = await bm(ts, who, 'GET', `/v1/nodes/${n.uuid}/states/console`);
      expect(r.body).toEqual({
        console_enabled: true,
        console_info: { type: 'websocket', url: `${ts.url.replace(/^http/, 'ws')}/baremetal/v1/nodes/${n.uuid}/states/console/stream` },
      });
      expect(JSON.stringify(r.body)).not.toContain('127.0.0.1:9');
      expect((await bm(ts, who, 'PUT', `/v1/nodes/${n.uuid}/states/console`, { enabled: false })).status).toBe(202);
      expect((await bm(ts, who, 'GET', `/v1/nodes/${n.uuid}/states/console`)).body.console_enabled).toBe(false);
    }
    expectError(await bm(ts, p.other, 'PUT', `/v1/nodes/${n.uuid}/states/console`, { enabled: true }), 404);
    expectError(await bm(ts, p.anonymous, 'PUT', `/v1/nodes/${n.uuid}/states/console`, { enabled: true }), 401);
    expect((await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}/states/console`)).body.console_enabled).toBe(false);
  });

  it('bad input: a non-boolean enabled, no body, extra keys → 400; an unknown node → 404; nothing recorded', async () => {
    const n = await createNode(ts, p, { name: `cs-${++seq}` });
    for (const body of [{ enabled: 'sometimes' }, { enabled: 3 }, { enabled: null }, {}, { enabled: true, extra: 1 }, [true]]) {
      expectError(await bm(ts, p.owner, 'PUT', `/v1/nodes/${n.uuid}/states/console`, body), 400);
    }
    expectError(await bm(ts, p.admin, 'PUT', '/v1/nodes/7d0b1e2c-0000-4000-8000-000000000000/states/console', { enabled: true }), 404);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes/7d0b1e2c-0000-4000-8000-000000000000/states/console'), 404);
    expect((await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}/states/console`)).body.console_enabled).toBe(false);
  });

  it('a node whose console interface is no-console, or one its driver lacks, cannot be enabled (400)', async () => {
    const none = await createNode(ts, p, { name: `cs-${++seq}`, driver: 'redfish', driver_info: redfishInfo });
    expect(none.console_interface).toBe('no-console');
    expectError(
      await bm(ts, p.owner, 'PUT', `/v1/nodes/${none.uuid}/states/console`, { enabled: true }),
      400,
      /does not support the console/,
    );
    const fake = await createNode(ts, p, { name: `cs-${++seq}`, console_interface: 'no-console' });
    expectError(await bm(ts, p.owner, 'PUT', `/v1/nodes/${fake.uuid}/states/console`, { enabled: true }), 400);
  });

  it('drivers list redfish-serial among the redfish console interfaces', async () => {
    const r = await bm(ts, p.admin, 'GET', '/v1/drivers/redfish', undefined, '1.78');
    expect(r.body.enabled_console_interfaces).toEqual(['no-console', 'redfish-serial']);
    expect(r.body.default_console_interface).toBe('no-console');
  });

  it('fake-hardware: the fake console echoes for the owner; the lessee is read-only', async () => {
    const n = await createNode(ts, p, { name: `cs-${++seq}` });
    expect((await bm(ts, p.lessee, 'PUT', `/v1/nodes/${n.uuid}/states/console`, { enabled: true })).status).toBe(202);
    const ownerTok = (await call(ts, p.owner, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: n.uuid })).body;
    const o = connect(ownerTok.access_url);
    await o.waitFor(/fake-hardware serial console of node/);
    o.send('hi\r');
    await o.waitFor(/hi\r\n/);
    o.close();
    const lesseeTok = (await call(ts, p.lessee, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: n.uuid })).body;
    const l = connect(lesseeTok.access_url);
    await l.waitFor(/fake-hardware serial console/);
    l.send('nope\r');
    await l.waitFor(/input ignored/);
    expect(l.text()).not.toContain('nope');
    l.close();
    expect((await closedWithin(l)).code).toBeLessThan(4000);
  });
});

describe('esi:node:console:write is policy-configurable', () => {
  let ts2: TestServer;
  let p2: Personas;
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-console-policy-'));
    const file = path.join(dir, 'policy.yaml');
    fs.writeFileSync(file, `"esi:node:console:write": "rule:is_admin or rule:is_node_owner or rule:is_node_lessee"\n`);
    ts2 = await startTestServer({ env: { ESI_POLICY_FILE: file } });
    p2 = await createPersonas(ts2);
  });
  afterAll(async () => {
    await ts2?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('with the rule opened to lessees, the lessee types and sees the echo', async () => {
    const n = await createNode(ts2, p2, { name: 'pol-1' });
    expect((await bm(ts2, p2.lessee, 'PUT', `/v1/nodes/${n.uuid}/states/console`, { enabled: true })).status).toBe(202);
    const tok = (await call(ts2, p2.lessee, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: n.uuid })).body;
    expect(tok.token).toMatch(/^rw\./);
    const s = connect(tok.access_url);
    await s.waitFor(/fake-hardware serial console/);
    s.send('lessee-may-type\r');
    await s.waitFor(/lessee-may-type\r\n/);
    expect(s.text()).not.toContain('input ignored');
    s.close();
  });
});
