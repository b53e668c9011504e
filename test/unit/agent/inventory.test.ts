/**
 * The agent's inspection data from a simulated lab node's description file (src/agent/inventory.ts
 * `describedMachineFacts`), built by the same document builder as a real machine's
 * (`inspectionDocument`; the /proc and /sys reader is tested in test/unit/ramdisk/sysfs-inventory.test.ts):
 * IPA's document shape, the root disk chosen as IPA does, LLDP TLVs, GPUs as PCI 3D controllers,
 * and what esi's inspection accepts and reads from it.
 */
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { collectInspectionData, inspectionDocument, type MachineFacts } from '../../../src/agent/inventory.ts';
import { decodeLldp, inspectionFacts, validateInspectionData } from '../../../src/domain/inspection/inventory.ts';
import { loadLabModel } from '../../../src/lab/hardware.ts';
import { LabState, type SystemState } from '../../../src/lab/state.ts';
import { tempDir } from './support.ts';

const dir = tempDir('inventory');
afterAll(() => dir.rm());

const GIB = 1024 ** 3;

/** The description file the lab hands the agent of its first node with `model` (src/lab/agents.ts writes it the same way). */
function describedNode(model: string): { file: string; machine: SystemState } {
  const state = new LabState({ nodes: 1, username: 'admin', password: 'password', seed: 'inv', models: [loadLabModel(model)] });
  const system = state.systems()[0]!;
  const file = dir.file(`${model}.json`);
  fs.writeFileSync(file, JSON.stringify(system.machine));
  return { file, machine: system };
}

describe("the inspection data of a lab node's description", () => {
  it("is IPA's document: inventory, root disk, PCI devices, configuration; esi's inspection accepts it and finds the model", async () => {
    const { file, machine } = describedNode('gpu');
    const data = await collectInspectionData({ hardwareFile: file });
    expect(Object.keys(data)).toEqual(['inventory', 'root_disk', 'pci_devices', 'configuration']);
    const inv = data.inventory as Record<string, any>;
    expect(Object.keys(inv)).toEqual([
      'interfaces',
      'cpu',
      'memory',
      'disks',
      'bmc_address',
      'bmc_v6address',
      'bmc_mac',
      'system_vendor',
      'boot',
      'hostname',
    ]);
    expect(inv.cpu).toMatchObject({ count: 2 * 40 * 2, socket_count: 2, architecture: 'x86_64', frequency: '2300' });
    expect(inv.memory).toEqual({ total: 1024 * 1024 * 1024 ** 2, physical_mb: 1024 * 1024 });
    expect(inv.disks).toHaveLength(2);
    expect(inv.disks[0]).toEqual({
      name: '/dev/nvme0n1',
      model: 'SAMSUNG MZQL2960HCJR-00A07',
      size: 960e9,
      rotational: false,
      wwn: machine.machine.disks[0]!.wwn,
      serial: machine.machine.disks[0]!.serial,
      vendor: 'Samsung',
      wwn_with_extension: machine.machine.disks[0]!.wwn,
      wwn_vendor_extension: null,
      hctl: null,
      by_path: null,
    });
    expect((data.root_disk as { name: string }).name).toBe('/dev/nvme0n1');
    expect(inv.system_vendor).toEqual({
      product_name: 'SYS-420GP-TNR',
      serial_number: machine.machine.system.serial,
      manufacturer: 'Supermicro',
    });
    expect(inv.boot).toEqual({ current_boot_mode: 'uefi', pxe_interface: machine.mac });
    expect(data.pci_devices).toHaveLength(8);
    expect((data.pci_devices as Array<Record<string, string>>).every((d) => d.vendor_id === '10de' && d.class === '030200')).toBe(true);
    expect(data.configuration).toEqual({
      collectors: ['default', 'pci-devices'],
      managers: [{ name: 'generic_hardware_manager', version: '1.2' }],
    });

    const cabled = inv.interfaces.filter((i: { lldp: unknown }) => i.lldp !== null);
    expect(cabled).toHaveLength(3);
    const nic0 = machine.machine.nics[0]!;
    expect(decodeLldp(inv.interfaces[0].lldp)).toEqual({
      switch_id: nic0.lldp!.chassisId,
      port_id: nic0.lldp!.portId,
      switch_info: nic0.lldp!.systemName,
    });

    const { inventory, pluginData } = validateInspectionData(data);
    const facts = inspectionFacts(inventory, pluginData);
    expect(facts.properties).toEqual({ cpus: 160, cpu_arch: 'x86_64', memory_mb: 1024 * 1024, local_gb: Math.floor(960e9 / GIB) - 1 });
    expect(facts.gpuCount).toBe(8);
    expect(facts.nics.find((n) => n.pxe)?.mac).toBe(machine.mac);
  });

  it('a file that is not a description is an error naming it', async () => {
    const file = dir.file('junk.json');
    fs.writeFileSync(file, '{"cpu": null}');
    await expect(collectInspectionData({ hardwareFile: file })).rejects.toThrow(`${file} is not a hardware description`);
  });

  it('picks the root disk as IPA does without hints: the smallest of at least 4 GiB, ties by name; none below 4 GiB', () => {
    const disk = (name: string, size: number) => ({
      name,
      size,
      rotational: false,
      model: null,
      vendor: null,
      serial: null,
      wwn: null,
      hctl: null,
      by_path: null,
    });
    const facts = (disks: MachineFacts['disks']): MachineFacts => ({
      interfaces: [],
      cpu: { count: 1 },
      memory: { total: GIB, physical_mb: 1024 },
      disks,
      systemVendor: { product_name: '', serial_number: '', manufacturer: '' },
      boot: { current_boot_mode: 'bios', pxe_interface: null },
      hostname: 'h',
      pciDevices: [],
    });
    const root = (disks: MachineFacts['disks']) => (inspectionDocument(facts(disks)).root_disk as { name: string } | null)?.name ?? null;
    expect(root([disk('/dev/sdb', 8 * GIB), disk('/dev/sda', 8 * GIB), disk('/dev/sdc', 100 * GIB)])).toBe('/dev/sda');
    expect(root([disk('/dev/sda', 2 * GIB), disk('/dev/sdb', 5 * GIB)])).toBe('/dev/sdb');
    expect(root([disk('/dev/sda', 2 * GIB)])).toBeNull();
  });
});
