/**
 * `DriverService`: drivers (hardware types) and conductors as `GET /v1/drivers` and
 * `GET /v1/conductors` show them.
 *
 * Source: https://docs.openstack.org/api-ref/baremetal/#drivers-drivers and "Conductors": a driver
 * is listed when at least one live conductor serves it (`hosts` = those conductors); a single
 * driver adds its default and enabled interfaces; `properties` is the driver's `driver_info` keys
 * with descriptions. Both are system-level resources (rules `baremetal:driver:get`,
 * `:get_properties`, `baremetal:conductor:get`).
 */
import type { AuthContext } from '../auth.ts';
import { NotFoundError } from '../errors.ts';
import type { HardwareRegistry, InterfaceKind } from '../hardware/interfaces.ts';
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

  /** The driver's `driver_info` keys and their descriptions. */
  async properties(ctx: AuthContext, name: string): Promise<Record<string, string>> {
    this.policy.authorize('baremetal:driver:get_properties', {}, ctx);
    await this.served(name);
    return this.hardware.get(name).driverProperties();
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
