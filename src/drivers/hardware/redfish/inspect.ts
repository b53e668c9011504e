/**
 * The redfish inspect interface (out-of-band inspection, Ironic 21.4's `redfish` inspect
 * interface, `ironic/drivers/modules/redfish/inspect.py` in https://opendev.org/openstack/ironic,
 * over sushy 4.3): reads the node's ComputerSystem, `Processors`, `MemorySummary`, `Storage`
 * (drives and RAID volumes), `SimpleStorage` and `EthernetInterfaces` (DSP2046), and describes
 * them as an ironic-python-agent inventory plus plugin data:
 *
 * - `cpu.count` = the sum of `TotalThreads` of the CPU processors (sushy's
 *   `processors.summary`), `architecture` from the first `ProcessorArchitecture` by Ironic's
 *   `CPU_ARCH_MAP` over the schema's values: `x86` → x86_64, `IA-64` → ia64, `ARM` → arm,
 *   `MIPS` → mips, `OEM` → oem; `model_name`, `frequency` (`MaxSpeedMHz`); processors of
 *   `ProcessorType` `GPU` become `pci_devices` entries (PCI class 0302);
 * - `memory.physical_mb` = `MemorySummary.TotalSystemMemoryGiB` × 1024, or the sum of the
 *   `Memory` members' `CapacityMiB` when the summary is absent;
 * - `disks` and the plugin data's `root_disk` (the device whose size gives `local_gb`: the
 *   smallest of at least 4 GiB, RAID volumes before drives, as Ironic) — ./inspect-storage.ts;
 * - `interfaces`: the EthernetInterfaces Ironic creates ports for (`get_enabled_macs` over
 *   sushy's `ethernet_interfaces.summary`): a `MACAddress`, `Status.Health` `OK` and
 *   `Status.State` `Enabled`; the others are listed in the plugin data's
 *   `skipped_interfaces` (`{mac_address, state, health}`) and get no port. Each NIC's `lldp`
 *   (IPA's raw TLVs) comes from the ports of the chassis' `NetworkAdapters` whose
 *   `Ethernet.AssociatedMACAddresses` holds the MAC and that has `Ethernet.LLDPReceive` (Port
 *   v1_4_0) — best effort: a BMC without network adapters gives no LLDP, not a failure;
 * - `system_vendor` from `Manufacturer`, `Model`, `SerialNumber`; `boot.current_boot_mode` from
 *   `Boot.BootSourceOverrideMode` (`UEFI` → uefi, `Legacy` → bios, as Ironic's
 *   `BOOT_MODE_MAP`), null when the system reports neither — then no `boot_mode` capability
 *   is set, as in Ironic.
 *
 * A missing or malformed essential value (CPU count or architecture, memory) is a
 * HardwareError `invalid-response` (Ironic: `HardwareInspectionFailure`).
 */
import type { InspectInterface, InspectedHardware } from '../../../domain/hardware/inspect.ts';
import { encodeLldp } from '../../../domain/inspection/inventory.ts';
import type { DriverNode } from '../../../domain/hardware/interfaces.ts';
import type { RedfishClient, RequestContext } from './client.ts';
import { parseRedfishDriverInfo } from './driver-info.ts';
import { readMembers, readStorage, type RedfishReader } from './inspect-storage.ts';
import { invalidResponse, odataId, readSystem } from './system.ts';

type Json = Record<string, unknown>;

/** Ironic 21.4's `CPU_ARCH_MAP`, keyed by the Redfish `ProcessorArchitecture` values (DSP2046 Processor). */
const ARCH: Readonly<Record<string, string>> = { x86: 'x86_64', 'IA-64': 'ia64', ARM: 'arm', MIPS: 'mips', OEM: 'oem' };
/** Ironic's `BOOT_MODE_MAP`, keyed by `Boot.BootSourceOverrideMode`. */
const BOOT_MODE: Readonly<Record<string, string>> = { UEFI: 'uefi', Legacy: 'bios' };
const PCI_VENDORS: Readonly<Record<string, string>> = { nvidia: '10de', amd: '1002', intel: '8086' };

/** The redfish inspect interface. */
export class RedfishInspect implements InspectInterface {
  readonly names = ['redfish'] as const;
  readonly #client: RedfishClient;

  constructor(client: RedfishClient) {
    this.#client = client;
  }

  /** See {@link InspectInterface.inspectHardware} and the module documentation. */
  async inspectHardware(node: DriverNode): Promise<InspectedHardware> {
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'inspect hardware' };
    const reader: RedfishReader = { get: async (path) => (await this.#client.send(info, ctx, 'GET', path)).json ?? {} };
    const system = (await readSystem(this.#client, info, ctx)).json;
    const members = (ref: unknown) => readMembers(reader, ref);

    const processors = await members(system.Processors);
    const cpus = processors.filter((p) => p.ProcessorType !== 'GPU');
    const gpus = processors.filter((p) => p.ProcessorType === 'GPU');
    const count = cpus.reduce((n, p) => n + (typeof p.TotalThreads === 'number' ? p.TotalThreads : 0), 0);
    const archRaw = cpus.map((p) => p.ProcessorArchitecture).find((a) => typeof a === 'string');
    let memGiB = (system.MemorySummary as Json | undefined)?.TotalSystemMemoryGiB;
    if (typeof memGiB !== 'number' || !(memGiB > 0)) {
      const dimms = await members(system.Memory);
      const mib = dimms.reduce((n, d) => n + (typeof d.CapacityMiB === 'number' && d.CapacityMiB > 0 ? d.CapacityMiB : 0), 0);
      if (mib > 0) memGiB = mib / 1024;
    }
    if (count <= 0) throw invalidResponse(info, ctx, 'no processor with TotalThreads');
    if (archRaw === undefined || ARCH[archRaw] === undefined)
      throw invalidResponse(
        info,
        ctx,
        archRaw === undefined ? 'no ProcessorArchitecture' : `an unknown ProcessorArchitecture ${JSON.stringify(archRaw)}`,
      );
    if (typeof memGiB !== 'number' || !(memGiB > 0))
      throw invalidResponse(info, ctx, 'neither MemorySummary.TotalSystemMemoryGiB nor Memory capacities');

    const storage = await readStorage(reader, system);
    const lldp = await this.#lldpByMac(reader, system);
    const nics = (await members(system.EthernetInterfaces)).filter(
      (n) => typeof n.MACAddress === 'string' && /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(n.MACAddress),
    );
    const statusOf = (n: Json) => (n.Status ?? {}) as Json;
    const enabled = (n: Json) => statusOf(n).State === 'Enabled' && statusOf(n).Health === 'OK';
    const interfaces = nics.filter(enabled).map((n) => {
      const mac = (n.MACAddress as string).toLowerCase();
      return {
        name: String(n.Description ?? n.Id ?? ''),
        mac_address: mac,
        ipv4_address: null,
        ipv6_address: null,
        has_carrier: n.LinkStatus === 'LinkUp',
        lldp: lldp.get(mac) ?? null,
        vendor: null,
        product: null,
        client_id: null,
        biosdevname: null,
      };
    });
    const skipped = nics
      .filter((n) => !enabled(n))
      .map((n) => ({
        mac_address: (n.MACAddress as string).toLowerCase(),
        state: statusOf(n).State ?? null,
        health: statusOf(n).Health ?? null,
      }));
    const bootMode = (system.Boot as Json | undefined)?.BootSourceOverrideMode;
    const cpu0 = cpus[0] ?? {};
    return {
      inventory: {
        cpu: {
          model_name: String(cpu0.Model ?? ''),
          frequency: String(cpu0.MaxSpeedMHz ?? ''),
          count,
          architecture: ARCH[archRaw],
          flags: [],
          socket_count: cpus.length,
        },
        memory: { total: Math.round(memGiB * 1024 ** 3), physical_mb: Math.round(memGiB * 1024) },
        disks: storage.disks,
        interfaces,
        system_vendor: {
          product_name: String(system.Model ?? ''),
          serial_number: String(system.SerialNumber ?? ''),
          manufacturer: String(system.Manufacturer ?? ''),
        },
        boot: { current_boot_mode: typeof bootMode === 'string' ? (BOOT_MODE[bootMode] ?? null) : null, pxe_interface: null },
      },
      pluginData: {
        root_disk: storage.rootDisk,
        pci_devices: gpus.map((g, i) => ({
          vendor_id: PCI_VENDORS[String(g.Manufacturer ?? '').toLowerCase()] ?? 'ffff',
          product_id: '0000',
          class: '030200',
          revision: '',
          bus: String(g.Id ?? i),
        })),
        ...(skipped.length > 0 ? { skipped_interfaces: skipped } : {}),
        ...(storage.unreadable.length > 0 ? { unreadable_resources: storage.unreadable } : {}),
      },
    };
  }

  /** LLDP neighbours by lower-case MAC from the first chassis' network adapter ports (best effort). */
  async #lldpByMac(reader: RedfishReader, system: Json): Promise<Map<string, Array<[number, string]>>> {
    const out = new Map<string, Array<[number, string]>>();
    try {
      const links = system.Links as Json | undefined;
      const chassisRef = Array.isArray(links?.Chassis) ? links.Chassis[0] : undefined;
      const chassisPath = odataId(chassisRef);
      if (chassisPath === null) return out;
      const chassis = await reader.get(chassisPath);
      for (const adapter of await readMembers(reader, chassis.NetworkAdapters)) {
        for (const port of await readMembers(reader, adapter.Ports)) {
          const eth = (port.Ethernet ?? {}) as Json;
          const rx = eth.LLDPReceive as Json | undefined;
          if (!rx || typeof rx.ChassisId !== 'string' || typeof rx.PortId !== 'string') continue;
          const tlvs = encodeLldp({
            chassisId: rx.ChassisId,
            portId: rx.PortId,
            systemName: typeof rx.SystemName === 'string' ? rx.SystemName : null,
          });
          for (const mac of Array.isArray(eth.AssociatedMACAddresses) ? eth.AssociatedMACAddresses : [])
            if (typeof mac === 'string') out.set(mac.toLowerCase(), tlvs);
        }
      }
    } catch {
      // LLDP is extra information: a BMC without network adapters still inspects.
    }
    return out;
  }
}
