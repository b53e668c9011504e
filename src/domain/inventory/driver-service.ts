/**
 * `DriverService`: drivers (hardware types) and conductors as `GET /v1/drivers` and
 * `GET /v1/conductors` show them.
 *
 * Source: https://docs.openstack.org/api-ref/baremetal/#drivers-drivers and "Conductors": a driver
 * is listed when at least one live conductor serves it (`hosts` = those conductors); a single
 * driver adds its default and enabled interfaces; `properties` is the `driver_info` keys of its
 * default interfaces with descriptions; `raid/logical_disk_properties` the keys of a logical
 * disk of `target_raid_config` (Ironic's RAID schema, as esi accepts it: src/domain/hardware/raid.ts).
 * Both are system-level resources (rules `baremetal:driver:get`, `:get_properties`,
 * `:get_raid_logical_disk_properties`, `baremetal:conductor:get`). A driver no live conductor
 * serves is 404 (for properties and vendor passthru worded as Ironic's, "The driver 'x' is unknown.").
 */
import type { AuthContext } from '../auth.ts';
import { NotFoundError } from '../errors.ts';
import type { HardwareRegistry, HardwareType, InterfaceKind } from '../hardware/interfaces.ts';
import type { Policy } from '../policy/types.ts';
import type { ConductorDirectory } from './conductors.ts';
import type { Conductor } from './model.ts';

/** A driver as the API shows it. */
export interface DriverInfo {
  readonly name: string;
  /** Hostnames of live conductors serving it, sorted. */
  readonly hosts: readonly string[];
  /** Enabled implementations per interface kind; the first is the default. */
  readonly interfaces: Readonly<Record<InterfaceKind, readonly string[]>>;
}

/**
 * Properties of a logical disk (Ironic 21.4 `raid_config_schema.json` descriptions); `raid_level`
 * lists the levels esi's drivers build (Ironic also lists JBOD, 2, 5+0 and 6+0).
 */
export const RAID_LOGICAL_DISK_PROPERTIES: Readonly<Record<string, string>> = Object.freeze({
  raid_level: "RAID level for the logical disk. Valid values are '0', '1', '5', '6' and '1+0'. Required.",
  size_gb:
    "Size in GiB (Integer) for the logical disk. Use 'MAX' as size_gb if this logical disk is supposed to use the rest of the space available. Required.",
  volume_name: 'Name of the volume to be created. If this is not specified, it will be auto-generated. Optional.',
  is_root_volume: 'Specifies whether this disk is a root volume. By default, this is False. Optional.',
  share_physical_disks:
    'Specifies whether other logical disks can share physical disks with this logical disk. By default, this is False. Optional.',
  disk_type:
    "The type of disk preferred. Valid values are 'hdd' and 'ssd'. If this is not specified, disk type will not be a selection criterion for choosing backing physical disks. Optional.",
  interface_type:
    "The interface type of disk. Valid values are 'sata', 'scsi' and 'sas'. If this is not specified, interface type will not be a selection criterion for choosing backing physical disks. Optional.",
  number_of_physical_disks:
    'Number of physical disks to use for this logical disk. By default, the driver uses the minimum number of disks required for that RAID level. Optional.',
  controller:
    'Controller to use for this logical disk. If not specified, the driver will choose a suitable RAID controller on the bare metal node. Optional.',
  physical_disks:
    'The physical disks to use for this logical disk. If not specified, the driver will choose suitable physical disks to use. Optional.',
});

/** Drivers and conductors; see the module documentation. */
export class DriverService {
  constructor(
    private readonly hardware: HardwareRegistry,
    private readonly conductors: ConductorDirectory,
    private readonly policy: Policy,
  ) {}

  /** Drivers served by at least one live conductor, sorted by name. */
  async list(ctx: AuthContext): Promise<DriverInfo[]> {
    this.policy.authorize('baremetal:driver:get', {}, ctx);
    const out: DriverInfo[] = [];
    for (const name of this.hardware.names()) {
      const hosts = await this.conductors.hostsFor(name);
      if (hosts.length > 0) out.push({ name, hosts, interfaces: this.hardware.get(name).enabledInterfaces });
    }
    return out;
  }

  /** One driver. @throws NotFoundError (DriverNotFound) when not enabled or not served */
  async get(ctx: AuthContext, name: string): Promise<DriverInfo> {
    this.policy.authorize('baremetal:driver:get', {}, ctx);
    return this.served(name);
  }

  /** The `driver_info` keys of the driver's default interfaces, with their descriptions. */
  async properties(ctx: AuthContext, name: string): Promise<Record<string, string>> {
    return (await this.hardwareOf(ctx, name, 'baremetal:driver:get_properties')).driverProperties();
  }

  /** The keys of a logical disk in the driver's RAID configurations, with their descriptions. */
  async raidLogicalDiskProperties(ctx: AuthContext, name: string): Promise<Record<string, string>> {
    await this.hardwareOf(ctx, name, 'baremetal:driver:get_raid_logical_disk_properties');
    return { ...RAID_LOGICAL_DISK_PROPERTIES };
  }

  /**
   * A served driver's hardware type, once the caller passes `rule`.
   * @throws ForbiddenError; NotFoundError ("The driver 'x' is unknown.") when no live conductor serves it
   */
  async hardwareOf(ctx: AuthContext, name: string, rule: string): Promise<HardwareType> {
    this.policy.authorize(rule, {}, ctx);
    if (!this.hardware.names().includes(name) || (await this.conductors.hostsFor(name)).length === 0)
      throw new NotFoundError('driver', name, `The driver '${name}' is unknown.`, 'DriverNotFound');
    return this.hardware.get(name);
  }

  private async served(name: string): Promise<DriverInfo> {
    if (!this.hardware.names().includes(name))
      throw new NotFoundError('driver', name, `Could not find the following driver(s) or hardware type(s): ${name}.`, 'DriverNotFound');
    const hosts = await this.conductors.hostsFor(name);
    if (hosts.length === 0)
      throw new NotFoundError('driver', name, `Could not find the following driver(s) or hardware type(s): ${name}.`, 'DriverNotFound');
    return { name, hosts, interfaces: this.hardware.get(name).enabledInterfaces };
  }

  /** Every registered conductor with liveness, sorted by hostname (`baremetal:conductor:get`). */
  async listConductors(ctx: AuthContext): Promise<Array<Conductor & { alive: boolean }>> {
    this.policy.authorize('baremetal:conductor:get', {}, ctx);
    return this.conductors.list();
  }

  /** One conductor. @throws NotFoundError (ConductorNotFound) */
  async getConductor(ctx: AuthContext, hostname: string): Promise<Conductor & { alive: boolean }> {
    this.policy.authorize('baremetal:conductor:get', {}, ctx);
    const c = await this.conductors.get(hostname);
    if (c === null) throw new NotFoundError('conductor', hostname, `Conductor ${hostname} could not be found.`, 'ConductorNotFound');
    return c;
  }
}
