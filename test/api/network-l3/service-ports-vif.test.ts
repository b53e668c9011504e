/**
 * The ports esi's network node uses cannot become a node's VIF (issue 17, "bad input"): a
 * network's DHCP port, a router's interface and gateway ports and a floating IP's own port are
 * refused with 409 `PortInUse` to callers who may see them, and are unknown (400 `VifNotFound`)
 * to callers who may not; the refusal writes nothing (the port stays unbound, the node's NIC
 * free), and a plain port of the same network still attaches. Personas: admin, the node's
 * lessee (who owns the network and router), the node's owner, another project, anonymous.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bm,
  cabledNode,
  create,
  createSwitch,
  expectNeutronError,
  externalNet,
  net,
  portAsAdmin,
  startL3Env,
  tenantNet,
  type NetEnv,
} from './support.ts';

let env: NetEnv;
beforeAll(async () => {
  env = await startL3Env();
});
afterAll(async () => env?.ts.close());

/** Ironic's error body: `error_message` is a JSON string with `faultstring`. */
function faultOf(res: { body: any; text: string }): string {
  const raw = res.body?.error_message;
  return typeof raw === 'string' ? (JSON.parse(raw).faultstring as string) : res.text;
}

describe('service ports as VIFs', () => {
  it('DHCP, router and floating IP ports are refused as VIFs, writing nothing; a plain port attaches', async () => {
    const { admin, owner, lessee, other, anonymous } = env.p;
    await createSwitch(env, 'svc-tor');
    const { node, ports: nics } = await cabledNode(env, 'svc-node', 'svc-tor', ['52:54:00:5e:00:01']);
    const ext = await externalNet(env, 'svc-ext', '198.51.100.0/24');
    const { network, subnet } = await tenantNet(env, 'svc-net', '10.77.0.0/24', lessee);
    const router = await create(env, lessee, 'routers', 'router', { name: 'svc-r', external_gateway_info: { network_id: ext.network.id } });
    const added = await net(env, lessee, 'PUT', `/routers/${router.id}/add_router_interface`, { subnet_id: subnet.id });
    expect(added.status, added.text).toBe(200);
    const fip = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: ext.network.id });

    const all = (await net(env, admin, 'GET', '/ports')).body.ports as any[];
    const dhcp = all.find((p) => p.network_id === network.id && p.device_owner === 'network:dhcp');
    const iface = all.find((p) => p.device_id === router.id && p.device_owner === 'network:router_interface');
    const gateway = all.find((p) => p.device_id === router.id && p.device_owner === 'network:router_gateway');
    const fipPort = all.find((p) => p.device_id === fip.id && p.device_owner === 'network:floatingip');
    for (const p of [dhcp, iface, gateway, fipPort]) expect(p).toBeDefined();
    const lesseeSees = new Set(((await net(env, lessee, 'GET', '/ports')).body.ports as any[]).map((p) => p.id));

    const attach = (persona: any, id: string) => bm(env, persona, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id });
    for (const port of [dhcp, iface, gateway, fipPort]) {
      const before = await portAsAdmin(env, port.id);
      const r = await attach(admin, port.id);
      expect(r.status, `${port.device_owner}: ${r.text}`).toBe(409);
      expect(faultOf(r)).toMatch(/only a plain port can be a node's VIF/);
      const l = await attach(lessee, port.id);
      if (lesseeSees.has(port.id)) {
        expect(l.status, `${port.device_owner}: ${l.text}`).toBe(409);
        expect(faultOf(l)).toMatch(/DHCP port|port of router/);
      } else {
        expect(l.status, `${port.device_owner}: ${l.text}`).toBe(400);
        expect(faultOf(l)).toMatch(/could not be found/);
      }
      // The node's owner cannot see the lessee's ports: unknown to it.
      const o = await attach(owner, port.id);
      expect(o.status, o.text).toBe(400);
      // Another project cannot see the node; anonymous is not authenticated.
      expect((await attach(other, port.id)).status).toBe(404);
      expect((await attach(anonymous, port.id)).status).toBe(401);
      expect(await portAsAdmin(env, port.id)).toEqual(before);
    }
    // The lessee owns its DHCP port and router interface, so those were refused with the reason.
    expect(lesseeSees.has(dhcp.id) && lesseeSees.has(iface.id)).toBe(true);
    const nic = (await bm(env, admin, 'GET', `/v1/ports/${nics[0].uuid}`)).body;
    expect(nic.internal_info?.tenant_vif_port_id).toBeUndefined();

    // A plain port of the same network attaches.
    const plain = await create(env, lessee, 'ports', 'port', { network_id: network.id, name: 'svc-plain' });
    const ok = await attach(lessee, plain.id);
    expect(ok.status, ok.text).toBe(204);
    // The router interface, taken by port, cannot be a plain port again while attached.
    const again = await net(env, lessee, 'PUT', `/routers/${router.id}/add_router_interface`, { port_id: plain.id });
    expectNeutronError(again, 409, 'PortInUse');
  });
});
