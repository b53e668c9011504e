/**
 * The provisioning network's DHCP server, end to end with real packets: esi (in process) runs
 * dnsmasq in a namespace `srv` (`ESI_PROVISIONING_INTERFACE`/`_NETNS`) on the provisioning
 * network's subnet; a node enrolled with the MAC of namespace `cli` gets its provisioning address
 * only while its deploy agent is to boot (`clean wait` after `provide`), and nothing once the
 * phase ends; a MAC esi does not know (`cl2`) never gets an answer.
 */
import { expect, it } from 'vitest';
import { labNetworkSupport } from '../../src/lab/network.ts';
import { bm, enrollRedfish, provision, startConductorEnv, waitNode } from '../api/conductor/support.ts';
import { call } from '../helpers/harness.ts';
import { cleanup, makeLan, udhcpc } from '../helpers/dhcp-lan.ts';
import { commandTool, describeNeeding, fileTool, TOOLS } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';

const DNSMASQ = fileTool('/usr/sbin/dnsmasq', 'dnsmasq-base');
const BUSYBOX = commandTool('busybox', 'busybox-static');
const IPXE = fileTool('/usr/lib/ipxe/undionly.kpxe', 'ipxe');
const support = TOOLS.iproute2.present ? await labNetworkSupport() : null;

describeNeeding(
  [DNSMASQ, BUSYBOX, IPXE, TOOLS.iproute2],
  'the provisioning network DHCP server',
  () => {
    it('answers the NICs of nodes whose agent is to boot with their provisioning address, and nobody else', async () => {
      const lan = await makeLan(['srv', 'cli', 'cl2'], '10.42.7.1/24');
      const env = await startConductorEnv(1, {
        env: {
          ESI_PROVISIONING_NETWORK: 'provnet',
          ESI_PROVISIONING_INTERFACE: 'eth0',
          ESI_PROVISIONING_NETNS: lan.ns('srv'),
          ESI_DHCP_USER: 'root',
        },
      });
      cleanup(() => env.close());
      const net = await call(env.ts, env.p.admin, 'POST', '/network/v2.0/networks', {
        network: {
          name: 'provnet',
          'provider:network_type': 'vlan',
          'provider:physical_network': 'physnet1',
          'provider:segmentation_id': 3900,
        },
      });
      expect(net.status, net.text).toBe(201);
      const sub = await call(env.ts, env.p.admin, 'POST', '/network/v2.0/subnets', {
        subnet: {
          network_id: net.body.network.id,
          ip_version: 4,
          cidr: '10.42.7.0/24',
          gateway_ip: '10.42.7.1',
          allocation_pools: [{ start: '10.42.7.100', end: '10.42.7.199' }],
        },
      });
      expect(sub.status, sub.text).toBe(201);

      const node = await enrollRedfish(
        env,
        'node-0',
        { deploy_interface: 'direct', boot_interface: 'ipxe', name: 'netboot' },
        { deploy_kernel: 'http://10.42.7.1/k', deploy_ramdisk: 'http://10.42.7.1/r' },
      );
      const port = await bm(env.ts, env.p.admin, 'POST', '/v1/ports', { node_uuid: node.uuid, address: lan.mac('cli') });
      expect(port.status, port.text).toBe(201);
      // Idle: no provisioning port, no answer.
      expect(await udhcpc(lan, 'cli', [], 2)).toBeNull();

      await provision(env, node.uuid, 'manage');
      await waitNode(env, node.uuid, (n) => n.provision_state === 'manageable' && n.reservation === null);
      await provision(env, node.uuid, 'provide');
      await waitNode(env, node.uuid, (n) => n.provision_state === 'clean wait' && n.reservation === null);
      const ports = await call(env.ts, env.p.admin, 'GET', '/network/v2.0/ports?device_owner=baremetal:provisioning');
      expect(ports.body.ports).toHaveLength(1);
      const prov = ports.body.ports[0];
      expect(prov).toMatchObject({ mac_address: lan.mac('cli'), device_id: node.uuid, network_id: net.body.network.id });
      const ip = prov.fixed_ips[0].ip_address as string;
      expect(ip).toMatch(/^10\.42\.7\.1\d\d$/);
      // The provisioning ports are the admin's: other projects do not see them.
      expect((await call(env.ts, env.p.lessee, 'GET', '/network/v2.0/ports?device_owner=baremetal:provisioning')).body.ports).toEqual([]);

      const lease = await waitFor(
        () => udhcpc(lan, 'cli', [], 2),
        (r) => r !== null,
        { timeoutMs: 30_000, what: 'a DHCP lease for the node' },
      );
      expect(lease).toMatchObject({ ip, router: '10.42.7.1', serverid: '10.42.7.1' });
      expect(await udhcpc(lan, 'cl2', [], 2)).toBeNull();

      // The agent phase ends (the cleaning is aborted): the port goes, and with it the answer.
      await provision(env, node.uuid, 'abort');
      await waitNode(env, node.uuid, (n) => n.provision_state === 'clean failed' && n.reservation === null);
      await waitFor(
        async () => (await call(env.ts, env.p.admin, 'GET', '/network/v2.0/ports?device_owner=baremetal:provisioning')).body.ports.length,
        (n) => n === 0,
        { timeoutMs: 30_000, what: 'the provisioning port to go' },
      );
      await waitFor(
        () => udhcpc(lan, 'cli', [], 2),
        (r) => r === null,
        { timeoutMs: 30_000, what: 'no DHCP answer for the node' },
      );
    }, 180_000);
  },
  support !== null && !support.ok ? support.reason : null,
);
