/**
 * The storage side of redfish inspection (./inspect.ts): the inventory's `disks` and the root
 * device whose size becomes `local_gb`, read from a ComputerSystem's `Storage` (DSP2046
 * `Storage`, `Drive`, `Volume`) and `SimpleStorage` resources.
 *
 * The root device is chosen as Ironic 21.4's redfish inspect interface does
 * (`RedfishInspect._detect_local_gb` in `ironic/drivers/modules/redfish/inspect.py`, over
 * sushy 4.3's size lists):
 *
 * 1. simple storage: the smallest `Devices[]` entry of any `SimpleStorage` member whose
 *    `Status.State` is `Enabled` and whose `CapacityBytes` is at least 4 GiB;
 * 2. storage: the smallest `Volume` (RAID volume) of any `Storage` member of at least 4 GiB;
 *    only when there is none, the smallest `Drive` of at least 4 GiB;
 * 3. the smaller of (1) and (2) when both exist, else the one that exists, else none (a
 *    disk-less node: `local_gb` 0).
 *
 * `local_gb` is then the chosen size in GiB minus 1 (src/domain/inspection/inventory.ts), so
 * the result is handed over as IPA's `root_disk` plugin data.
 *
 * `disks` lists the `Storage` drives (name, size, rotational = `MediaType` HDD, model, serial,
 * vendor, NAA `wwn`), or the `SimpleStorage` devices when there are no drives.
 *
 * As in Ironic, each of the three sources is best effort: a BMC that refuses or garbles one of
 * them (a `Volumes` collection it does not implement, a drive that answers 500) leaves that
 * source out; the URIs left out are reported. An unreachable BMC still fails the inspection.
 */
import { HardwareError } from '../../../domain/hardware/interfaces.ts';
import { odataId } from './system.ts';

type Json = Record<string, unknown>;

/** Smallest size a root device may have, bytes (Ironic's and IPA's 4 GiB). */
export const MIN_ROOT_BYTES = 4 * 1024 ** 3;
/** Most members read from one collection. */
export const MAX_MEMBERS = 256;

/** Reads Redfish resources of one BMC. */
export interface RedfishReader {
  /**
   * `GET path`: the JSON body, `{}` when the BMC sent none.
   * @throws HardwareError when the BMC cannot be reached, refuses or sends no JSON object
   */
  get(path: string): Promise<Json>;
}

/** What the storage resources of a system say. */
export interface StorageFacts {
  /** IPA-format disks. */
  readonly disks: Json[];
  /** The root device (an IPA-format disk), or null when nothing has 4 GiB. */
  readonly rootDisk: Json | null;
  /** URIs of storage resources the BMC refused or garbled (left out, as Ironic does). */
  readonly unreadable: string[];
}

/** The members of the collection `ref` points to (none without a link). */
export async function readMembers(r: RedfishReader, ref: unknown): Promise<Json[]> {
  const path = odataId(ref);
  if (path === null) return [];
  const coll = await r.get(path);
  const out: Json[] = [];
  for (const m of Array.isArray(coll.Members) ? coll.Members.slice(0, MAX_MEMBERS) : []) {
    const p = odataId(m);
    if (p !== null) out.push(await r.get(p));
  }
  return out;
}

/** Read the disks and choose the root device of `system` (see the module documentation). */
export async function readStorage(r: RedfishReader, system: Json): Promise<StorageFacts> {
  const unreadable: string[] = [];
  /** `fn()`, or `fallback` when the BMC refused or garbled a resource of `what`. */
  const bestEffort = async <T>(what: unknown, fallback: T, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof HardwareError) || err.reason === 'unreachable') throw err;
      unreadable.push(odataId(what) ?? String(what));
      return fallback;
    }
  };

  const storages = await bestEffort(system.Storage, [], () => readMembers(r, system.Storage));
  const drives: Json[] = [];
  const driveDocs: Json[] = [];
  let drivesOk = true;
  const volumes: Json[] = [];
  let volumesOk = true;
  for (const storage of storages) {
    drivesOk &&= await bestEffort(storage.Drives, false, async () => {
      for (const ref of Array.isArray(storage.Drives) ? storage.Drives.slice(0, MAX_MEMBERS) : []) {
        const path = odataId(ref);
        if (path !== null) drives.push(await r.get(path));
      }
      return true;
    });
    volumesOk &&= await bestEffort(storage.Volumes, false, async () => {
      volumes.push(...(await readMembers(r, storage.Volumes)));
      return true;
    });
  }
  for (const d of drives) driveDocs.push(driveDisk(d));
  const simple = await bestEffort(system.SimpleStorage, [], () => readMembers(r, system.SimpleStorage));
  const devices = simple.flatMap((ss) => (Array.isArray(ss.Devices) ? (ss.Devices as Json[]) : []));

  const simpleRoot = smallest(
    devices.filter((d) => (d.Status as Json | undefined)?.State === 'Enabled'),
    (d) => disk(d.Name, d.CapacityBytes, false, d.Model, null, d.Manufacturer, null),
  );
  const storageRoot =
    (volumesOk ? smallest(volumes, (v) => disk(v.Name ?? v.Id, v.CapacityBytes, false, null, null, null, naaOf(v))) : null) ??
    (drivesOk ? smallest(drives, driveDisk) : null);
  const rootDisk =
    simpleRoot !== null && storageRoot !== null
      ? (simpleRoot.size as number) < (storageRoot.size as number)
        ? simpleRoot
        : storageRoot
      : (simpleRoot ?? storageRoot);

  const disks =
    driveDocs.length > 0 ? driveDocs : devices.map((d) => disk(d.Name, d.CapacityBytes, false, d.Model, null, d.Manufacturer, null));
  return { disks, rootDisk, unreadable };
}

/** The smallest of `items` whose `CapacityBytes` is at least {@link MIN_ROOT_BYTES}, as a disk. */
function smallest(items: readonly Json[], toDisk: (j: Json) => Json): Json | null {
  let best: Json | null = null;
  for (const item of items) {
    const size = item.CapacityBytes;
    if (typeof size !== 'number' || !Number.isInteger(size) || size < MIN_ROOT_BYTES) continue;
    if (best === null || size < (best.CapacityBytes as number)) best = item;
  }
  return best === null ? null : toDisk(best);
}

function naaOf(j: Json): string | null {
  const ids = Array.isArray(j.Identifiers) ? (j.Identifiers as Json[]) : [];
  const naa = ids.find((i) => i.DurableNameFormat === 'NAA')?.DurableName;
  return typeof naa === 'string' ? `0x${naa}` : null;
}

function driveDisk(d: Json): Json {
  return disk(d.Name ?? d.Id, d.CapacityBytes, d.MediaType === 'HDD', d.Model, d.SerialNumber, d.Manufacturer, naaOf(d));
}

/** An IPA-format disk (`ironic_python_agent.hardware.BlockDevice`); sizes are bytes. */
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
