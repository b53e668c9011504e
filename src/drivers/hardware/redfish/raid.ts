/**
 * RAID interface of the `redfish` hardware type (Ironic 21.4 `RedfishRAID`), over DSP2046
 * `Storage`, `Drive` and `Volume`:
 *
 * - the controller: the first member of the system's `Storage` collection that has a
 *   `Volumes` collection (or the one a logical disk names in `controller`, by `Id` or path);
 * - drives per logical disk: `physical_disks` when given (drive `Id`s or paths), else the
 *   free drives (in no volume yet), in the controller's order, as many as the RAID level needs
 *   (`number_of_physical_disks` when given) and, for a size in GiB, more until they give it;
 *   `"MAX"` takes every free drive (two for RAID 1, an even count for RAID 1+0);
 * - create: `POST <Volumes>` with `RAIDType` (`RAID0`, `RAID1`, `RAID5`, `RAID6`, `RAID10`),
 *   `CapacityBytes` (GiB × 2³⁰, left out for `"MAX"`), `Links.Drives` and `Name`
 *   (`volume_name`); the new volume is read back from the collection, so a BMC that answers
 *   201, 202 or 204 all work. A refusal names the logical disk and carries the BMC's message;
 * - delete: `DELETE` of every member of every controller's `Volumes`.
 *
 * Root volume first, then the sized disks, `"MAX"` disks last (Ironic's order).
 */
import { InvalidInputError } from '../../../domain/errors.ts';
import { HardwareError, type DriverNode } from '../../../domain/hardware/interfaces.ts';
import {
  raidGeometry,
  type LogicalDiskCreated,
  type LogicalDiskTarget,
  type RaidInterface,
  type RaidTarget,
} from '../../../domain/hardware/raid.ts';
import type { RedfishClient, RequestContext } from './client.ts';
import { parseRedfishDriverInfo, type RedfishDriverInfo } from './driver-info.ts';
import { invalidResponse, odataId, readSystem } from './system.ts';

type Json = Record<string, unknown>;
const GIB = 1024 ** 3;

interface Drive {
  readonly path: string;
  readonly id: string;
  readonly capacityBytes: number;
}

interface Controller {
  readonly path: string;
  readonly id: string;
  readonly volumesPath: string;
  readonly drives: Drive[];
}

/** The redfish RAID interface. */
export class RedfishRaid implements RaidInterface {
  readonly #client: RedfishClient;

  constructor(client: RedfishClient) {
    this.#client = client;
  }

  /** See {@link RaidInterface.createConfiguration}; rules in the module doc. */
  async createConfiguration(node: DriverNode, target: RaidTarget): Promise<LogicalDiskCreated[]> {
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'create RAID configuration' };
    const controllers = await this.#controllers(info, ctx);
    if (controllers.length === 0) throw invalidResponse(info, ctx, 'no Storage controller with a Volumes collection');
    const ordered = [...target.logical_disks].sort((a, b) => rank(a) - rank(b));
    const created: LogicalDiskCreated[] = [];
    for (const disk of ordered) {
      const index = target.logical_disks.indexOf(disk);
      const ctl = pickController(controllers, disk, node.uuid, index);
      const before = await this.#volumes(info, ctx, ctl);
      const used = new Set(before.flatMap((v) => v.drives));
      const drives = pickDrives(ctl, disk, used, node.uuid, index);
      const body: Json = {
        RAIDType: `RAID${disk.raid_level === '1+0' ? '10' : disk.raid_level}`,
        Links: { Drives: drives.map((d) => ({ '@odata.id': d.path })) },
        ...(disk.size_gb !== 'MAX' ? { CapacityBytes: disk.size_gb * GIB } : {}),
        ...(disk.volume_name !== undefined ? { Name: disk.volume_name } : {}),
      };
      try {
        await this.#client.send(info, ctx, 'POST', ctl.volumesPath, body);
      } catch (err) {
        if (!(err instanceof HardwareError)) throw err;
        throw new HardwareError(
          `Cannot create logical disk ${index} (RAID ${disk.raid_level}, ${disk.size_gb === 'MAX' ? 'MAX' : `${disk.size_gb} GiB`}) on ${drives.length} drive(s): ${err.message}`,
          {
            reason: err.reason,
            nodeUuid: node.uuid,
            operation: ctx.operation,
            httpStatus: err.httpStatus,
          },
        );
      }
      const after = await this.#volumes(info, ctx, ctl);
      const known = new Set(before.map((v) => v.path));
      const fresh = after.find((v) => !known.has(v.path));
      if (fresh === undefined) throw invalidResponse(info, ctx, `no new volume in ${ctl.volumesPath} after creating logical disk ${index}`);
      created[index] = {
        size_gb: Math.floor(fresh.capacityBytes / GIB),
        raid_level: disk.raid_level,
        volume_name: fresh.name,
        is_root_volume: disk.is_root_volume === true,
        controller: ctl.path,
        physical_disks: fresh.drives,
      };
    }
    return created;
  }

  /** See {@link RaidInterface.deleteConfiguration}. */
  async deleteConfiguration(node: DriverNode): Promise<void> {
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'delete RAID configuration' };
    for (const ctl of await this.#controllers(info, ctx)) {
      for (const v of await this.#volumes(info, ctx, ctl)) await this.#client.send(info, ctx, 'DELETE', v.path);
    }
  }

  async #get(info: RedfishDriverInfo, ctx: RequestContext, path: string): Promise<Json> {
    const res = await this.#client.send(info, ctx, 'GET', path);
    if (res.json === null) throw invalidResponse(info, ctx, `an empty resource at ${path}`);
    return res.json;
  }

  async #controllers(info: RedfishDriverInfo, ctx: RequestContext): Promise<Controller[]> {
    const sys = await readSystem(this.#client, info, ctx);
    const storagePath = odataId(sys.json.Storage);
    if (storagePath === null) throw invalidResponse(info, ctx, 'a ComputerSystem without a Storage collection');
    const out: Controller[] = [];
    for (const m of members(await this.#get(info, ctx, storagePath))) {
      const st = await this.#get(info, ctx, m);
      const volumesPath = odataId(st.Volumes);
      if (volumesPath === null) continue;
      const drives: Drive[] = [];
      for (const d of Array.isArray(st.Drives) ? (st.Drives as unknown[]) : []) {
        const p = odataId(d);
        if (p === null) continue;
        const dj = await this.#get(info, ctx, p);
        drives.push({
          path: p,
          id: String(dj.Id ?? p.split('/').pop()),
          capacityBytes: typeof dj.CapacityBytes === 'number' ? dj.CapacityBytes : 0,
        });
      }
      out.push({ path: m, id: String(st.Id ?? m.split('/').pop()), volumesPath, drives });
    }
    return out;
  }

  async #volumes(
    info: RedfishDriverInfo,
    ctx: RequestContext,
    ctl: Controller,
  ): Promise<{ path: string; name: string; capacityBytes: number; drives: string[] }[]> {
    const out = [];
    for (const p of members(await this.#get(info, ctx, ctl.volumesPath))) {
      const v = await this.#get(info, ctx, p);
      const links = (v.Links as Json | undefined)?.Drives;
      out.push({
        path: p,
        name: typeof v.Name === 'string' ? v.Name : String(v.Id ?? ''),
        capacityBytes: typeof v.CapacityBytes === 'number' ? v.CapacityBytes : 0,
        drives: Array.isArray(links) ? links.map(odataId).filter((x): x is string => x !== null) : [],
      });
    }
    return out;
  }
}

function members(coll: Json): string[] {
  return Array.isArray(coll.Members) ? (coll.Members as unknown[]).map(odataId).filter((x): x is string => x !== null) : [];
}

function rank(d: LogicalDiskTarget): number {
  if (d.is_root_volume === true) return 0;
  return d.size_gb === 'MAX' ? 2 : 1;
}

function pickController(controllers: Controller[], disk: LogicalDiskTarget, nodeUuid: string, index: number): Controller {
  if (disk.controller === undefined) return controllers[0]!;
  const c = controllers.find((x) => x.id === disk.controller || x.path === disk.controller);
  if (c === undefined) {
    throw new InvalidInputError(
      `Logical disk ${index} of node ${nodeUuid} names controller ${disk.controller}, which the BMC does not have; it has ${controllers.map((x) => x.id).join(', ')}.`,
    );
  }
  return c;
}

function pickDrives(ctl: Controller, disk: LogicalDiskTarget, used: Set<string>, nodeUuid: string, index: number): Drive[] {
  if (disk.physical_disks !== undefined) {
    return disk.physical_disks.map((name) => {
      const d = ctl.drives.find((x) => x.id === name || x.path === name);
      if (d === undefined)
        throw new InvalidInputError(
          `Logical disk ${index} of node ${nodeUuid} names drive ${name}, which controller ${ctl.id} does not have.`,
        );
      return d;
    });
  }
  const free = ctl.drives.filter((d) => !used.has(d.path));
  if (free.length === 0) {
    throw new InvalidInputError(
      `Logical disk ${index} of node ${nodeUuid} cannot be built: every drive of controller ${ctl.id} is already in a volume.`,
    );
  }
  const g = raidGeometry(disk.raid_level);
  let n = disk.number_of_physical_disks ?? g.minDrives;
  if (disk.number_of_physical_disks === undefined) {
    if (disk.size_gb === 'MAX') n = disk.raid_level === '1' ? 2 : Math.max(g.minDrives, free.length);
    else {
      const size = disk.size_gb * GIB;
      const fits = (k: number) => g.usable(k) * Math.min(...free.slice(0, k).map((d) => d.capacityBytes)) >= size;
      while (n < free.length && !fits(n)) n += 1;
    }
    if (g.even && n % 2 !== 0) n = n + 1 <= free.length ? n + 1 : n - 1;
  }
  // Too few free drives: send what there is and let the BMC refuse with its reason.
  return free.slice(0, Math.max(1, Math.min(n, free.length)));
}
