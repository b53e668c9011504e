/**
 * Redfish representations of the lab's service-level resources (DSP0266 §"Service root",
 * §"Session management"; DSP2046 `ServiceRoot.v1_11_0`, `SessionService`, `Session`,
 * `Manager`, `Chassis`), the OData service document and `$metadata`. Pure functions.
 *
 * sushy 4.3 reads the service root before authenticating and needs `Id`, `RedfishVersion`,
 * `Systems`, `Managers`, `SessionService` and `Links.Sessions` (the DSP0266 way to discover
 * where to `POST` a session).
 */
import { REDFISH_ROOT, STATUS_OK, chassisUri, managerUri, ref, systemUri, type Json } from './render-system.ts';
import type { LabSession } from './sessions.ts';
import type { SystemState } from './state.ts';

/** The Redfish protocol version the lab implements. */
export const REDFISH_VERSION = '1.11.0';

/** URI of the sessions collection. */
export const SESSIONS_URI = `${REDFISH_ROOT}/SessionService/Sessions`;

/** The service root, `GET /redfish/v1/`. */
export function renderServiceRoot(serviceUuid: string): Json {
  return {
    '@odata.type': '#ServiceRoot.v1_11_0.ServiceRoot',
    '@odata.id': `${REDFISH_ROOT}/`,
    Id: 'RootService',
    Name: 'esi lab Redfish service',
    RedfishVersion: REDFISH_VERSION,
    UUID: serviceUuid,
    Vendor: 'esi',
    Product: 'esi lab BMC emulator',
    ProtocolFeaturesSupported: {
      ExpandQuery: { ExpandAll: false, Levels: false, Links: false, NoLinks: false },
      FilterQuery: false,
      SelectQuery: false,
      OnlyMemberQuery: false,
      ExcerptQuery: false,
    },
    Systems: ref(`${REDFISH_ROOT}/Systems`),
    Managers: ref(`${REDFISH_ROOT}/Managers`),
    Chassis: ref(`${REDFISH_ROOT}/Chassis`),
    SessionService: ref(`${REDFISH_ROOT}/SessionService`),
    Registries: ref(`${REDFISH_ROOT}/Registries`),
    UpdateService: ref(`${REDFISH_ROOT}/UpdateService`),
    TaskService: ref(`${REDFISH_ROOT}/TaskService`),
    Links: { Sessions: ref(SESSIONS_URI) },
  };
}

/** `GET /redfish`: the protocol versions (DSP0266 §"Protocol version"). */
export function renderVersions(): Json {
  return { v1: `${REDFISH_ROOT}/` };
}

/** The OData service document, `GET /redfish/v1/odata` (DSP0266 §"OData service document"). */
export function renderODataServiceDocument(): Json {
  const singleton = (name: string, url: string) => ({ name, kind: 'Singleton', url });
  return {
    '@odata.context': `${REDFISH_ROOT}/$metadata`,
    value: [
      singleton('Service', `${REDFISH_ROOT}/`),
      singleton('Systems', `${REDFISH_ROOT}/Systems`),
      singleton('Managers', `${REDFISH_ROOT}/Managers`),
      singleton('Chassis', `${REDFISH_ROOT}/Chassis`),
      singleton('SessionService', `${REDFISH_ROOT}/SessionService`),
      singleton('Registries', `${REDFISH_ROOT}/Registries`),
      singleton('UpdateService', `${REDFISH_ROOT}/UpdateService`),
      singleton('TaskService', `${REDFISH_ROOT}/TaskService`),
    ],
  };
}

const METADATA_NAMESPACES: readonly [string, string][] = [
  ['ServiceRoot', 'ServiceRoot.v1_11_0'],
  ['ComputerSystemCollection', ''],
  ['ComputerSystem', 'ComputerSystem.v1_13_0'],
  ['ManagerCollection', ''],
  ['Manager', 'Manager.v1_10_0'],
  ['ChassisCollection', ''],
  ['Chassis', 'Chassis.v1_11_0'],
  ['SessionService', 'SessionService.v1_1_8'],
  ['SessionCollection', ''],
  ['Session', 'Session.v1_3_0'],
  ['ProcessorCollection', ''],
  ['Processor', 'Processor.v1_10_0'],
  ['EthernetInterfaceCollection', ''],
  ['EthernetInterface', 'EthernetInterface.v1_6_0'],
  ['SimpleStorageCollection', ''],
  ['SimpleStorage', 'SimpleStorage.v1_3_0'],
  ['VirtualMediaCollection', ''],
  ['VirtualMedia', 'VirtualMedia.v1_4_0'],
  ['Message', 'Message.v1_1_1'],
  ['Bios', 'Bios.v1_1_0'],
  ['Settings', 'Settings.v1_3_0'],
  ['MessageRegistryFileCollection', ''],
  ['MessageRegistryFile', 'MessageRegistryFile.v1_1_0'],
  ['AttributeRegistry', 'AttributeRegistry.v1_3_0'],
  ['StorageCollection', ''],
  ['Storage', 'Storage.v1_9_0'],
  ['Drive', 'Drive.v1_9_0'],
  ['VolumeCollection', ''],
  ['Volume', 'Volume.v1_5_0'],
  ['UpdateService', 'UpdateService.v1_8_0'],
  ['SoftwareInventoryCollection', ''],
  ['SoftwareInventory', 'SoftwareInventory.v1_3_0'],
  ['TaskService', 'TaskService.v1_1_4'],
  ['TaskCollection', ''],
  ['Task', 'Task.v1_5_0'],
];

/** The CSDL `$metadata` document (DSP0266 §"Service metadata"): references to DMTF schemas. */
export function renderMetadata(): string {
  const refs = METADATA_NAMESPACES.map(([file, versioned]) => {
    const includes = [`<edmx:Include Namespace="${file}"/>`];
    if (versioned !== '') includes.push(`<edmx:Include Namespace="${versioned}"/>`);
    return `  <edmx:Reference Uri="http://redfish.dmtf.org/schemas/v1/${file}_v1.xml">${includes.join('')}</edmx:Reference>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">',
    ...refs,
    '  <edmx:DataServices>',
    '    <Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="Service">',
    '      <EntityContainer Name="Service" Extends="ServiceRoot.v1_11_0.ServiceContainer"/>',
    '    </Schema>',
    '  </edmx:DataServices>',
    '</edmx:Edmx>',
    '',
  ].join('\n');
}

/** The SessionService resource. `sessionTimeoutS` is the idle timeout, seconds. */
export function renderSessionService(sessionTimeoutS: number): Json {
  return {
    '@odata.type': '#SessionService.v1_1_8.SessionService',
    '@odata.id': `${REDFISH_ROOT}/SessionService`,
    Id: 'SessionService',
    Name: 'Session Service',
    ServiceEnabled: true,
    SessionTimeout: sessionTimeoutS,
    Status: STATUS_OK,
    Sessions: ref(SESSIONS_URI),
  };
}

/** A Session resource. `Password` is write-only and so reads back as null (DSP0266). */
export function renderSession(s: LabSession): Json {
  return {
    '@odata.type': '#Session.v1_3_0.Session',
    '@odata.id': `${SESSIONS_URI}/${s.id}`,
    Id: s.id,
    Name: 'User Session',
    UserName: s.userName,
    Password: null,
    CreatedTime: new Date(s.createdAt).toISOString(),
  };
}

/** The Manager (BMC) of system `s`. */
export function renderManager(s: SystemState): Json {
  const uri = managerUri(s.managerId);
  return {
    '@odata.type': '#Manager.v1_10_0.Manager',
    '@odata.id': uri,
    Id: s.managerId,
    Name: `BMC of ${s.id}`,
    ManagerType: 'BMC',
    UUID: s.managerUuid,
    Model: 'esi lab BMC',
    FirmwareVersion: s.firmwareVersions.BMC ?? '1.0.0',
    PowerState: 'On',
    Status: STATUS_OK,
    VirtualMedia: ref(`${uri}/VirtualMedia`),
    Links: {
      ManagerForServers: [ref(systemUri(s.id))],
      ManagerForChassis: [ref(chassisUri(s.chassisId))],
    },
  };
}

/** The Chassis that holds system `s`. Power state and LED mirror the system's. */
export function renderChassis(s: SystemState): Json {
  return {
    '@odata.type': '#Chassis.v1_11_0.Chassis',
    '@odata.id': chassisUri(s.chassisId),
    Id: s.chassisId,
    Name: `Chassis of ${s.id}`,
    // The machine's one chassis carries its system's UUID and shows the same identify LED.
    UUID: s.uuid,
    ChassisType: 'RackMount',
    Manufacturer: 'esi',
    Model: 'esi lab virtual chassis',
    PowerState: s.powerState,
    IndicatorLED: s.indicatorLed,
    Status: STATUS_OK,
    NetworkAdapters: ref(`${chassisUri(s.chassisId)}/NetworkAdapters`),
    Links: {
      ComputerSystems: [ref(systemUri(s.id))],
      ManagedBy: [ref(managerUri(s.managerId))],
    },
  };
}
