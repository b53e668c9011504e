/**
 * The lab's RAID volumes (DSP2046 `Volume.v1_5_0`): each system has one storage controller,
 * `RAID.Integrated.1-1`, whose Storage and Drive resources (the description's disks) are served
 * by src/lab/routes-hardware.ts; this module serves the volumes clients create on them.
 *
 * | URI (under `/redfish/v1/Systems/{id}`)     | methods |
 * |--------------------------------------------|---------|
 * | `/Storage/{sid}/Volumes`                    | GET; POST `{RAIDType, CapacityBytes?, Links: {Drives: [...]}, Name?}` → 201 + `Location` |
 * | `/Storage/{sid}/Volumes/{vid}`              | GET, DELETE → 204 |
 *
 * A volume is refused (400, nothing created) when its drives are unknown (`ResourceMissingAtURI`),
 * already in another volume (`ResourceInUse`), too few or not even for the RAID type
 * (`PropertyValueConflict`), or when `CapacityBytes` exceeds what the drives give
 * (`PropertyValueOutOfRange`). Capacity per RAID type, with n drives of the smallest size d:
 * RAID0 n·d, RAID1 d, RAID5 (n−1)·d, RAID6 (n−2)·d, RAID10 n/2·d. Without `CapacityBytes` the
 * volume takes all of it.
 */
import type { FastifyInstance } from 'fastify';
import { bodyObject, canonicalId, resource, sameId, type Params } from './http.ts';
import { REDFISH_ROOT, STATUS_OK, collection, ref, type Json } from './render-system.ts';
import { LabError, type LabState, type SystemState } from './state.ts';
import { STORAGE_ID, SUPPORTED_RAID_TYPES, driveIds, storageUri } from './render-hardware.ts';

/** Id of every system's RAID controller (a Storage resource). */
export const RAID_STORAGE_ID = STORAGE_ID;

/** One physical drive of a lab system. */
export interface LabDrive {
  readonly id: string;
  readonly capacityBytes: number;
  readonly mediaType: 'HDD' | 'SSD';
  readonly protocol: 'SAS' | 'SATA';
}

/** A volume on the RAID controller. */
export interface LabVolume {
  readonly id: string;
  readonly name: string;
  readonly raidType: RaidType;
  readonly capacityBytes: number;
  readonly driveIds: readonly string[];
}

const RAID_TYPES = SUPPORTED_RAID_TYPES;
type RaidType = (typeof RAID_TYPES)[number];

/** How many drives a RAID type needs and how many drives' worth of space it gives. */
const GEOMETRY: Readonly<Record<RaidType, { min: number; even: boolean; usable: (n: number) => number }>> = {
  RAID0: { min: 1, even: false, usable: (n) => n },
  RAID1: { min: 2, even: false, usable: () => 1 },
  RAID5: { min: 3, even: false, usable: (n) => n - 1 },
  RAID6: { min: 4, even: false, usable: (n) => n - 2 },
  RAID10: { min: 4, even: true, usable: (n) => Math.floor(n / 2) },
};

/**
 * The drives of system `s`: its description's disks (src/lab/hardware.ts), with the ids of the
 * Storage resource (src/lab/render-hardware.ts).
 */
export function labDrives(s: SystemState): LabDrive[] {
  const ids = driveIds(s);
  return s.machine.disks.map((d, i) => ({
    id: ids[i]!,
    capacityBytes: d.sizeBytes,
    mediaType: d.rotational ? 'HDD' : 'SSD',
    protocol: d.rotational ? 'SAS' : 'SATA',
  }));
}

/** The RAID volumes of every lab system. */
export class LabRaid {
  readonly #volumes = new Map<string, LabVolume[]>();
  #next = 1;

  /** Volumes of system `id`, oldest first (copies). */
  volumes(id: string): LabVolume[] {
    return [...(this.#volumes.get(id) ?? [])];
  }

  /**
   * Creates a volume on system `s` (rules in the module doc).
   * @throws LabError 400 for an impossible volume.
   */
  create(s: SystemState, body: Record<string, unknown>): LabVolume {
    const at = (p: string) => [`#/${p}`];
    const type = body.RAIDType;
    if (type === undefined) throw new LabError(400, 'PropertyMissing', ['RAIDType'], at('RAIDType'));
    if (typeof type !== 'string' || !(RAID_TYPES as readonly string[]).includes(type)) {
      throw new LabError(400, 'PropertyValueNotInList', [JSON.stringify(type), 'RAIDType'], at('RAIDType'));
    }
    const links = body.Links as { Drives?: unknown } | undefined;
    if (!Array.isArray(links?.Drives) || links.Drives.length === 0)
      throw new LabError(400, 'PropertyMissing', ['Links/Drives'], at('Links/Drives'));
    const drives = labDrives(s);
    const base = `${storageUri(s)}/Drives/`;
    const chosen: LabDrive[] = [];
    for (const d of links.Drives as unknown[]) {
      const uri = (d as { '@odata.id'?: unknown } | null)?.['@odata.id'];
      const drive =
        typeof uri === 'string' && uri.toLowerCase().startsWith(base.toLowerCase())
          ? drives.find((x) => sameId(uri.slice(base.length), x.id))
          : undefined;
      if (drive === undefined) throw new LabError(400, 'ResourceMissingAtURI', [String(uri)], at('Links/Drives'));
      if (chosen.includes(drive)) throw new LabError(400, 'PropertyValueConflict', ['Links/Drives', 'Links/Drives'], at('Links/Drives'));
      chosen.push(drive);
    }
    const used = new Set(this.volumes(s.id).flatMap((v) => v.driveIds));
    if (chosen.some((d) => used.has(d.id))) throw new LabError(400, 'ResourceInUse', [], at('Links/Drives'));
    const g = GEOMETRY[type as RaidType];
    if (chosen.length < g.min || (g.even && chosen.length % 2 !== 0))
      throw new LabError(400, 'PropertyValueConflict', ['Links/Drives', 'RAIDType'], at('Links/Drives'));
    const max = g.usable(chosen.length) * Math.min(...chosen.map((d) => d.capacityBytes));
    const cap = body.CapacityBytes;
    if (cap !== undefined && cap !== null && (typeof cap !== 'number' || !Number.isInteger(cap) || cap <= 0)) {
      throw new LabError(400, 'PropertyValueTypeError', [JSON.stringify(cap), 'CapacityBytes'], at('CapacityBytes'));
    }
    if (typeof cap === 'number' && cap > max)
      throw new LabError(400, 'PropertyValueOutOfRange', [String(cap), 'CapacityBytes'], at('CapacityBytes'));
    const name = typeof body.Name === 'string' && body.Name !== '' ? body.Name : `Volume ${this.#next}`;
    const v: LabVolume = {
      id: String(this.#next++),
      name,
      raidType: type as RaidType,
      capacityBytes: typeof cap === 'number' ? cap : max,
      driveIds: chosen.map((d) => d.id),
    };
    this.#volumes.set(s.id, [...this.volumes(s.id), v]);
    return v;
  }

  /** Deletes volume `vid` of system `id`. @returns false when there is none. */
  delete(id: string, vid: string): boolean {
    const list = this.volumes(id);
    const rest = list.filter((v) => v.id !== vid);
    this.#volumes.set(id, rest);
    return rest.length !== list.length;
  }
}

function renderVolume(s: SystemState, v: LabVolume): Json {
  return {
    '@odata.type': '#Volume.v1_5_0.Volume',
    '@odata.id': `${storageUri(s)}/Volumes/${v.id}`,
    Id: v.id,
    Name: v.name,
    RAIDType: v.raidType,
    VolumeType:
      v.raidType === 'RAID0'
        ? 'NonRedundant'
        : v.raidType === 'RAID1'
          ? 'Mirrored'
          : v.raidType === 'RAID10'
            ? 'SpannedMirrors'
            : 'StripedWithParity',
    CapacityBytes: v.capacityBytes,
    Encrypted: false,
    Identifiers: [{ DurableNameFormat: 'UUID', DurableName: `${s.uuid.slice(0, 24)}${v.id.padStart(12, '0')}` }],
    Status: STATUS_OK,
    Links: { Drives: v.driveIds.map((d) => ref(`${storageUri(s)}/Drives/${d}`)) },
  };
}

/** Registers the storage resources (module table) on `app`. */
export function registerRaidRoutes(app: FastifyInstance, state: LabState, raid: LabRaid): void {
  const R = REDFISH_ROOT;
  const sys = (p: Params): SystemState => state.system(p.id!);
  const ctl = (req: { url: string }, p: Params): SystemState => {
    const s = sys(p);
    if (!sameId(p.sid, RAID_STORAGE_ID)) throw new LabError(404, 'ResourceMissingAtURI', [req.url.split('?')[0]!]);
    return s;
  };
  resource(app, `${R}/Systems/:id/Storage/:sid/Volumes`, {
    GET: (req, _reply, p) => {
      const s = ctl(req, p);
      return collection(
        'VolumeCollection',
        `${storageUri(s)}/Volumes`,
        'Volume Collection',
        raid.volumes(s.id).map((v) => `${storageUri(s)}/Volumes/${v.id}`),
      );
    },
    POST: (req, reply, p) => {
      const s = ctl(req, p);
      const v = raid.create(s, bodyObject(req));
      const json = renderVolume(s, v);
      void reply.code(201).header('Location', json['@odata.id']).type('application/json; charset=utf-8').send(json);
      return undefined;
    },
  });
  resource(app, `${R}/Systems/:id/Storage/:sid/Volumes/:vid`, {
    GET: (req, _reply, p) => {
      const s = ctl(req, p);
      const v = raid.volumes(s.id).find((x) => sameId(p.vid, x.id));
      if (v === undefined) throw new LabError(404, 'ResourceMissingAtURI', [req.url]);
      return renderVolume(s, v);
    },
    DELETE: (req, reply, p) => {
      const s = ctl(req, p);
      if (
        !raid.delete(
          s.id,
          canonicalId(
            raid.volumes(s.id).map((v) => v.id),
            p.vid!,
          ),
        )
      )
        throw new LabError(404, 'ResourceMissingAtURI', [req.url]);
      void reply.code(204).send();
      return undefined;
    },
  });
}
