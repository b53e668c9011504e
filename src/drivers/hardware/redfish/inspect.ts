/**
 * The redfish inspect interface (out-of-band inspection, Ironic's `redfish` inspect interface,
 * `ironic/drivers/modules/redfish/inspect.py` in https://opendev.org/openstack/ironic): reads the
 * node's ComputerSystem, `Processors`, `MemorySummary`, `Storage` (drives; `SimpleStorage` devices
 * when there is no `Storage`) and `EthernetInterfaces` (DSP2046), and describes them as an
 * ironic-python-agent inventory:
 *
 * - `cpu.count` = the sum of `TotalThreads` of the CPU processors (sushy's
 *   `processors.summary`), `architecture` from `ProcessorArchitecture` (x86 → x86_64,
 *   ARM → aarch64, as Ironic's `CPU_ARCH_MAP`), `model_name`, `frequency` (`MaxSpeedMHz`);
 *   processors of `ProcessorType` `GPU` become `pci_devices` entries (PCI class 0302);
 * - `memory.physical_mb` = `MemorySummary.TotalSystemMemoryGiB` × 1024, or the sum of the
 *   `Memory` members' `CapacityMiB` when the summary is absent;
 * - `disks`: each drive's `Name`, `CapacityBytes`, `MediaType` (HDD = rotational), `Model`,
 *   `SerialNumber`, `Manufacturer`, NAA identifier as `wwn`;
 * - `interfaces`: each EthernetInterface with a `MACAddress`; its `lldp` (IPA's raw TLVs) from
 *   the ports of the chassis' `NetworkAdapters` whose `Ethernet.AssociatedMACAddresses` holds the
 *   MAC and that has `Ethernet.LLDPReceive` (Port v1_4_0) — best effort: a BMC without network
 *   adapters gives no LLDP, not a failure;
 * - `system_vendor` from `Manufacturer`, `Model`, `SerialNumber`; `boot.current_boot_mode` from
 *   `Boot.BootSourceOverrideMode` (UEFI → uefi, Legacy → bios).
 *
 * A missing or malformed essential value (CPU count or architecture, memory) is a
 * HardwareError `invalid-response` (Ironic: `HardwareInspectionFailure`).
 */
import type { InspectInterface, InspectedHardware } from '../../../domain/hardware/inspect.ts';
import { encodeLldp } from '../../../domain/inspection/inventory.ts';
import type { DriverNode } from '../../../domain/hardware/interfaces.ts';
import type { RedfishClient, RequestContext } from './client.ts';
import { parseRedfishDriverInfo, type RedfishDriverInfo } from './driver-info.ts';
import { invalidResponse, odataId, readSystem } from './system.ts';

type Json = Record<string, unknown>;

const ARCH: Readonly<Record<string, string>> = { x86: 'x86_64', IA64: 'ia64', ARM: 'aarch64', MIPS: 'mips', OEM: 'oem' };
const PCI_VENDORS: Readonly<Record<string, string>> = { nvidia: '10de', amd: '1002', intel: '8086' };
/** Most members read from one collection. */
const MAX_MEMBERS = 256;

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
    const system = (await readSystem(this.#client, info, ctx)).json;
    const members = (ref: unknown) => this.#members(info, ctx, ref);

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
    if (archRaw === undefined || ARCH[archRaw] === undefined) throw invalidResponse(info, ctx, 'no known ProcessorArchitecture');
    if (typeof memGiB !== 'number' || !(memGiB > 0))
      throw invalidResponse(info, ctx, 'neither MemorySummary.TotalSystemMemoryGiB nor Memory capacities');

    const disks: Json[] = [];
    for (const storage of await members(system.Storage)) {
      for (const ref of Array.isArray(storage.Drives) ? storage.Drives.slice(0, MAX_MEMBERS) : []) {
        const path = odataId(ref);
        if (path === null) continue;
        const d = (await this.#client.send(info, ctx, 'GET', path)).json ?? {};
        const ids = Array.isArray(d.Identifiers) ? (d.Identifiers as Json[]) : [];
        const naa = ids.find((i) => i.DurableNameFormat === 'NAA')?.DurableName;
        disks.push(
          disk(
            d.Name ?? d.Id,
            d.CapacityBytes,
            d.MediaType === 'HDD',
            d.Model,
            d.SerialNumber,
            d.Manufacturer,
            typeof naa === 'string' ? `0x${naa}` : null,
          ),
        );
      }
    }
    if (disks.length === 0) {
      for (const ss of await members(system.SimpleStorage)) {
        for (const dev of Array.isArray(ss.Devices) ? (ss.Devices as Json[]) : [])
          disks.push(disk(dev.Name, dev.CapacityBytes, false, dev.Model, null, dev.Manufacturer, null));
      }
    }
    const lldp = await this.#lldpByMac(info, ctx, system);
    const interfaces = (await members(system.EthernetInterfaces))
      .filter((n) => typeof n.MACAddress === 'string' && /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(n.MACAddress))
      .map((n) => {
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
    const boot = system.Boot as Json | undefined;
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
        disks,
        interfaces,
        system_vendor: {
          product_name: String(system.Model ?? ''),
          serial_number: String(system.SerialNumber ?? ''),
          manufacturer: String(system.Manufacturer ?? ''),
        },
        boot: { current_boot_mode: boot?.BootSourceOverrideMode === 'Legacy' ? 'bios' : 'uefi', pxe_interface: null },
      },
      pluginData: {
        pci_devices: gpus.map((g, i) => ({
          vendor_id: PCI_VENDORS[String(g.Manufacturer ?? '').toLowerCase()] ?? 'ffff',
          product_id: '0000',
          class: '030200',
          revision: '',
          bus: String(g.Id ?? i),
        })),
      },
    };
  }

  /** LLDP neighbours by lower-case MAC from the first chassis' network adapter ports (best effort). */
  async #lldpByMac(info: RedfishDriverInfo, ctx: RequestContext, system: Json): Promise<Map<string, Array<[number, string]>>> {
    const out = new Map<string, Array<[number, string]>>();
    try {
      const links = system.Links as Json | undefined;
      const chassisRef = Array.isArray(links?.Chassis) ? links.Chassis[0] : undefined;
      const chassisPath = odataId(chassisRef);
      if (chassisPath === null) return out;
      const chassis = (await this.#client.send(info, ctx, 'GET', chassisPath)).json ?? {};
      for (const adapter of await this.#members(info, ctx, chassis.NetworkAdapters)) {
        for (const port of await this.#members(info, ctx, adapter.Ports)) {
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

  /** The members of the collection `ref` points to (none when the system has no such link). */
  async #members(info: RedfishDriverInfo, ctx: RequestContext, ref: unknown): Promise<Json[]> {
    const path = odataId(ref);
    if (path === null) return [];
    const coll = (await this.#client.send(info, ctx, 'GET', path)).json ?? {};
    const out: Json[] = [];
    for (const m of Array.isArray(coll.Members) ? coll.Members.slice(0, MAX_MEMBERS) : []) {
      const p = odataId(m);
      if (p === null) continue;
      const r = await this.#client.send(info, ctx, 'GET', p);
      if (r.json !== null) out.push(r.json);
    }
    return out;
  }
}

function disk(
  name: unknown,
  size: unknown,
  rotational: boolean,
  model: unknown,
  serial: unknown,
  vendor: unknown,
  wwn: string | null,
): Json {
  return {
    name: String(name ?? ''),
    size: typeof size === 'number' && Number.isInteger(size) && size >= 0 ? size : 0,
    rotational,
    model: model == null ? null : String(model),
    serial: serial == null ? null : String(serial),
    vendor: vendor == null ? null : String(vendor),
    wwn,
    wwn_with_extension: wwn,
    wwn_vendor_extension: null,
    hctl: null,
    by_path: null,
  };
}
