/**
 * Fresh-object factories of the floating IP rows (`matrix/network-neutron.yaml`), merged into
 * `FACTORIES` by ./factories.ts: floating IPs of `l1` on an admin's external network, with a
 * port of `l1` behind a router of `l1` to associate or forward to, and with a port forwarding.
 */
import type { PersonaKey } from './matrix.ts';
import { makeNet } from './makers.ts';
import { must, SEES, type World } from './world.ts';

/** Placeholder values of one fresh object. */
type FreshValues = Record<string, string>;

const L1: readonly PersonaKey[] = ['admin', 'l1'];

/** An admin's external network with a subnet, and a network of `l1` behind a router of `l1` joined to it. */
async function routedL1(w: World): Promise<{ ext: string; port: string }> {
  const n = w.next();
  const ext = await makeNet(w, 'admin', 'networks', 'network', { name: `pm-f${n}-fipext`, 'router:external': true });
  await makeNet(w, 'admin', 'subnets', 'subnet', { network_id: ext.id, cidr: '198.18.0.0/24', enable_dhcp: false });
  w.track(`fresh:pm-f${n}-fipext`, ext.id, `pm-f${n}-fipext`, SEES.all);
  const net = await makeNet(w, 'l1', 'networks', 'network', { name: `pm-f${n}-fipnet` });
  w.track(`fresh:pm-f${n}-fipnet`, net.id, `pm-f${n}-fipnet`, L1);
  const sub = await makeNet(w, 'l1', 'subnets', 'subnet', { network_id: net.id, cidr: '10.201.0.0/24', name: `pm-f${n}-fipsub` });
  w.track(`fresh:pm-f${n}-fipsub`, sub.id, `pm-f${n}-fipsub`, L1);
  const router = await makeNet(w, 'l1', 'routers', 'router', { name: `pm-f${n}-fiprouter`, external_gateway_info: { network_id: ext.id } });
  w.track(`fresh:pm-f${n}-fiprouter`, router.id, `pm-f${n}-fiprouter`, L1);
  await must(w, w.personas.l1, 'PUT', `/network/v2.0/routers/${router.id}/add_router_interface`, 200, { subnet_id: sub.id });
  const port = await makeNet(w, 'l1', 'ports', 'port', { network_id: net.id, name: `pm-f${n}-fipport` });
  w.track(`fresh:pm-f${n}-fipport`, port.id, `pm-f${n}-fipport`, L1);
  return { ext: ext.id, port: port.id };
}

/** A floating IP of `l1` (no name: tracked by id). */
async function fipOfL1(w: World, ext: string, attrs: Record<string, unknown> = {}): Promise<string> {
  const f = await makeNet(w, 'l1', 'floatingips', 'floatingip', { floating_network_id: ext, ...attrs });
  w.track(`fresh:fip-${f.id}`, f.id, null, L1);
  return f.id;
}

/** The floating IP factories by name. */
export const FIP_FACTORIES: Readonly<Record<string, (w: World) => Promise<FreshValues>>> = {
  /** A floating IP of `l1`, not associated; `fresh.port` is a port of `l1` behind a router it can reach. */
  async fip_l1(w) {
    const { ext, port } = await routedL1(w);
    return { fresh: await fipOfL1(w, ext), 'fresh.port': port };
  },
  /** A floating IP of `l1` associated with a port of `l1` (`fresh.port`). */
  async fip_l1_assoc(w) {
    const { ext, port } = await routedL1(w);
    return { fresh: await fipOfL1(w, ext, { port_id: port }), 'fresh.port': port };
  },
  /** A floating IP of `l1` with a port forwarding (`fresh.pf`) to a port of `l1` (`fresh.port`). */
  async fip_l1_pf(w) {
    const { ext, port } = await routedL1(w);
    const fip = await fipOfL1(w, ext);
    const r = await must(w, w.personas.l1, 'POST', `/network/v2.0/floatingips/${fip}/port_forwardings`, 201, {
      port_forwarding: { protocol: 'tcp', internal_port_id: port, internal_port: 22, external_port: 2222 },
    });
    w.track(`fresh:pf-${r.body.port_forwarding.id}`, r.body.port_forwarding.id, null, L1);
    return { fresh: fip, 'fresh.pf': r.body.port_forwarding.id, 'fresh.port': port };
  },
};
