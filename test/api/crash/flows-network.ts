/**
 * The crash suite's network flows: VIF attach and detach on a node cabled to the suite's fake
 * switch, and port forwarding creation on a floating IP of the suite's external network (behind
 * the suite's router). Each loops until the process is killed (flow-kit.ts).
 */
import { mac, node, ok, unique, type Flow } from './flow-kit.ts';

let externalPort = 2000;

/** The network flows, by name. */
export const NETWORK_FLOWS: Record<string, Flow> = {
  async 'VIF attach'(c) {
    const uuid = await node(c, 'vif');
    const name = unique(c, 'sp');
    c.mark('cable');
    const port = ok(
      await c.cloud.bm('POST', '/ports', {
        node_uuid: uuid,
        address: mac(),
        local_link_connection: { switch_id: '00:00:00:00:00:00', switch_info: c.net.switchName, port_id: name },
      }),
      'port',
    );
    for (let i = 0; i < 2; i++) {
      const np = ok(await c.cloud.call('POST', '/network/v2.0/ports', { port: { network_id: c.net.network, name } }), 'network port');
      c.mark('attach');
      ok(await c.cloud.bm('POST', `/nodes/${uuid}/vifs`, { id: np.port.id }), 'attach');
      c.mark('detach');
      ok(await c.cloud.bm('DELETE', `/nodes/${uuid}/vifs/${np.port.id}`), 'detach');
      c.mark('delete network port');
      ok(await c.cloud.call('DELETE', `/network/v2.0/ports/${np.port.id}`), 'delete network port');
    }
    c.mark('attach to keep');
    const kept = ok(await c.cloud.call('POST', '/network/v2.0/ports', { port: { network_id: c.net.network, name } }), 'network port');
    ok(await c.cloud.bm('POST', `/nodes/${uuid}/vifs`, { id: kept.port.id, port_uuid: port.uuid }), 'attach');
  },
  async 'port forward'(c) {
    c.mark('port');
    const np = ok(
      await c.cloud.call('POST', '/network/v2.0/ports', { port: { network_id: c.net.network, name: unique(c, 'pf') } }),
      'port',
    );
    c.mark('floating IP');
    const fip = ok(await c.cloud.call('POST', '/network/v2.0/floatingips', { floatingip: { floating_network_id: c.net.external } }), 'fip');
    c.mark('port forwarding');
    const pf = {
      port_forwarding: { protocol: 'tcp', internal_port_id: np.port.id, internal_port: 22, external_port: ++externalPort },
    };
    const made = ok(await c.cloud.call('POST', `/network/v2.0/floatingips/${fip.floatingip.id}/port_forwardings`, pf), 'port forwarding');
    if (externalPort % 2 === 0) {
      c.mark('delete port forwarding');
      const id = made.port_forwarding.id as string;
      ok(await c.cloud.call('DELETE', `/network/v2.0/floatingips/${fip.floatingip.id}/port_forwardings/${id}`), 'delete pf');
      c.mark('delete floating IP');
      ok(await c.cloud.call('DELETE', `/network/v2.0/floatingips/${fip.floatingip.id}`), 'delete fip');
      c.mark('delete port');
      ok(await c.cloud.call('DELETE', `/network/v2.0/ports/${np.port.id}`), 'delete port');
    }
  },
};
