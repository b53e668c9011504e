/**
 * The lab's read-only Redfish hardware inventory resources of a system (DSP2046), rendered by
 * render-hardware.ts from the system's description:
 *
 * | URI (under `/redfish/v1/Systems/{id}`)             | schema                          |
 * |----------------------------------------------------|---------------------------------|
 * | `/Processors[/{CPUn,GPUn}]`                        | ProcessorCollection / Processor |
 * | `/Memory[/{DIMMn}]`                                | MemoryCollection / Memory       |
 * | `/EthernetInterfaces[/{nicN}]`                     | EthernetInterface(Collection)   |
 * | `/SimpleStorage[/1]`                               | SimpleStorage(Collection)       |
 * | `/Storage[/1[/Drives/{n}]]`                        | StorageCollection / Storage / Drive |
 *
 * and under `/redfish/v1/Chassis/{id}`: `/NetworkAdapters[/NIC.1[/Ports[/{n}]]]` (a port per
 * NIC with its LLDP neighbour).
 *
 * Unknown members are 404 `ResourceMissingAtURI`.
 */
import type { FastifyInstance } from 'fastify';
import { canonicalId, resource, sameId, type Params } from './http.ts';
import {
  ADAPTER_ID,
  STORAGE_ID,
  adapterUri,
  driveIds,
  memoryIds,
  nicIds,
  processorIds,
  renderDrive,
  renderEthernetInterface,
  renderMemory,
  renderNetworkAdapter,
  renderPort,
  renderProcessor,
  renderSimpleStorage,
  renderStorage,
} from './render-hardware.ts';
import { REDFISH_ROOT, chassisUri, collection, systemUri, type Json } from './render-system.ts';
import { LabError, type LabState, type SystemState } from './state.ts';

/** Registers the hardware inventory resources of every system on `app`. */
export function registerHardwareRoutes(app: FastifyInstance, state: LabState): void {
  const S = `${REDFISH_ROOT}/Systems/:id`;
  const sys = (p: Params): SystemState => state.system(p.id!);
  const found = (url: string, json: Json | null): Json => {
    if (json === null) throw new LabError(404, 'ResourceMissingAtURI', [url]);
    return json;
  };
  const coll = (sub: string, type: string, name: string, ids: (s: SystemState) => string[]) => {
    resource(app, `${S}/${sub}`, {
      GET: (_req, _reply, p) => {
        const s = sys(p);
        const base = `${systemUri(s.id)}/${sub}`;
        return collection(
          type,
          base,
          name,
          ids(s).map((x) => `${base}/${x}`),
        );
      },
    });
  };

  coll('Processors', 'ProcessorCollection', 'Processor Collection', processorIds);
  resource(app, `${S}/Processors/:cpu`, {
    GET: (req, _reply, p) => found(req.url, renderProcessor(sys(p), canonicalId(processorIds(sys(p)), p.cpu!))),
  });
  coll('Memory', 'MemoryCollection', 'Memory Collection', memoryIds);
  resource(app, `${S}/Memory/:dimm`, {
    GET: (req, _reply, p) => found(req.url, renderMemory(sys(p), canonicalId(memoryIds(sys(p)), p.dimm!))),
  });
  coll('EthernetInterfaces', 'EthernetInterfaceCollection', 'Ethernet Interface Collection', nicIds);
  resource(app, `${S}/EthernetInterfaces/:nic`, {
    GET: (req, _reply, p) => found(req.url, renderEthernetInterface(sys(p), canonicalId(nicIds(sys(p)), p.nic!))),
  });
  coll('SimpleStorage', 'SimpleStorageCollection', 'Simple Storage Collection', () => [STORAGE_ID]);
  resource(app, `${S}/SimpleStorage/:sid`, {
    GET: (req, _reply, p) => found(req.url, sameId(p.sid, STORAGE_ID) ? renderSimpleStorage(sys(p)) : null),
  });
  coll('Storage', 'StorageCollection', 'Storage Collection', () => [STORAGE_ID]);
  resource(app, `${S}/Storage/:sid`, { GET: (req, _reply, p) => found(req.url, sameId(p.sid, STORAGE_ID) ? renderStorage(sys(p)) : null) });
  resource(app, `${S}/Storage/:sid/Drives/:drive`, {
    GET: (req, _reply, p) => {
      const s = sys(p);
      if (!sameId(p.sid, STORAGE_ID)) throw new LabError(404, 'ResourceMissingAtURI', [req.url]);
      return found(req.url, renderDrive(s, canonicalId(driveIds(s), p.drive!)));
    },
  });

  const C = `${REDFISH_ROOT}/Chassis/:id`;
  const chassis = (p: Params): SystemState => state.systemByChassis(p.id!);
  const adapter = (req: { url: string }, p: Params): SystemState => {
    const s = chassis(p);
    if (!sameId(p.nic, ADAPTER_ID)) throw new LabError(404, 'ResourceMissingAtURI', [req.url]);
    return s;
  };
  resource(app, `${C}/NetworkAdapters`, {
    GET: (_req, _reply, p) => {
      const s = chassis(p);
      const base = `${chassisUri(s.chassisId)}/NetworkAdapters`;
      return collection('NetworkAdapterCollection', base, 'Network Adapter Collection', [`${base}/${ADAPTER_ID}`]);
    },
  });
  resource(app, `${C}/NetworkAdapters/:nic`, { GET: (req, _reply, p) => renderNetworkAdapter(adapter(req, p)) });
  resource(app, `${C}/NetworkAdapters/:nic/Ports`, {
    GET: (req, _reply, p) => {
      const s = adapter(req, p);
      const base = `${adapterUri(s)}/Ports`;
      return collection(
        'PortCollection',
        base,
        'Port Collection',
        s.machine.nics.map((_n, i) => `${base}/${i}`),
      );
    },
  });
  resource(app, `${C}/NetworkAdapters/:nic/Ports/:port`, { GET: (req, _reply, p) => found(req.url, renderPort(adapter(req, p), p.port!)) });
}
