/**
 * Redfish representations of a lab system and its sub-resources (DSP2046 schemas
 * `ComputerSystem.v1_13_0`, `VirtualMedia`; the hardware inventory resources are in
 * render-hardware.ts),
 * rendered from {@link SystemState}. Pure functions: JSON objects in, nothing else.
 *
 * The fields are those sushy 4.3 and Ironic 21.4's `redfish` hardware type read
 * (`ironic/drivers/modules/redfish/` in https://opendev.org/openstack/ironic;
 * https://opendev.org/openstack/sushy): `Id`, `UUID`, `PowerState`, `Status`, `Boot` with its
 * allowable targets, `ProcessorSummary`, `MemorySummary`, `SimpleStorage`, `EthernetInterfaces`,
 * `Links.ManagedBy`/`Links.Chassis`, `Actions["#ComputerSystem.Reset"]`, `IndicatorLED`.
 *
 * The lab's own facts are in `Oem.EsiLab` (DSP0266 §"OEM extensions"; clients that do not know
 * it ignore it): `Backend` — `simulated` (a model whose "ramdisk" is the agent as a host process)
 * or `qemu` (a virtual machine that boots real media: esi's deploy ramdisk, not the lab's
 * simulated agent media) — and, for a QEMU system on the lab's switch, `SwitchPort` (`Bridge`,
 * `Netns`, `PortId`: where its NIC is cabled, src/lab/qemu/network.ts). `esi lab enroll` reads
 * them (src/cli/commands/lab-enroll.ts).
 */
import { BOOT_MODES, BOOT_TARGETS, RESET_TYPES, type LabSwitchPort, type SystemState } from './state.ts';

/** Root of every Redfish URI of the lab. */
export const REDFISH_ROOT = '/redfish/v1';

/** A JSON object. */
export type Json = Record<string, unknown>;

/** `{"@odata.id": uri}`, a Redfish reference. */
export function ref(uri: string): { '@odata.id': string } {
  return { '@odata.id': uri };
}

/** A resource collection with `Members` and `Members@odata.count`. */
export function collection(type: string, uri: string, name: string, memberUris: readonly string[]): Json {
  return {
    '@odata.type': `#${type}.${type}`,
    '@odata.id': uri,
    Name: name,
    Members: memberUris.map(ref),
    'Members@odata.count': memberUris.length,
  };
}

/** The `Status` of a healthy, enabled resource. */
export const STATUS_OK = Object.freeze({ State: 'Enabled', Health: 'OK', HealthRollup: 'OK' });

/** URI of system `id`. */
export function systemUri(id: string): string {
  return `${REDFISH_ROOT}/Systems/${id}`;
}

/** URI of the manager `managerId`. */
export function managerUri(managerId: string): string {
  return `${REDFISH_ROOT}/Managers/${managerId}`;
}

/** URI of the chassis `chassisId`. */
export function chassisUri(chassisId: string): string {
  return `${REDFISH_ROOT}/Chassis/${chassisId}`;
}

/** URI of the system's `#ComputerSystem.Reset` action. */
export function resetActionUri(id: string): string {
  return `${systemUri(id)}/Actions/ComputerSystem.Reset`;
}

/** `@odata.type` of the lab's `Oem.EsiLab` object of a ComputerSystem. */
export const ESI_LAB_OEM_TYPE = '#EsiLabComputerSystem.v1_0_0.EsiLabComputerSystem';

/**
 * The ComputerSystem resource of `s`.
 * @param switchPort where a QEMU system's NIC is cabled (`LabMachines.switchPort`), or null
 */
export function renderSystem(s: SystemState, switchPort: LabSwitchPort | null = null): Json {
  const uri = systemUri(s.id);
  const m = s.machine;
  return {
    '@odata.type': '#ComputerSystem.v1_13_0.ComputerSystem',
    '@odata.id': uri,
    Id: s.id,
    Name: s.id,
    Description: 'esi lab virtual bare-metal system',
    UUID: s.uuid,
    Manufacturer: m.system.manufacturer,
    Model: m.system.product,
    SerialNumber: m.system.serial,
    SystemType: 'Physical',
    BiosVersion: s.firmwareVersions.BIOS ?? '1.0.0',
    PowerState: s.powerState,
    Status: STATUS_OK,
    IndicatorLED: s.indicatorLed,
    Boot: {
      BootSourceOverrideTarget: s.boot.target,
      BootSourceOverrideEnabled: s.boot.enabled,
      BootSourceOverrideMode: s.boot.mode,
      'BootSourceOverrideTarget@Redfish.AllowableValues': BOOT_TARGETS,
      'BootSourceOverrideMode@Redfish.AllowableValues': BOOT_MODES,
    },
    ProcessorSummary: {
      Count: m.cpu.sockets,
      CoreCount: m.cpu.sockets * m.cpu.coresPerSocket,
      LogicalProcessorCount: m.cpu.sockets * m.cpu.coresPerSocket * m.cpu.threadsPerCore,
      Model: m.cpu.model,
      Status: STATUS_OK,
    },
    MemorySummary: { TotalSystemMemoryGiB: m.memoryMiB / 1024, Status: STATUS_OK },
    Processors: ref(`${uri}/Processors`),
    Memory: ref(`${uri}/Memory`),
    EthernetInterfaces: ref(`${uri}/EthernetInterfaces`),
    SimpleStorage: ref(`${uri}/SimpleStorage`),
    Storage: ref(`${uri}/Storage`),
    VirtualMedia: ref(`${uri}/VirtualMedia`),
    Bios: ref(`${uri}/Bios`),
    Links: {
      Chassis: [ref(chassisUri(s.chassisId))],
      ManagedBy: [ref(managerUri(s.managerId))],
    },
    Actions: {
      '#ComputerSystem.Reset': {
        target: resetActionUri(s.id),
        'ResetType@Redfish.AllowableValues': RESET_TYPES,
      },
    },
    Oem: {
      EsiLab: {
        '@odata.type': ESI_LAB_OEM_TYPE,
        Backend: s.backing,
        ...(switchPort !== null ? { SwitchPort: { Bridge: switchPort.bridge, Netns: switchPort.netns, PortId: switchPort.port } } : {}),
      },
    },
  };
}

/** Id of the system's one virtual media device. */
export const VIRTUAL_MEDIA_ID = 'Cd';

/**
 * The VirtualMedia resource of the system's virtual CD, as seen under `baseUri` (the system's
 * or its manager's `VirtualMedia` collection: both expose the same device; sushy 4.3 reads the
 * manager's).
 */
export function renderVirtualMedia(s: SystemState, baseUri: string): Json {
  const uri = `${baseUri}/${VIRTUAL_MEDIA_ID}`;
  const vm = s.virtualMedia;
  return {
    '@odata.type': '#VirtualMedia.v1_4_0.VirtualMedia',
    '@odata.id': uri,
    Id: VIRTUAL_MEDIA_ID,
    Name: 'Virtual CD',
    MediaTypes: ['CD', 'DVD'],
    ConnectedVia: vm.inserted ? 'URI' : 'NotConnected',
    Image: vm.image,
    ImageName: vm.image === null ? null : (vm.image.split('/').pop() ?? ''),
    Inserted: vm.inserted,
    WriteProtected: vm.writeProtected,
    TransferMethod: 'Stream',
    Status: STATUS_OK,
    Actions: {
      '#VirtualMedia.InsertMedia': { target: `${uri}/Actions/VirtualMedia.InsertMedia` },
      '#VirtualMedia.EjectMedia': { target: `${uri}/Actions/VirtualMedia.EjectMedia` },
    },
  };
}
