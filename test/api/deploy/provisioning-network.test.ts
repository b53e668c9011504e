/**
 * The provisioning network (`ESI_PROVISIONING_NETWORK`, Ironic `[neutron] provisioning_network`):
 * while the deploy agent runs on a node, its cabled PXE NIC's switch port carries the
 * provisioning network's VLAN, whatever tenant VIF it has; before the instance boots, the port
 * goes back to the tenant's network. Observed on the `fake` switch driver's applied history.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeSwitchHistory, fakeSwitchState } from '../../../src/drivers/switch/fake.ts';
import { osImage } from '../../helpers/os-image.ts';
import { call } from '../../helpers/harness.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { bm, provision, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { agentNode, cableToFakeSwitch, startDeployEnv, uploadImage } from './support.ts';

const LONG = 90_000;
const PROVISIONING_VLAN = 3900;

let env: ConductorEnv;
let node: { uuid: string };
let switchUuid: string;
let tenantVlan: number;

beforeAll(async () => {
  env = await startDeployEnv(1, { env: { ESI_PROVISIONING_NETWORK: 'provnet' } });
  const prov = await call(env.ts, env.p.admin, 'POST', '/network/v2.0/networks', {
    network: {
      name: 'provnet',
      'provider:network_type': 'vlan',
      'provider:physical_network': 'physnet1',
      'provider:segmentation_id': PROVISIONING_VLAN,
    },
  });
  expect(prov.status, prov.text).toBe(201);
  // Automated cleaning off for the set-up: the node is cabled after `provide`.
  ({ node } = await agentNode(env, 'node-0', { name: 'B', automated_clean: false }));
  await waitNode(env, node.uuid, (n) => n.provision_state === 'available' && n.reservation === null, LONG);
  await cableToFakeSwitch(env, node.uuid);
  switchUuid = (await call(env.ts, env.p.admin, 'GET', '/network/v2.0/switches/tor1')).body.switch.id;
  const lnet = (await call(env.ts, env.p.lessee, 'GET', '/network/v2.0/networks?name=lnet')).body.networks[0];
  tenantVlan = (await call(env.ts, env.p.admin, 'GET', `/network/v2.0/networks/${lnet.id}`)).body.network['provider:segmentation_id'];
  const port = await call(env.ts, env.p.lessee, 'POST', '/network/v2.0/ports', { port: { network_id: lnet.id, name: 'b-nic' } });
  expect(port.status, port.text).toBe(201);
  const vif = await bm(env.ts, env.p.lessee, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: port.body.port.id });
  expect(vif.status, vif.text).toBe(204);
  await waitFor(
    async () => fakeSwitchState(switchUuid).get('Ethernet1/1'),
    (c) => c?.mode === 'access' && c.vlan === tenantVlan,
    { timeoutMs: 10_000, what: 'the tenant VLAN on the switch port' },
  );
}, LONG);

afterAll(async () => {
  await env?.close();
});

/** The configurations the switch applied to the node's port since `from`. */
function appliedSince(from: number): string[] {
  return fakeSwitchHistory(switchUuid)
    .slice(from)
    .filter((h) => h.port === 'Ethernet1/1')
    .map((h) => (h.config.mode === 'access' ? `access ${h.config.vlan}` : h.config.mode));
}

describe('the provisioning network', () => {
  it(
    'a deploy moves the NIC to the provisioning VLAN while the agent runs and back to the tenant VLAN before the instance boots; cleaning does the same',
    async () => {
      const image = await uploadImage(env, osImage('prov-os', 8, 'qcow2'), 'prov-os', { as: env.p.lessee, diskFormat: 'qcow2' });
      expect(
        (
          await bm(env.ts, env.p.lessee, 'PATCH', `/v1/nodes/${node.uuid}`, [
            { op: 'add', path: '/instance_info/image_source', value: image },
          ])
        ).status,
      ).toBe(200);
      const before = fakeSwitchHistory(switchUuid).length;
      await provision(env, node.uuid, 'active', {}, env.p.lessee);
      const active = await waitNode(env, node.uuid, (n) => n.provision_state === 'active' || n.provision_state === 'deploy failed', LONG);
      expect(active.provision_state, active.last_error).toBe('active');
      const deploy = appliedSince(before);
      expect(deploy).toEqual([`access ${PROVISIONING_VLAN}`, `access ${tenantVlan}`]);
      expect(fakeSwitchState(switchUuid).get('Ethernet1/1')).toEqual({ mode: 'access', vlan: tenantVlan });

      // Undeploy: automated cleaning boots the agent again, on the provisioning network.
      expect(
        (await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${node.uuid}`, [{ op: 'replace', path: '/automated_clean', value: true }]))
          .status,
      ).toBe(200);
      const beforeClean = fakeSwitchHistory(switchUuid).length;
      await provision(env, node.uuid, 'deleted', {}, env.p.lessee);
      const available = await waitNode(env, node.uuid, (n) => n.provision_state === 'available' && n.reservation === null, LONG);
      expect(available.last_error).toBeNull();
      await expect
        .poll(() => appliedSince(beforeClean), { timeout: 10_000 })
        .toEqual([`access ${PROVISIONING_VLAN}`, `access ${tenantVlan}`]);
    },
    LONG * 2,
  );

  it('the switch port view (admins) shows the VLAN the node state asks for; other personas get 404', async () => {
    const view = await call(env.ts, env.p.admin, 'GET', '/network/v2.0/switches/tor1/ports');
    expect(view.status, view.text).toBe(200);
    const port = (view.body.switch_ports as Array<{ port_id: string; desired: unknown; node_uuid: string }>).find(
      (p) => p.port_id === 'Ethernet1/1',
    );
    expect(port).toMatchObject({ node_uuid: node.uuid, desired: { mode: 'access', vlan: tenantVlan } });
    for (const who of [env.p.owner, env.p.lessee, env.p.other]) {
      expect((await call(env.ts, who, 'GET', '/network/v2.0/switches/tor1/ports')).status).toBe(404);
    }
    expect((await call(env.ts, env.p.anonymous, 'GET', '/network/v2.0/switches/tor1/ports')).status).toBe(401);
  });
});
