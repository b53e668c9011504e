/**
 * `network_data.json` in the config drive, generated from the node's VIFs when the deploy's
 * config drive has none (as Ironic asks the network interface, and Nova writes for instances):
 * the lessee's network, its fixed IP, netmask, gateway and DNS, on the NIC with the node's MAC.
 * Read back from the config drive the agent wrote on the lab node's disk.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectDisk } from '../../../src/lab/disk-report.ts';
import { osImage } from '../../helpers/os-image.ts';
import { call } from '../../helpers/harness.ts';
import { bm, provision, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { agentNode, cableToFakeSwitch, startDeployEnv, uploadImage } from './support.ts';

const LONG = 90_000;
let env: ConductorEnv;
let node: { uuid: string };
let mac: string;

beforeAll(async () => {
  env = await startDeployEnv(1);
  ({ node, mac } = await agentNode(env, 'node-0', { name: 'B', automated_clean: false }));
  await waitNode(env, node.uuid, (n) => n.provision_state === 'available' && n.reservation === null, LONG);
  await cableToFakeSwitch(env, node.uuid);
}, LONG);

afterAll(async () => {
  await env?.close();
});

describe('network_data.json from the VIFs', () => {
  it(
    'a deploy whose config drive has no network_data gets the VIF fixed IP, netmask, gateway and DNS on the NIC with the node MAC',
    async () => {
      const lnet = (await call(env.ts, env.p.lessee, 'GET', '/network/v2.0/networks?name=lnet')).body.networks[0];
      const sub = await call(env.ts, env.p.lessee, 'POST', '/network/v2.0/subnets', {
        subnet: {
          network_id: lnet.id,
          ip_version: 4,
          cidr: '192.168.50.0/24',
          gateway_ip: '192.168.50.1',
          dns_nameservers: ['192.168.50.53'],
        },
      });
      expect(sub.status, sub.text).toBe(201);
      const port = await call(env.ts, env.p.lessee, 'POST', '/network/v2.0/ports', {
        port: { network_id: lnet.id, fixed_ips: [{ ip_address: '192.168.50.20' }] },
      });
      expect(port.status, port.text).toBe(201);
      expect((await bm(env.ts, env.p.lessee, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: port.body.port.id })).status).toBe(204);
      const image = await uploadImage(env, osImage('nd-os', 8, 'qcow2'), 'nd-os', { as: env.p.lessee, diskFormat: 'qcow2' });
      expect(
        (
          await bm(env.ts, env.p.lessee, 'PATCH', `/v1/nodes/${node.uuid}`, [
            { op: 'add', path: '/instance_info/image_source', value: image },
          ])
        ).status,
      ).toBe(200);
      await provision(env, node.uuid, 'active', { configdrive: { meta_data: { hostname: 'web1' } } }, env.p.lessee);
      const active = await waitNode(env, node.uuid, (n) => ['active', 'deploy failed'].includes(n.provision_state), LONG);
      expect(active.provision_state, active.last_error).toBe('active');
      const report = await inspectDisk(env.lab.agents!.diskPath('node-0'));
      expect(report.metaData).toMatchObject({ hostname: 'web1' });
      const nd = report.networkData as any;
      expect(nd.links).toEqual([expect.objectContaining({ type: 'phy', ethernet_mac_address: mac, vif_id: port.body.port.id })]);
      expect(nd.networks).toEqual([
        expect.objectContaining({
          type: 'ipv4',
          link: nd.links[0].id,
          ip_address: '192.168.50.20',
          netmask: '255.255.255.0',
          network_id: lnet.id,
          routes: [{ network: '0.0.0.0', netmask: '0.0.0.0', gateway: '192.168.50.1' }],
        }),
      ]);
      expect(nd.services).toEqual([{ type: 'dns', address: '192.168.50.53' }]);
    },
    LONG * 2,
  );
});
