/**
 * A real machine inspected in band, end to end: a QEMU VM (UEFI) behind the lab's Redfish BMC,
 * its NIC on the lab's bridge; esi with a provisioning network (VLAN 3900, 10.42.0.0/24) whose
 * DHCP/TFTP it serves on the lab's uplink; the node enrolled with the `redfish-virtual-media`
 * boot interface and esi's deploy ramdisk (`esi ramdisk build`) as `deploy_kernel` /
 * `deploy_ramdisk`. `inspect` makes esi build the node's ISO, the BMC insert it, the switch move
 * the NIC to the provisioning VLAN, the VM boot the ramdisk, get its address from esi's dnsmasq,
 * and the agent post the VM's real inventory to esi: the node's properties then show the VM's
 * CPUs, memory and disk, and the inventory its NIC's MAC. A second VM does the same with the
 * `ipxe` boot interface: its firmware's iPXE gets an address and the chain script from esi's
 * dnsmasq, then its own script, kernel and ramdisk over esi's HTTP.
 *
 * Needs root (namespaces, bridge, taps), QEMU and OVMF, dnsmasq, and the ramdisk's packages; KVM
 * when it runs guests, else TCG (slower, same result).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { qemuNetworkSupport } from '../../src/lab/qemu/index.ts';
import { call } from '../helpers/harness.ts';
import { describeNeeding } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';
import {
  BM,
  consoleTail,
  enrolVm,
  provisioningSetup,
  REAL_MACHINE_TOOLS,
  startRealMachines,
  type RealMachines,
} from './real-machine-support.ts';

const support = await qemuNetworkSupport();
const MINUTES = 60_000;

describeNeeding(
  REAL_MACHINE_TOOLS,
  'a QEMU machine inspected in band through virtual media and the provisioning network',
  () => {
    let env: RealMachines;

    beforeAll(async () => {
      env = await startRealMachines({ prefix: 'rinsp', net: '10.42.0', vlan: 3900, count: 2, memoryMiB: 1536 });
      await provisioningSetup(env);
    }, 30 * MINUTES);

    afterAll(async () => {
      await env?.close();
    });

    /** Enrol VM `index` with `boot`, manage it, inspect it, and check what the agent found. */
    async function inspectVm(index: number, name: string, boot: 'redfish-virtual-media' | 'ipxe'): Promise<void> {
      const { ts, p } = env;
      const uuid = await enrolVm(env, index, name, { boot_interface: boot });
      const system = env.lab.systems.get(env.lab.qemu!.ids[index]!);
      const state = async (): Promise<any> => (await call(ts, p.admin, 'GET', `/baremetal/v1/nodes/${uuid}`, undefined, BM)).body;
      const put = (target: string) => call(ts, p.admin, 'PUT', `/baremetal/v1/nodes/${uuid}/states/provision`, { target }, BM);
      expect((await put('manage')).status).toBe(202);
      await waitFor(state, (n) => n.provision_state === 'manageable' && n.reservation === null, { timeoutMs: 60_000, what: 'manageable' });
      const started = Date.now();
      expect((await put('inspect')).status).toBe(202);
      const done = await waitFor(state, (n) => ['manageable', 'inspect failed'].includes(n.provision_state) && n.reservation === null, {
        timeoutMs: 15 * MINUTES,
        intervalMs: 2_000,
        what: 'the inspection to end',
        show: (n) => `${n.provision_state} ${n.last_error ?? ''}`,
      });
      expect(done.provision_state, `${done.last_error}\n--- console (tail) ---\n${consoleTail(env, index)}`).toBe('manageable');
      process.stdout.write(`real inspection (${boot}): inspect → manageable in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
      expect(done.properties).toMatchObject({ cpus: 2, local_gb: expect.any(Number) });
      expect(Math.abs(done.properties.memory_mb - 1536)).toBeLessThan(200);
      const inv = await call(ts, p.admin, 'GET', `/baremetal/v1/nodes/${uuid}/inventory`, undefined, BM);
      expect(inv.status, inv.text).toBe(200);
      const macs = (inv.body.inventory.interfaces as Array<{ mac_address: string }>).map((i) => i.mac_address.toLowerCase());
      expect(macs).toContain(system.mac);
      expect((inv.body.inventory.disks as Array<{ name: string }>).map((d) => d.name)).toContain('/dev/vda');
      // The agent phase is over: no provisioning port of this node is left.
      const left = await call(ts, p.admin, 'GET', `/network/v2.0/ports?device_owner=baremetal:provisioning&device_id=${uuid}`);
      expect(left.body.ports).toEqual([]);
    }

    it(
      'virtual media: the VM boots the per-node ISO, gets its address from esi, and its real hardware lands on the node',
      () => inspectVm(0, 'vm-vmedia', 'redfish-virtual-media'),
      30 * MINUTES,
    );

    it(
      'iPXE: the VM network-boots from esi (DHCP, the chain script, its own script, kernel and ramdisk over HTTP) and is inspected',
      () => inspectVm(1, 'vm-ipxe', 'ipxe'),
      30 * MINUTES,
    );
  },
  support.ok ? null : support.reason,
);
