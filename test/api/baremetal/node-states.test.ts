/**
 * Node state requests for every persona: states, power, provision, console and maintenance
 * (https://docs.openstack.org/api-ref/baremetal/#change-node-provision-state,
 * https://docs.openstack.org/ironic/latest/user/states.html). The conductor is not running here, so states stay at
 * their transient/target values: exactly what the API must record before answering 202.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, createNode, expectError, forceNode } from './helpers.ts';

let ts: TestServer;
let p: Personas;
const notified: string[] = [];

beforeAll(async () => {
  // These tests check the intent the API records; no conductor may act on it meanwhile.
  ts = await startTestServer({ env: { ESI_CONDUCTOR_WORKERS: '0' } });
  p = await createPersonas(ts);
  ts.server.services.inventory.conductorRelay.attach({ notifyNode: (uuid) => notified.push(uuid) });
});
afterAll(async () => ts?.close());
beforeEach(() => {
  notified.length = 0;
});

let seq = 0;
async function fresh(body: Record<string, unknown> = {}): Promise<any> {
  return createNode(ts, p, { name: `node-${++seq}`, ...body });
}

describe('GET /v1/nodes/{id}/states', () => {
  it('admin, owner and lessee read the states; another project 404; anonymous 401', async () => {
    const n = await fresh();
    for (const who of [p.admin, p.owner, p.lessee]) {
      const r = await bm(ts, who, 'GET', `/v1/nodes/${n.uuid}/states`);
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(
        [
          'boot_mode',
          'console_enabled',
          'last_error',
          'power_state',
          'provision_state',
          'provision_updated_at',
          'raid_config',
          'secure_boot',
          'target_power_state',
          'target_provision_state',
          'target_raid_config',
        ].sort(),
      );
    }
    expect(Object.keys((await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}/states`, undefined, '1.11')).body)).not.toContain('boot_mode');
    expectError(await bm(ts, p.other, 'GET', `/v1/nodes/${n.uuid}/states`), 404);
    expectError(await bm(ts, p.anonymous, 'GET', `/v1/nodes/${n.uuid}/states`), 401);
  });
});

describe('PUT /v1/nodes/{id}/states/power', () => {
  it('admin, owner and lessee request power changes (202, target set, conductor woken)', async () => {
    for (const [who, target] of [
      [p.admin, 'power on'],
      [p.owner, 'power off'],
      [p.lessee, 'rebooting'],
    ] as const) {
      const n = await fresh();
      const r = await bm(ts, who, 'PUT', `/v1/nodes/${n.uuid}/states/power`, { target });
      expect(r.status, r.text).toBe(202);
      expect(r.text).toBe('');
      expect(r.headers.get('content-type')).toBeNull();
      expect(r.headers.get('location')).toBe(`${ts.url}/baremetal/v1/nodes/${n.uuid}/states`);
      const s = (await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}/states`)).body;
      expect(s.target_power_state).toBe(target);
      expect(notified).toContain(n.uuid);
    }
  });

  it('another project 404, anonymous 401, nothing recorded', async () => {
    const n = await fresh();
    expectError(await bm(ts, p.other, 'PUT', `/v1/nodes/${n.uuid}/states/power`, { target: 'power on' }), 404);
    expectError(await bm(ts, p.anonymous, 'PUT', `/v1/nodes/${n.uuid}/states/power`, { target: 'power on' }), 401);
    expect((await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}/states`)).body.target_power_state).toBeNull();
    expect(notified).toEqual([]);
  });

  it('applies Ironic rules: bad target 400, soft actions need 1.27, cleaning 400, pending or locked 409', async () => {
    const n = await fresh();
    const url = `/v1/nodes/${n.uuid}/states/power`;
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'explode' }), 400, /explode/);
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'soft power off' }, '1.26'), 406);
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'power on', timeout: 10 }, '1.26'), 406);
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'power on', timeout: 0 }), 400, /positive/);
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'power on', timeout: 'soon' }), 400);
    expectError(await bm(ts, p.admin, 'PUT', url, {}), 400, /target/);
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'power on', extra: 1 }), 400, /unexpected/);
    expect((await bm(ts, p.admin, 'PUT', url, { target: 'soft rebooting', timeout: 30 })).status).toBe(202);
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'power off' }), 409, /in progress/);

    const c = await fresh();
    await forceNode(ts, c.uuid, { provision_state: 'cleaning', target_provision_state: 'available' });
    expectError(await bm(ts, p.admin, 'PUT', `/v1/nodes/${c.uuid}/states/power`, { target: 'power on' }), 400, /cleaning/);

    const l = await fresh();
    expect(await ts.server.services.inventory.nodeRepository.reserve(l.uuid, 'conductor-x')).toBe(true);
    expectError(
      await bm(ts, p.admin, 'PUT', `/v1/nodes/${l.uuid}/states/power`, { target: 'power on' }),
      409,
      /locked by host conductor-x/,
    );
    await ts.server.services.inventory.nodeRepository.release(l.uuid, 'conductor-x');
    expect((await bm(ts, p.admin, 'PUT', `/v1/nodes/${l.uuid}/states/power`, { target: 'power on' })).status).toBe(202);
  });

  it('validates the driver_info of a redfish node (400 without redfish_address)', async () => {
    const r = await fresh({ driver: 'redfish' });
    expectError(await bm(ts, p.admin, 'PUT', `/v1/nodes/${r.uuid}/states/power`, { target: 'power on' }), 400, /redfish_address/);
  });
});

describe('PUT /v1/nodes/{id}/states/provision', () => {
  it('applies the FSM event before 202: manage from enroll → verifying [manageable]', async () => {
    for (const who of [p.admin, p.owner, p.lessee]) {
      const n = await fresh();
      const r = await bm(ts, who, 'PUT', `/v1/nodes/${n.uuid}/states/provision`, { target: 'manage' });
      expect(r.status, r.text).toBe(202);
      expect(r.headers.get('location')).toMatch(/\/states$/);
      const s = (await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}`)).body;
      expect([s.provision_state, s.target_provision_state]).toEqual(['verifying', 'manageable']);
      expect(s.provision_updated_at).not.toBeNull();
      expect(notified).toContain(n.uuid);
    }
  });

  it('another project 404, anonymous 401', async () => {
    const n = await fresh();
    expectError(await bm(ts, p.other, 'PUT', `/v1/nodes/${n.uuid}/states/provision`, { target: 'manage' }), 404);
    expectError(await bm(ts, p.anonymous, 'PUT', `/v1/nodes/${n.uuid}/states/provision`, { target: 'manage' }), 401);
    expect((await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}`)).body.provision_state).toBe('enroll');
  });

  it('walks provide, active (with configdrive), deleted, and stable manage', async () => {
    const n = await fresh();
    const url = `/v1/nodes/${n.uuid}/states/provision`;
    const state = async () => {
      const b = (await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}`)).body;
      return [b.provision_state, b.target_provision_state];
    };
    await forceNode(ts, n.uuid, { provision_state: 'manageable', target_provision_state: null });
    expect((await bm(ts, p.lessee, 'PUT', url, { target: 'provide' })).status).toBe(202);
    expect(await state()).toEqual(['cleaning', 'available']);
    await forceNode(ts, n.uuid, { provision_state: 'available', target_provision_state: null });
    expect((await bm(ts, p.admin, 'PUT', url, { target: 'manage' })).status).toBe(202);
    expect(await state()).toEqual(['manageable', null]);
    await forceNode(ts, n.uuid, { provision_state: 'available' });
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'active', configdrive: '***not base64***' }), 400, /configdrive/);
    expect((await bm(ts, p.lessee, 'PUT', url, { target: 'active', configdrive: { user_data: '#!/bin/sh' } })).status).toBe(202);
    const after = (await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}`)).body;
    expect([after.provision_state, after.target_provision_state]).toEqual(['deploying', 'active']);
    expect(after.instance_info.configdrive).toBe('******');
    await forceNode(ts, n.uuid, { provision_state: 'active', target_provision_state: null });
    expect((await bm(ts, p.owner, 'PUT', url, { target: 'deleted' })).status).toBe(202);
    expect(await state()).toEqual(['deleting', 'available']);
  });

  it('refuses impossible transitions (400), locked nodes (409) and maintenance deploys (400)', async () => {
    const n = await fresh();
    const url = `/v1/nodes/${n.uuid}/states/provision`;
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'provide' }), 400, /provide.*enroll/);
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'levitate' }), 400, /could not be understood/);
    expectError(await bm(ts, p.admin, 'PUT', url, {}), 400, /target/);
    await forceNode(ts, n.uuid, { provision_state: 'deploying', target_provision_state: 'active', reservation: 'c1' });
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'deleted' }), 409, /locked/);
    await forceNode(ts, n.uuid, { provision_state: 'available', target_provision_state: null, reservation: null, maintenance: true });
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'active' }), 400, /maintenance/);
  });

  it('checks verb parameters', async () => {
    const n = await fresh();
    const url = `/v1/nodes/${n.uuid}/states/provision`;
    await forceNode(ts, n.uuid, { provision_state: 'manageable' });
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'clean' }), 400, /clean_steps/);
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'clean', clean_steps: [{ interface: 'bogus', step: 'x' }] }), 400, /interface/);
    expectError(
      await bm(ts, p.admin, 'PUT', url, { target: 'provide', clean_steps: [{ interface: 'deploy', step: 'erase_devices' }] }),
      400,
      /only valid/,
    );
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'manage', configdrive: 'abc' }), 400, /config drive/);
    expect(
      (await bm(ts, p.admin, 'PUT', url, { target: 'clean', clean_steps: [{ interface: 'deploy', step: 'erase_devices_metadata' }] }))
        .status,
    ).toBe(202);
    const s = (await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}`)).body;
    expect([s.provision_state, s.target_provision_state]).toEqual(['cleaning', 'manageable']);
    expect(s.driver_internal_info.clean_steps).toEqual([{ interface: 'deploy', step: 'erase_devices_metadata' }]);

    const r = await fresh();
    await forceNode(ts, r.uuid, { provision_state: 'active' });
    expectError(await bm(ts, p.admin, 'PUT', `/v1/nodes/${r.uuid}/states/provision`, { target: 'rescue' }), 400, /rescue_password/);
    expect((await bm(ts, p.admin, 'PUT', `/v1/nodes/${r.uuid}/states/provision`, { target: 'rescue', rescue_password: 'pw' })).status).toBe(
      202,
    );
    expect((await bm(ts, p.admin, 'GET', `/v1/nodes/${r.uuid}`)).body.instance_info.rescue_password).toBe('******');
  });

  it('gates verbs by microversion (406)', async () => {
    const n = await fresh();
    const url = `/v1/nodes/${n.uuid}/states/provision`;
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'manage' }, null), 406);
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'manage' }, '1.3'), 406);
    await forceNode(ts, n.uuid, { provision_state: 'available' });
    expectError(await bm(ts, p.admin, 'PUT', url, { target: 'deploy' }, '1.72'), 406);
    expect((await bm(ts, p.admin, 'PUT', url, { target: 'deploy' }, '1.73')).status).toBe(202);
  });

  it('abort from a wait state', async () => {
    const n = await fresh();
    await forceNode(ts, n.uuid, { provision_state: 'clean wait', target_provision_state: 'available' });
    expect((await bm(ts, p.admin, 'PUT', `/v1/nodes/${n.uuid}/states/provision`, { target: 'abort' })).status).toBe(202);
    expect((await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}`)).body.provision_state).toBe('clean failed');
  });
});

describe('console and maintenance', () => {
  it('console: admin, owner, lessee get and set (202); another project 404; anonymous 401', async () => {
    const n = await fresh();
    for (const who of [p.admin, p.owner, p.lessee]) {
      expect((await bm(ts, who, 'GET', `/v1/nodes/${n.uuid}/states/console`)).body).toEqual({ console_enabled: false, console_info: null });
    }
    const r = await bm(ts, p.lessee, 'PUT', `/v1/nodes/${n.uuid}/states/console`, { enabled: true });
    expect(r.status).toBe(202);
    expect(r.headers.get('location')).toMatch(/\/states\/console$/);
    expect((await bm(ts, p.owner, 'GET', `/v1/nodes/states/console/${n.uuid}`)).body.console_enabled).toBe(true);
    expectError(await bm(ts, p.other, 'GET', `/v1/nodes/${n.uuid}/states/console`), 404);
    expectError(await bm(ts, p.other, 'PUT', `/v1/nodes/${n.uuid}/states/console`, { enabled: false }), 404);
    expectError(await bm(ts, p.anonymous, 'PUT', `/v1/nodes/${n.uuid}/states/console`, { enabled: false }), 401);
    expectError(await bm(ts, p.admin, 'PUT', `/v1/nodes/${n.uuid}/states/console`, { enabled: 'sometimes' }), 400);
    expectError(await bm(ts, p.admin, 'PUT', `/v1/nodes/${n.uuid}/states/console`, {}), 400);
  });

  it('maintenance: set with a reason and clear; another project 404; anonymous 401', async () => {
    const n = await fresh();
    for (const who of [p.admin, p.owner, p.lessee]) {
      expect((await bm(ts, who, 'PUT', `/v1/nodes/${n.uuid}/maintenance`, { reason: `by ${who.name}` })).status).toBe(202);
      const b = (await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}`)).body;
      expect([b.maintenance, b.maintenance_reason]).toEqual([true, `by ${who.name}`]);
      const d = await bm(ts, who, 'DELETE', `/v1/nodes/${n.uuid}/maintenance`);
      expect(d.status).toBe(202);
      const c = (await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}`)).body;
      expect([c.maintenance, c.maintenance_reason]).toEqual([false, null]);
    }
    expect((await bm(ts, p.admin, 'PUT', `/v1/nodes/${n.uuid}/maintenance`)).status).toBe(202);
    expectError(await bm(ts, p.other, 'PUT', `/v1/nodes/${n.uuid}/maintenance`, { reason: 'x' }), 404);
    expectError(await bm(ts, p.other, 'DELETE', `/v1/nodes/${n.uuid}/maintenance`), 404);
    expectError(await bm(ts, p.anonymous, 'PUT', `/v1/nodes/${n.uuid}/maintenance`, { reason: 'x' }), 401);
    expectError(await bm(ts, p.admin, 'PUT', `/v1/nodes/${n.uuid}/maintenance`, { reason: 5 }), 400);
    expectError(await bm(ts, p.admin, 'PUT', `/v1/nodes/${n.uuid}/maintenance`, { why: 'x' }), 400);
  });
});
