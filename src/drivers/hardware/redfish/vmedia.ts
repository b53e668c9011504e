/**
 * Virtual media of the `redfish` hardware type, as sushy 4.3 and Ironic 21.4's
 * `redfish_boot` find and drive it (`ironic/drivers/modules/redfish/boot.py` in
 * https://opendev.org/openstack/ironic):
 *
 * - devices: the `VirtualMedia` collection of every Manager in the ComputerSystem's
 *   `Links.ManagedBy` (falling back to the system's own `VirtualMedia` collection, DSP2046
 *   ComputerSystem ≥ 1.13); a device serves `cdrom` when its `MediaTypes` has `CD` or `DVD`,
 *   `floppy` for `Floppy`, `usb` for `USBStick`;
 * - insert: `POST` of `#VirtualMedia.InsertMedia` with `{"Image", "Inserted": true,
 *   "WriteProtected": true}` when the device advertises the action, else a `PATCH` of those
 *   properties (older BMCs); an image already inserted is ejected first, the same image is left;
 * - eject: `POST` of `#VirtualMedia.EjectMedia` `{}`, else `PATCH {"Image": null, "Inserted": false}`.
 *
 * Where a system's devices are (their paths and media types) is remembered per BMC address and
 * system for {@link TOPOLOGY_TTL_MS}: a later insert reads only the device it uses (its state
 * is always read fresh) instead of the system, its managers, their collections and every
 * device — 1 request instead of 5 on a typical BMC. A device that is gone (404) or no longer
 * serves the type drops the memory and the devices are found again.
 */
import { InvalidInputError } from '../../../domain/errors.ts';
import { HardwareError, type DriverNode } from '../../../domain/hardware/interfaces.ts';
import type { VirtualMediaDeviceType, VirtualMediaInfo, VirtualMediaInterface } from '../../../domain/hardware/vmedia.ts';
import type { RedfishClient, RequestContext } from './client.ts';
import { parseRedfishDriverInfo, type RedfishDriverInfo } from './driver-info.ts';
import { odataId, readSystem } from './system.ts';

type Json = Record<string, unknown>;

const TYPE_OF: Readonly<Record<string, VirtualMediaDeviceType>> = { CD: 'cdrom', DVD: 'cdrom', Floppy: 'floppy', USBStick: 'usb' };

interface Device extends VirtualMediaInfo {
  readonly json: Json;
}

/** How long where a system's virtual media devices are is remembered, ms. */
export const TOPOLOGY_TTL_MS = 10 * 60 * 1000;

/** Remembered devices of a system: paths and media types, never their state. */
interface Topology {
  readonly devices: ReadonlyArray<Pick<VirtualMediaInfo, 'path' | 'deviceTypes'>>;
  readonly at: number;
}

const topologyKey = (info: RedfishDriverInfo): string => `${info.address}\n${info.systemId}`;

/** The redfish virtual media interface. */
export class RedfishVirtualMedia implements VirtualMediaInterface {
  readonly #client: RedfishClient;
  readonly #topology = new Map<string, Topology>();

  constructor(client: RedfishClient) {
    this.#client = client;
  }

  /** See {@link VirtualMediaInterface.list}. */
  async list(node: DriverNode): Promise<VirtualMediaInfo[]> {
    const info = parseRedfishDriverInfo(node.driverInfo);
    const devices = await this.#devices(info, { nodeUuid: node.uuid, operation: 'list virtual media' });
    return devices.map(({ path, deviceTypes, image, inserted }) => ({ path, deviceTypes, image, inserted }));
  }

  /** See {@link VirtualMediaInterface.insert}. */
  async insert(node: DriverNode, deviceType: VirtualMediaDeviceType, imageUrl: string): Promise<void> {
    if (!/^https?:\/\/\S+$/.test(imageUrl))
      throw new InvalidInputError(`The virtual media image must be an http(s) URL, got ${JSON.stringify(imageUrl)}.`);
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'insert virtual media' };
    const dev =
      (await this.#remembered(info, ctx, deviceType)) ?? (await this.#devices(info, ctx)).find((d) => d.deviceTypes.includes(deviceType));
    if (dev === undefined)
      throw new InvalidInputError(`Node ${node.uuid} has no virtual media device of type ${deviceType}.`, 'InvalidParameterValue');
    if (dev.inserted && dev.image === imageUrl) return;
    if (dev.inserted) await this.#eject(info, ctx, dev);
    const action = actionTarget(dev.json, '#VirtualMedia.InsertMedia');
    const body = { Image: imageUrl, Inserted: true, WriteProtected: true };
    if (action !== null) await this.#client.send(info, ctx, 'POST', action, body);
    else await this.#client.send(info, ctx, 'PATCH', dev.path, body);
  }

  /** See {@link VirtualMediaInterface.eject}. */
  async eject(node: DriverNode, deviceType?: VirtualMediaDeviceType): Promise<void> {
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'eject virtual media' };
    for (const dev of await this.#devices(info, ctx)) {
      if (deviceType !== undefined && !dev.deviceTypes.includes(deviceType)) continue;
      if (dev.inserted || dev.image !== null) await this.#eject(info, ctx, dev);
    }
  }

  async #eject(info: RedfishDriverInfo, ctx: RequestContext, dev: Device): Promise<void> {
    const action = actionTarget(dev.json, '#VirtualMedia.EjectMedia');
    if (action !== null) await this.#client.send(info, ctx, 'POST', action, {});
    else await this.#client.send(info, ctx, 'PATCH', dev.path, { Image: null, Inserted: false });
  }

  /**
   * The device of `deviceType` where the remembered topology says it is, read fresh; null when
   * nothing is remembered (or it is stale), or the device is gone or no longer of that type
   * (the memory is then dropped).
   */
  async #remembered(info: RedfishDriverInfo, ctx: RequestContext, deviceType: VirtualMediaDeviceType): Promise<Device | null> {
    const key = topologyKey(info);
    const known = this.#topology.get(key);
    if (known === undefined || Date.now() - known.at > TOPOLOGY_TTL_MS) return null;
    const where = known.devices.find((d) => d.deviceTypes.includes(deviceType));
    if (where === undefined) return null;
    try {
      const dev = deviceOf(where.path, (await this.#client.send(info, ctx, 'GET', where.path)).json ?? {});
      if (dev.deviceTypes.includes(deviceType)) return dev;
    } catch (err) {
      if (!(err instanceof HardwareError && err.httpStatus === 404)) throw err;
    }
    this.#topology.delete(key);
    return null;
  }

  async #devices(info: RedfishDriverInfo, ctx: RequestContext): Promise<Device[]> {
    const sys = await readSystem(this.#client, info, ctx);
    const managers = (((sys.json.Links as Json | undefined)?.ManagedBy as unknown[]) ?? [])
      .map(odataId)
      .filter((x): x is string => x !== null);
    const collections: string[] = [];
    for (const m of managers) {
      const mj = (await this.#client.send(info, ctx, 'GET', m)).json ?? {};
      const c = odataId(mj.VirtualMedia);
      if (c !== null) collections.push(c);
    }
    const own = odataId(sys.json.VirtualMedia);
    if (collections.length === 0 && own !== null) collections.push(own);
    const out: Device[] = [];
    for (const c of collections) {
      const coll = (await this.#client.send(info, ctx, 'GET', c)).json ?? {};
      for (const m of Array.isArray(coll.Members) ? (coll.Members as unknown[]) : []) {
        const p = odataId(m);
        if (p === null) continue;
        out.push(deviceOf(p, (await this.#client.send(info, ctx, 'GET', p)).json ?? {}));
      }
    }
    this.#topology.set(topologyKey(info), { devices: out.map(({ path, deviceTypes }) => ({ path, deviceTypes })), at: Date.now() });
    return out;
  }
}

/** A device as its resource `json` at `path` describes it. */
function deviceOf(path: string, json: Json): Device {
  const types = Array.isArray(json.MediaTypes)
    ? (json.MediaTypes as unknown[]).map((t) => TYPE_OF[String(t)]).filter((t): t is VirtualMediaDeviceType => t !== undefined)
    : [];
  return {
    path,
    json,
    deviceTypes: [...new Set(types)],
    image: typeof json.Image === 'string' && json.Image !== '' ? json.Image : null,
    inserted: json.Inserted === true,
  };
}

function actionTarget(json: Json, name: string): string | null {
  const t = ((json.Actions as Json | undefined)?.[name] as Json | undefined)?.target;
  return typeof t === 'string' && t !== '' ? t : null;
}
