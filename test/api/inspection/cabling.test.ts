/**
 * The cabling an in-band inspection learns from LLDP counts only as what the caller that asked
 * for the inspection could have written (issue 14, "switch ports are owned";
 * src/conductor/inspect/cabling.ts): an owner's inspection leaves out switch ports of switches
 * esi manages that are not registered to the node (and lists them in the plugin data), an
 * admin's registers them to the node, as Ironic trusts LLDP for the operator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.ts';
import { bm, provision, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { expectedLlc, inspectableNode, portsOf, startInspectionEnv } from './support.ts';

let env: ConductorEnv;
const switches = new Map<string, any>();

beforeAll(async () => {
  env = await startInspectionEnv(2);
  // esi manages every switch the lab's NICs are cabled to.
  for (const system of ['node-0', 'node-1']) {
    for (const nic of env.lab.systems.get(system).machine.nics) {
      if (nic.lldp === null || switches.has(nic.lldp.systemName)) continue;
      const r = await call(env.ts, env.p.admin, 'POST', '/network/v2.0/switches', {
        switch: { name: nic.lldp.systemName, switch_id: nic.lldp.chassisId, driver: 'fake', driver_info: {} },
      });
      expect(r.status, r.text).toBe(201);
      switches.set(nic.lldp.systemName, r.body.switch);
    }
  }
}, 60_000);
afterAll(async () => {
  await env?.close();
});

async function inspectAs(system: string, who: 'owner' | 'admin'): Promise<any> {
  const node = await inspectableNode(env, system);
  await provision(env, node.uuid, 'inspect', {}, env.p[who]);
  return waitNode(
    env,
    node.uuid,
    (n) => (n.provision_state === 'manageable' || n.provision_state === 'inspect failed') && n.reservation === null,
    60_000,
  );
}

describe('LLDP cabling from an inspection', () => {
  it("an owner's inspection does not cable ports to unregistered switch ports; it lists them", async () => {
    const done = await inspectAs('node-0', 'owner');
    expect(done.provision_state, JSON.stringify(done.last_error)).toBe('manageable');
    const hw = env.lab.systems.get('node-0').machine;
    const cabledNics = hw.nics.filter((n) => n.lldp !== null);
    expect(cabledNics.length).toBeGreaterThan(0);
    const ports = await portsOf(env, done.uuid);
    for (const nic of cabledNics) expect(ports.find((p) => p.address === nic.mac).local_link_connection).toEqual({});
    const inv = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${done.uuid}/inventory`, undefined, '1.81');
    expect(inv.body.plugin_data.local_link_connection_refused.map((r: any) => r.address).sort()).toEqual(
      cabledNics.map((n) => n.mac).sort(),
    );
    for (const sw of switches.values()) {
      const regs = (await call(env.ts, env.p.admin, 'GET', `/network/v2.0/switches/${sw.id}/ports`)).body.switch_ports;
      expect(regs.filter((p: any) => p.registered_node_uuid === done.uuid)).toEqual([]);
    }
  }, 90_000);

  it("an admin's inspection cables them and registers each switch port to the node", async () => {
    const done = await inspectAs('node-1', 'admin');
    expect(done.provision_state, JSON.stringify(done.last_error)).toBe('manageable');
    const hw = env.lab.systems.get('node-1').machine;
    const ports = await portsOf(env, done.uuid);
    for (const nic of hw.nics) expect(ports.find((p) => p.address === nic.mac).local_link_connection).toEqual(expectedLlc(nic));
    for (const nic of hw.nics.filter((n) => n.lldp !== null)) {
      const sw = switches.get(nic.lldp!.systemName);
      const reg = (await call(env.ts, env.p.admin, 'GET', `/network/v2.0/switches/${sw.id}/ports`)).body.switch_ports.find(
        (p: any) => p.port_id === nic.lldp!.portId,
      );
      expect(reg).toMatchObject({ registered_node_uuid: done.uuid, baremetal_port_uuid: ports.find((p) => p.address === nic.mac).uuid });
    }
  }, 90_000);
});
