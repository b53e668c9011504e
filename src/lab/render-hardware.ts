/**
 * Redfish hardware inventory of a lab system, rendered from its description
 * (`SystemState.machine`, src/lab/hardware.ts). DSP2046 schemas: `Processor.v1_10_0`
 * (CPU sockets `CPU<n>`, and GPUs `GPU<n>` with `ProcessorType: GPU` and no `TotalThreads`, so
 * that sushy's `processors.summary` counts logical CPUs only), `Memory.v1_11_0` (DIMMs),
 * `EthernetInterface.v1_6_0`, `SimpleStorage.v1_3_0`, `Storage.v1_9_0` with
 * `Drive.v1_9_0` members under `Systems/{id}/Storage/1/Drives/{n}` (where sushy 4.3 follows
 * the `Drives` links), and under the chassis `NetworkAdapters/NIC.1` (`NetworkAdapter.v1_7_0`)
 * with one `Port.v1_4_0` per NIC: `Ethernet.AssociatedMACAddresses` and the LLDP neighbour in
 * `Ethernet.LLDPReceive` (ChassisId with subtype `MacAddr`, PortId with subtype `IfName`, SystemName).
 * Pure functions.
 */
import type { LabDisk } from './hardware.ts';
import { STATUS_OK, chassisUri, ref, systemUri, type Json } from './render-system.ts';
import type { SystemState } from './state.ts';

/** Id of the system's one storage controller (both `SimpleStorage` and `Storage`). */
export const STORAGE_ID = 'RAID.Integrated.1-1';

/** Ids of the system's processors: `CPU0`… per socket, then `GPU0`… */
export function processorIds(s: SystemState): string[] {
  return [...Array.from({ length: s.machine.cpu.sockets }, (_v, i) => `CPU${i}`), ...s.machine.gpus.map((_g, i) => `GPU${i}`)];
}

/** The Processor resource `cpuId` of `s`, or null when there is no such processor. */
export function renderProcessor(s: SystemState, cpuId: string): Json | null {
  const uri = `${systemUri(s.id)}/Processors/${cpuId}`;
  const gpu = /^GPU(\d+)$/.exec(cpuId);
  if (gpu !== null) {
    const g = s.machine.gpus[Number(gpu[1])];
    if (g === undefined || String(Number(gpu[1])) !== gpu[1]) return null;
    return {
      '@odata.type': '#Processor.v1_10_0.Processor',
      '@odata.id': uri,
      Id: cpuId,
      Name: `GPU ${gpu[1]}`,
      ProcessorType: 'GPU',
      Manufacturer: g.vendor,
      Model: g.model,
      Status: STATUS_OK,
    };
  }
  const m = /^CPU(\d+)$/.exec(cpuId);
  const cpu = s.machine.cpu;
  if (m === null || Number(m[1]) >= cpu.sockets || String(Number(m[1])) !== m[1]) return null;
  return {
    '@odata.type': '#Processor.v1_10_0.Processor',
    '@odata.id': uri,
    Id: cpuId,
    Name: `Processor ${m[1]}`,
    Socket: `CPU ${m[1]}`,
    ProcessorType: 'CPU',
    ProcessorArchitecture: cpu.arch === 'aarch64' ? 'ARM' : 'x86',
    InstructionSet: cpu.arch === 'aarch64' ? 'ARM-A64' : 'x86-64',
    Manufacturer: /intel/i.test(cpu.model) ? 'Intel(R) Corporation' : /amd/i.test(cpu.model) ? 'Advanced Micro Devices, Inc.' : 'esi',
    Model: cpu.model,
    MaxSpeedMHz: cpu.frequencyMHz,
    TotalCores: cpu.coresPerSocket,
    TotalThreads: cpu.coresPerSocket * cpu.threadsPerCore,
    Status: STATUS_OK,
  };
}

/** Ids of the system's DIMMs, `DIMM0`…. */
export function memoryIds(s: SystemState): string[] {
  return Array.from({ length: s.machine.dimms }, (_v, i) => `DIMM${i}`);
}

/** The Memory resource (a DIMM; the memory is spread evenly) `dimmId`, or null. */
export function renderMemory(s: SystemState, dimmId: string): Json | null {
  if (!memoryIds(s).includes(dimmId)) return null;
  const i = Number(dimmId.slice(4));
  const per = Math.floor(s.machine.memoryMiB / s.machine.dimms);
  const capacity = i === s.machine.dimms - 1 ? s.machine.memoryMiB - per * (s.machine.dimms - 1) : per;
  return {
    '@odata.type': '#Memory.v1_11_0.Memory',
    '@odata.id': `${systemUri(s.id)}/Memory/${dimmId}`,
    Id: dimmId,
    Name: `DIMM ${i}`,
    MemoryType: 'DRAM',
    MemoryDeviceType: 'DDR4',
    CapacityMiB: capacity,
    OperatingSpeedMhz: 3200,
    DeviceLocator: `DIMM_${String.fromCharCode(65 + (i % 26))}${Math.floor(i / 26) + 1}`,
    Status: STATUS_OK,
  };
}

/** Ids of the system's NICs, `nic0`…. */
export function nicIds(s: SystemState): string[] {
  return s.machine.nics.map((_n, i) => `nic${i}`);
}

/** The EthernetInterface resource `nicId`, or null. */
export function renderEthernetInterface(s: SystemState, nicId: string): Json | null {
  const i = nicIds(s).indexOf(nicId);
  const nic = s.machine.nics[i];
  if (nic === undefined) return null;
  return {
    '@odata.type': '#EthernetInterface.v1_6_0.EthernetInterface',
    '@odata.id': `${systemUri(s.id)}/EthernetInterfaces/${nicId}`,
    Id: nicId,
    Name: `Ethernet interface ${nic.name}`,
    Description: nic.name,
    MACAddress: nic.mac,
    PermanentMACAddress: nic.mac,
    SpeedMbps: nic.speedMbps,
    FullDuplex: true,
    LinkStatus: nic.lldp !== null ? 'LinkUp' : 'NoLink',
    InterfaceEnabled: true,
    Status: { State: 'Enabled', Health: 'OK' },
  };
}

/** The SimpleStorage resource with every disk of the system. */
export function renderSimpleStorage(s: SystemState): Json {
  return {
    '@odata.type': '#SimpleStorage.v1_3_0.SimpleStorage',
    '@odata.id': `${systemUri(s.id)}/SimpleStorage/${STORAGE_ID}`,
    Id: STORAGE_ID,
    Name: 'Storage controller',
    UefiDevicePath: 'PciRoot(0x0)/Pci(0x4,0x0)',
    Devices: s.machine.disks.map((d) => ({
      Name: d.name,
      Manufacturer: d.vendor,
      Model: d.model,
      CapacityBytes: d.sizeBytes,
      Status: { State: 'Enabled', Health: 'OK' },
    })),
    Status: STATUS_OK,
  };
}

/** URI of the Storage resource of the system. */
export function storageUri(s: SystemState): string {
  return `${systemUri(s.id)}/Storage/${STORAGE_ID}`;
}

/** Ids of the drives, `Disk.Bay.0`, `Disk.Bay.1`, … in the order of the description's disks. */
export function driveIds(s: SystemState): string[] {
  return s.machine.disks.map((_d, i) => `Disk.Bay.${i}`);
}

/** RAID levels the lab's storage controller builds (src/lab/raid.ts). */
export const SUPPORTED_RAID_TYPES = Object.freeze(['RAID0', 'RAID1', 'RAID5', 'RAID6', 'RAID10'] as const);

/** The Storage resource: one controller with every disk as a `Drives` link. */
export function renderStorage(s: SystemState): Json {
  const uri = storageUri(s);
  const nvme = s.machine.disks.every((d) => d.name.startsWith('/dev/nvme'));
  return {
    '@odata.type': '#Storage.v1_9_0.Storage',
    '@odata.id': uri,
    Id: STORAGE_ID,
    Name: 'Storage controller',
    StorageControllers: [
      {
        '@odata.id': `${uri}#/StorageControllers/0`,
        MemberId: '0',
        Name: nvme ? 'NVMe controller' : 'SAS/SATA controller',
        SupportedControllerProtocols: [nvme ? 'PCIe' : 'PCIe'],
        SupportedDeviceProtocols: nvme ? ['NVMe'] : ['SAS', 'SATA'],
        SupportedRAIDTypes: SUPPORTED_RAID_TYPES,
        Status: STATUS_OK,
      },
    ],
    Drives: driveIds(s).map((d) => ref(`${uri}/Drives/${d}`)),
    'Drives@odata.count': s.machine.disks.length,
    Volumes: ref(`${uri}/Volumes`),
    Status: STATUS_OK,
  };
}

/** The Drive resource `driveId`, or null. */
export function renderDrive(s: SystemState, driveId: string): Json | null {
  const i = driveIds(s).indexOf(driveId);
  const d: LabDisk | undefined = s.machine.disks[i];
  if (d === undefined) return null;
  return {
    '@odata.type': '#Drive.v1_9_0.Drive',
    '@odata.id': `${storageUri(s)}/Drives/${driveId}`,
    Id: driveId,
    Name: d.name,
    Manufacturer: d.vendor,
    Model: d.model,
    SerialNumber: d.serial,
    CapacityBytes: d.sizeBytes,
    MediaType: d.rotational ? 'HDD' : 'SSD',
    Protocol: d.name.startsWith('/dev/nvme') ? 'NVMe' : d.rotational ? 'SAS' : 'SATA',
    Identifiers: d.wwn === null ? [] : [{ DurableNameFormat: 'NAA', DurableName: d.wwn.slice(2) }],
    Status: { State: 'Enabled', Health: 'OK' },
  };
}

/** Id of the chassis' one network adapter. */
export const ADAPTER_ID = 'NIC.1';

/** URI of the chassis' network adapter. */
export function adapterUri(s: SystemState): string {
  return `${chassisUri(s.chassisId)}/NetworkAdapters/${ADAPTER_ID}`;
}

/** The NetworkAdapter resource holding every NIC as a port. */
export function renderNetworkAdapter(s: SystemState): Json {
  return {
    '@odata.type': '#NetworkAdapter.v1_7_0.NetworkAdapter',
    '@odata.id': adapterUri(s),
    Id: ADAPTER_ID,
    Name: 'Network adapter',
    Manufacturer: s.machine.system.manufacturer,
    Ports: ref(`${adapterUri(s)}/Ports`),
    Status: STATUS_OK,
  };
}

/** The Port resource of NIC `portId` (its index), or null. */
export function renderPort(s: SystemState, portId: string): Json | null {
  const nic = String(Number(portId)) === portId ? s.machine.nics[Number(portId)] : undefined;
  if (nic === undefined) return null;
  return {
    '@odata.type': '#Port.v1_4_0.Port',
    '@odata.id': `${adapterUri(s)}/Ports/${portId}`,
    Id: portId,
    Name: nic.name,
    PortId: nic.name,
    LinkStatus: nic.lldp !== null ? 'LinkUp' : 'LinkDown',
    CurrentSpeedGbps: nic.speedMbps / 1000,
    Ethernet: {
      AssociatedMACAddresses: [nic.mac],
      ...(nic.lldp !== null
        ? {
            LLDPReceive: {
              ChassisId: nic.lldp.chassisId,
              ChassisIdSubtype: 'MacAddr',
              PortId: nic.lldp.portId,
              PortIdSubtype: 'IfName',
              SystemName: nic.lldp.systemName,
            },
          }
        : {}),
    },
    Status: STATUS_OK,
  };
}
