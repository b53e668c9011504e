/**
 * Virtual media of the `redfish` hardware type, as sushy 4.3 and Ironic 21.4's
 * `redfish_boot` find and drive it (reference/ironic.md §7.1):
 *
 * - devices: the `VirtualMedia` collection of every Manager in the ComputerSystem's
 *   `Links.ManagedBy` (falling back to the system's own `VirtualMedia` collection, DSP2046
 *   ComputerSystem ≥ 1.13); a device serves `cdrom` when its `MediaTypes` has `CD` or `DVD`,
 *   `floppy` for `Floppy`, `usb` for `USBStick`;
 * - insert: `POST` of `#VirtualMedia.InsertMedia` with `{"Image", "Inserted": true,
 *   "WriteProtected": true}` when the device advertises the action, else a `PATCH` of those
 *   properties (older BMCs); an image already inserted is ejected first, the same image is left;
 * - eject: `POST` of `#VirtualMedia.EjectMedia` `{}`, else `PATCH {"Image": null, "Inserted": false}`.
 */
import { InvalidInputError } from '../../../domain/errors.ts';
import type { DriverNode } from '../../../domain/hardware/interfaces.ts';
import type { VirtualMediaDeviceType, VirtualMediaInfo, VirtualMediaInterface } from '../../../domain/hardware/vmedia.ts';
import type { RedfishClient, RequestContext } from './client.ts';
import { parseRedfishDriverInfo, type RedfishDriverInfo } from './driver-info.ts';
import { odataId, readSystem } from './system.ts';

type Json = Record<string, unknown>;

const TYPE_OF: Readonly<Record<string, VirtualMediaDeviceType>> = { CD: 'cdrom', DVD: 'cdrom', Floppy: 'floppy', USBStick: 'usb' };

interface Device extends VirtualMediaInfo {
  readonly json: Json;
}

/** The redfish virtual media interface. */
export class RedfishVirtualMedia implements VirtualMediaInterface {
  readonly #client: RedfishClient;

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
    if (!/^https?:\/\/\S+$/.test(imageUrl)) throw new InvalidInputError(`The virtual media image must be an http(s) URL, got ${JSON.stringify(imageUrl)}.`);
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'insert virtual media' };
    const devices = await this.#devices(info, ctx);
    const dev = devices.find((d) => d.deviceTypes.includes(deviceType));
    if (dev === undefined) throw new InvalidInputError(`Node ${node.uuid} has no virtual media device of type ${deviceType}.`, 'InvalidParameterValue');
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

  async #devices(info: RedfishDriverInfo, ctx: RequestContext): Promise<Device[]> {
    const sys = await readSystem(this.#client, info, ctx);
    const managers = (((sys.json.Links as Json | undefined)?.ManagedBy as unknown[]) ?? []).map(odataId).filter((x): x is string => x !== null);
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
        const json = (await this.#client.send(info, ctx, 'GET', p)).json ?? {};
        const types = Array.isArray(json.MediaTypes) ? (json.MediaTypes as unknown[]).map((t) => TYPE_OF[String(t)]).filter((t): t is VirtualMediaDeviceType => t !== undefined) : [];
        out.push({ path: p, json, deviceTypes: [...new Set(types)], image: typeof json.Image === 'string' && json.Image !== '' ? json.Image : null, inserted: json.Inserted === true });
      }
    }
    return out;
  }
}

function actionTarget(json: Json, name: string): string | null {
  const t = ((json.Actions as Json | undefined)?.[name] as Json | undefined)?.target;
  return typeof t === 'string' && t !== '' ? t : null;
}
