/**
 * The documented answers of the network API beyond the core collections
 * (src/api/network/response-schemas-extra.ts) compared with real ones: RBAC policies, port
 * forwardings, trunk sub-ports, router interfaces, extensions, quotas, and esi's node networks,
 * esi trunks, switches and switch ports, each read as the personas that may see them (admin,
 * owner, lessee, another project) and each create and update checked, with TypeBox's
 * `Value.Check` against strict schemas (see openapi-responses.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Persona } from '../../helpers/harness.ts';
import { cabledNode, create, createSwitch, net, routedNet, startL3Env, type NetEnv } from '../network-l3/support.ts';
import { expectValid } from './openapi-support.ts';
import {
  EsiTrunkCollection,
  EsiTrunkResponse,
  ExtensionCollection,
  ExtensionResponse,
  NodeNetworkCollection,
  NodeNetworkDetachResponse,
  NodeNetworkResponse,
  PORT_FORWARDING_RESPONSES,
  QuotaCollection,
  QuotaDetailsResponse,
  QuotaProjectResponse,
  QuotaResponse,
  QuotaTenantResponse,
  RBAC_RESPONSES,
  RouterInterfaceInfo,
  SubPortsResponse,
  SwitchCollection,
  SwitchPortCollection,
  SwitchPortResponse,
  SwitchPortRowCollection,
  SwitchResponse,
  SwitchResyncResponse,
  TrunkUnwrapped,
} from '../../../src/api/network/response-schemas-extra.ts';

let env: NetEnv;
let sw = '';

/** An answer that must succeed, as parsed JSON. */
async function ok(who: Persona, method: string, path: string, body?: unknown): Promise<any> {
  const r = await net(env, who, method, path, body);
  expect(r.status, `${who.name} ${method} ${path}: ${r.text}`).toBeLessThan(300);
  return r.body;
}

beforeAll(async () => {
  env = await startL3Env();
  sw = (await createSwitch(env, 'doc-sw', 'fake', { delay_ms: 0 })).id;
  await cabledNode(env, 'doc-n1', 'doc-sw', ['52:54:00:00:51:00', '52:54:00:00:51:01', '52:54:00:00:51:02']);
});
afterAll(async () => env?.ts.close());

describe('documented network answers match real ones', () => {
  it('RBAC policies, extensions and quotas, as admin, owner, lessee and another project', async () => {
    const { admin, owner, lessee, other } = env.p;
    const n = await create(env, owner, 'networks', 'network', { name: 'doc-shared' });
    const rbac = await ok(owner, 'POST', '/rbac-policies', {
      rbac_policy: { object_type: 'network', object_id: n.id, action: 'access_as_shared', target_tenant: lessee.projectId },
    });
    expectValid(RBAC_RESPONSES.one, rbac, 'POST /rbac-policies');
    const json = await ok(admin, 'POST', '/rbac-policies.json', {
      rbac_policy: { object_type: 'network', object_id: n.id, action: 'access_as_shared', target_tenant: '*' },
    });
    expectValid(RBAC_RESPONSES.one, json, 'POST /rbac-policies.json');
    const updated = await ok(owner, 'PUT', `/rbac-policies/${rbac.rbac_policy.id}`, { rbac_policy: { target_tenant: other.projectId } });
    expectValid(RBAC_RESPONSES.one, updated, 'PUT /rbac-policies/{id}');
    for (const who of [admin, owner, lessee, other]) {
      expectValid(RBAC_RESPONSES.list, await ok(who, 'GET', '/rbac-policies'), `${who.name} rbac-policies`);
      expectValid(RBAC_RESPONSES.list, await ok(who, 'GET', '/rbac-policies.json?limit=1'), `${who.name} rbac-policies.json`);
      expectValid(ExtensionCollection, await ok(who, 'GET', '/extensions'), `${who.name} extensions`);
      expectValid(ExtensionResponse, await ok(who, 'GET', '/extensions/trunk'), `${who.name} extension`);
      expectValid(QuotaProjectResponse, await ok(who, 'GET', '/quotas/project'), `${who.name} quotas/project`);
      expectValid(QuotaTenantResponse, await ok(who, 'GET', '/quotas/tenant'), `${who.name} quotas/tenant`);
      expectValid(QuotaResponse, await ok(who, 'GET', `/quotas/${who.projectId}`), `${who.name} quota`);
      expectValid(QuotaResponse, await ok(who, 'GET', `/quotas/${who.projectId}/default`), `${who.name} quota default`);
      expectValid(QuotaDetailsResponse, await ok(who, 'GET', `/quotas/${who.projectId}/details`), `${who.name} quota details`);
    }
    for (const who of [owner, admin])
      expectValid(RBAC_RESPONSES.one, await ok(who, 'GET', `/rbac-policies/${rbac.rbac_policy.id}`), `${who.name} rbac policy`);
    expectValid(QuotaResponse, await ok(admin, 'PUT', `/quotas/${owner.projectId}`, { quota: { router: 5 } }), 'PUT /quotas/{id}');
    const list = await ok(admin, 'GET', '/quotas');
    expectValid(QuotaCollection, list, 'GET /quotas');
    expect(JSON.stringify(list)).toContain(owner.projectId);
  });

  it('trunk sub-ports, router interfaces and port forwardings, as their owner, admin and another project', async () => {
    const { admin, lessee, other } = env.p;
    const rn = await routedNet(env, 'doc', '198.51.100.0/24', '10.71.0.0/24');
    const parent = await create(env, lessee, 'ports', 'port', { network_id: rn.network.id });
    const child = await create(env, lessee, 'ports', 'port', { network_id: rn.network.id });
    const trunk = await create(env, lessee, 'trunks', 'trunk', { port_id: parent.id });
    const sub = { port_id: child.id, segmentation_type: 'vlan', segmentation_id: 300 };
    expectValid(TrunkUnwrapped, await ok(lessee, 'PUT', `/trunks/${trunk.id}/add_subports`, { sub_ports: [sub] }), 'add_subports');
    for (const who of [lessee, admin])
      expectValid(SubPortsResponse, await ok(who, 'GET', `/trunks/${trunk.id}/get_subports`), `${who.name} get_subports`);
    const removed = await ok(lessee, 'PUT', `/trunks/${trunk.id}/remove_subports`, { sub_ports: [{ port_id: child.id }] });
    expectValid(TrunkUnwrapped, removed, 'remove_subports');

    const { subnet } = await (async () => {
      const network = await create(env, lessee, 'networks', 'network', { name: 'doc-if' });
      return { subnet: await create(env, lessee, 'subnets', 'subnet', { network_id: network.id, cidr: '10.72.0.0/24' }) };
    })();
    const added = await ok(lessee, 'PUT', `/routers/${rn.router.id}/add_router_interface`, { subnet_id: subnet.id });
    expectValid(RouterInterfaceInfo, added, 'add_router_interface');
    const gone = await ok(lessee, 'PUT', `/routers/${rn.router.id}/remove_router_interface`, { subnet_id: subnet.id });
    expectValid(RouterInterfaceInfo, gone, 'remove_router_interface');

    const port = await create(env, lessee, 'ports', 'port', { network_id: rn.network.id });
    const fip = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: rn.ext.id });
    const pfs = `/floatingips/${fip.id}/port_forwardings`;
    const ip = port.fixed_ips[0].ip_address;
    const one = await ok(lessee, 'POST', pfs, {
      port_forwarding: { protocol: 'tcp', internal_port_id: port.id, internal_ip_address: ip, internal_port: 22, external_port: 2222 },
    });
    expectValid(PORT_FORWARDING_RESPONSES.one, one, 'POST port_forwardings');
    const range = await ok(lessee, 'POST', pfs, {
      port_forwarding: {
        protocol: 'udp',
        internal_port_id: port.id,
        internal_ip_address: ip,
        internal_port_range: '5000:5010',
        external_port_range: '6000:6010',
      },
    });
    expectValid(PORT_FORWARDING_RESPONSES.one, range, 'POST port_forwardings (a range)');
    const pf = `${pfs}/${one.port_forwarding.id}`;
    expectValid(PORT_FORWARDING_RESPONSES.one, await ok(lessee, 'PUT', pf, { port_forwarding: { description: 'ssh' } }), 'PUT');
    for (const who of [lessee, admin]) {
      expectValid(PORT_FORWARDING_RESPONSES.list, await ok(who, 'GET', pfs), `${who.name} port_forwardings`);
      expectValid(PORT_FORWARDING_RESPONSES.list, await ok(who, 'GET', `${pfs}?limit=1`), `${who.name} a page`);
      expectValid(PORT_FORWARDING_RESPONSES.one, await ok(who, 'GET', pf), `${who.name} port_forwarding`);
    }
    expect((await net(env, other, 'GET', pfs)).status).toBe(404);
  });

  it('esi: node networks, esi trunks, switch ports and switches, as admin, owner and lessee', async () => {
    const { admin, owner, lessee } = env.p;
    const a = await create(env, lessee, 'networks', 'network', { name: 'doc-a' });
    await create(env, lessee, 'subnets', 'subnet', { network_id: a.id, cidr: '10.73.0.0/24' });
    const b = await create(env, lessee, 'networks', 'network', { name: 'doc-b' });
    const c = await create(env, lessee, 'networks', 'network', { name: 'doc-c' });
    const attached = await ok(lessee, 'POST', '/esi/node-networks', { node: 'doc-n1', network: 'doc-a' });
    expectValid(NodeNetworkResponse, attached, 'POST /esi/node-networks');
    const trunk = await ok(lessee, 'POST', '/esi/trunks', { name: 'doc-t', native_network: b.id, tagged_networks: [c.id] });
    expectValid(EsiTrunkResponse, trunk, 'POST /esi/trunks');
    expectValid(EsiTrunkResponse, await ok(lessee, 'POST', '/esi/trunks/doc-t/remove-networks', { tagged_networks: [c.id] }), 'remove');
    expectValid(EsiTrunkResponse, await ok(lessee, 'POST', '/esi/trunks/doc-t/add-networks', { tagged_networks: [c.id] }), 'add');
    expectValid(NodeNetworkResponse, await ok(lessee, 'POST', '/esi/node-networks', { node: 'doc-n1', trunk: 'doc-t' }), 'trunk');
    for (const who of [admin, owner, lessee]) {
      const rows = await ok(who, 'GET', '/esi/node-networks');
      expectValid(NodeNetworkCollection, rows, `${who.name} node-networks`);
      expect(JSON.stringify(rows), who.name).toContain('doc-n1');
      expectValid(NodeNetworkCollection, await ok(who, 'GET', '/esi/node-networks?node=doc-n1'), `${who.name} node-networks?node=`);
      expectValid(EsiTrunkCollection, await ok(who, 'GET', '/esi/trunks'), `${who.name} esi trunks`);
    }
    expectValid(SwitchPortRowCollection, await ok(admin, 'GET', '/esi/switch-ports?switch=doc-sw'), 'esi/switch-ports');
    const detached = await ok(lessee, 'POST', '/esi/node-networks/detach', { node: 'doc-n1', all: true });
    expectValid(NodeNetworkDetachResponse, detached, 'POST /esi/node-networks/detach');
    expect(detached.detached.length).toBe(2);
    expect((await net(env, lessee, 'DELETE', '/esi/trunks/doc-t')).status).toBe(204);

    expectValid(SwitchCollection, await ok(admin, 'GET', '/switches'), 'GET /switches');
    expectValid(SwitchResponse, await ok(admin, 'GET', `/switches/${sw}`), 'GET /switches/{id}');
    expectValid(SwitchResponse, await ok(admin, 'PUT', `/switches/${sw}`, { switch: { description: 'docs' } }), 'PUT /switches/{id}');
    const made = await ok(admin, 'POST', '/switches', { switch: { name: 'doc-sw2', switch_id: '02:00:00:00:09:09', driver: 'fake' } });
    expectValid(SwitchResponse, made, 'POST /switches');
    expectValid(SwitchResyncResponse, await ok(admin, 'POST', `/switches/${sw}/resync`), 'resync');
    const node = (await cabledNode(env, 'doc-n2', 'doc-sw2', [])).node;
    const reg = await ok(admin, 'POST', `/switches/${made.switch.id}/ports`, { switch_port: { port_id: 'Ethernet1/1', node: node.uuid } });
    expectValid(SwitchPortResponse, reg, 'POST /switches/{id}/ports');
    await env.ts.server.services.switchReconciler.idle();
    for (const id of [sw, made.switch.id]) expectValid(SwitchPortCollection, await ok(admin, 'GET', `/switches/${id}/ports`), 'ports');
  });

  it('esi bodies: the documented schemas refuse what esi refused, in the same words (400)', async () => {
    const { lessee, admin } = env.p;
    const cases: Array<[Persona, string, unknown, string]> = [
      [lessee, '/esi/node-networks', [], 'The request body must be a JSON object.'],
      [lessee, '/esi/node-networks', {}, 'node is required.'],
      [lessee, '/esi/node-networks', { network: 5 }, 'node is required.'],
      [lessee, '/esi/node-networks', { node: '' }, 'node is required.'],
      [lessee, '/esi/node-networks', { node: 5 }, 'node must be a string.'],
      [lessee, '/esi/node-networks', { node: 'doc-n1', network: 5 }, 'network must be a string.'],
      [lessee, '/esi/node-networks', { node: 'doc-n1', mac_address: ['x'] }, 'mac_address must be a string.'],
      [lessee, '/esi/node-networks/detach', { node: 'doc-n1', all: 'yes' }, 'all must be a boolean.'],
      [lessee, '/esi/node-networks/detach', { node: 'doc-n1', all: null }, 'all must be a boolean.'],
      [lessee, '/esi/node-networks/detach', { node: 'doc-n1', ports: 'p' }, 'ports must be a list of strings.'],
      [lessee, '/esi/trunks', { name: 5 }, 'name must be a string.'],
      [lessee, '/esi/trunks', ['trunk'], 'The request body must be a JSON object.'],
      [lessee, '/esi/trunks/doc-x/add-networks', { tagged_networks: [1] }, 'tagged_networks must be a list of strings.'],
      [admin, `/switches/${sw}/ports`, { switch_port: { node: 5 } }, 'node must be a string.'],
      [admin, `/switches/${sw}/ports`, { switch_port: { port_id: 'Ethernet1/7' } }, 'port_id and node are required.'],
      [admin, `/switches/${sw}/ports`, { switch_port: [] }, 'The request body must be a JSON object.'],
    ];
    for (const [who, path, body, message] of cases) {
      const r = await net(env, who, 'POST', path, body);
      expect([r.status, r.body?.NeutronError?.message], `${path} ${JSON.stringify(body)}`).toEqual([400, message]);
    }
  });

  it('switch bodies: the documented schemas refuse what the domain refused, in the same words (400)', async () => {
    const { admin } = env.p;
    const ok4 = { name: 'doc-sw9', switch_id: '02:00:00:00:09:10', driver: 'fake' };
    const cases: Array<[string, string, unknown, string]> = [
      [
        'POST',
        '/switches',
        { switch: { switch_id: 'x', driver: 'fake' } },
        "Failed to parse request. Required attribute 'name' not specified",
      ],
      [
        'POST',
        '/switches',
        { switch: { ...ok4, switch_id: null } },
        "Failed to parse request. Required attribute 'switch_id' not specified",
      ],
      ['POST', '/switches', { switch: { ...ok4, name: 5 } }, "Invalid input for name. Reason: '5' is not a valid string."],
      ['POST', '/switches', { switch: { ...ok4, flat_vlan: 'x' } }, "Invalid input for flat_vlan. Reason: 'x' is not an integer."],
      [
        'POST',
        '/switches',
        { switch: { ...ok4, flat_vlan: 5000 } },
        "Invalid input for flat_vlan. Reason: '5000' is not in range 1 through 4094.",
      ],
      ['POST', '/switches', { switch: { ...ok4, driver_info: [] } }, 'Invalid input for driver_info. Reason: must be an object.'],
      ['POST', '/switches', { switch: { ...ok4, id: 'x' } }, "Attribute 'id' not allowed in POST"],
      ['POST', '/switches', { switch: { ...ok4, colour: 'red' } }, "Unrecognized attribute(s) 'colour'"],
      ['PUT', `/switches/${sw}`, { switch: { driver: 'fake' } }, "Attribute 'driver' not allowed in PUT"],
      ['PUT', `/switches/${sw}`, { switch: { name: null } }, "Invalid input for name. Reason: 'null' is not a valid string."],
      ['PUT', `/switches/${sw}`, { switch: { driver_info: null } }, 'Invalid input for driver_info. Reason: must be an object.'],
      ['PUT', `/switches/${sw}`, { switch: { flat_vlan: true } }, "Invalid input for flat_vlan. Reason: 'true' is not an integer."],
    ];
    for (const [method, path, body, message] of cases) {
      const r = await net(env, admin, method, path, body);
      expect([r.status, r.body?.NeutronError?.message], `${method} ${path} ${JSON.stringify(body)}`).toEqual([400, message]);
    }
    // What the schema admits but the domain refuses is still the domain's word.
    const driver = await net(env, admin, 'POST', '/switches', { switch: { ...ok4, driver: 'nope' } });
    expect([driver.status, driver.body?.NeutronError?.message]).toEqual([
      400,
      expect.stringMatching(/^Invalid input for driver\. Reason: 'nope' is not in/),
    ]);
  });
});
