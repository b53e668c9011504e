/**
 * Switches esi programs (an esi API, `/network/v2.0/switches`; admin-only by default through
 * `get_switch`, `create_switch`, `update_switch`, `delete_switch`, `resync_switch`).
 *
 * A switch record names the driver that programs it (`linux-bridge`, `ssh-cli`, `fake`) and
 * the driver's settings; secret settings (`password`, `private_key`) are sealed with the
 * SecretBox at rest and shown as `******`. Bare-metal ports are cabled to it by their
 * `local_link_connection` (`switch_info` = the switch's name, or `switch_id`).
 *
 * Resync re-derives every port of the switch from the database and re-applies it — ports
 * carrying VIFs get their VLANs back, the others quarantine — and gives failed bindings on
 * it another chance. It restores a switch that lost its configuration (`esi switch resync`).
 */
import type { ProvisioningNetwork } from './provisioning.ts';
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import type { SecretBox } from '../secrets.ts';
import type { NetworkAccess } from './access.ts';
import { canonicalId, checkKeys, description, int, str } from './attributes.ts';
import { desiredConfigs, holds, vifOf, type PortIntent } from './binding.ts';
import { VLAN_MAX, VLAN_MIN, type Switch, type SwitchDriverName, type SwitchPortState } from './model.ts';
import type { SwitchDriverFactory, SwitchPortKey } from './ports.ts';

/** The mask of secret values in output. */
export const MASK = '******';

const CREATE = new Set(['name', 'switch_id', 'description', 'driver', 'driver_info', 'flat_vlan']);
const UPDATE = new Set(['name', 'switch_id', 'description', 'driver_info', 'flat_vlan']);
const READ_ONLY = new Set(['id', 'created_at', 'updated_at']);

/** What an update changes: some settings, and the time. */
export type SwitchChanges = { readonly [K in keyof Omit<Switch, 'id' | 'created_at'>]?: Switch[K] };

/** One port of a switch as the switch API shows it. */
export interface SwitchPortView {
  readonly port_id: string;
  /** The bare-metal port that holds it (else the first one cabled to it) and its node, if any. */
  readonly baremetal_port: string | null;
  readonly node_uuid: string | null;
  /** The node the switch port is registered to (./cabling.ts), or null. */
  readonly registered_node_uuid: string | null;
  /** The VIF it carries, if any. */
  readonly vif: string | null;
  readonly desired: PortIntent['config'];
  readonly state: SwitchPortState | null;
}

/** Switch administration; see the module documentation. */
export class SwitchService {
  constructor(
    private readonly access: NetworkAccess,
    private readonly drivers: SwitchDriverFactory,
    private readonly secrets: SecretBox,
    private readonly provisioning: ProvisioningNetwork | null = null,
  ) {}

  /** The switch with its secrets masked, for output. */
  masked(sw: Switch): Switch {
    const secret = new Set(this.drivers.secretKeys(sw.driver));
    const info = Object.fromEntries(
      Object.entries(sw.driver_info).map(([k, v]) => [k, secret.has(k) && v !== null && v !== undefined ? MASK : v]),
    );
    return { ...sw, driver_info: info };
  }

  /** The driver settings with secrets in clear (for the reconciler). */
  openInfo(sw: Switch): Record<string, unknown> {
    const secret = new Set(this.drivers.secretKeys(sw.driver));
    return Object.fromEntries(
      Object.entries(sw.driver_info).map(([k, v]) => [k, secret.has(k) && typeof v === 'string' ? this.secrets.open(v) : v]),
    );
  }

  private sealInfo(driver: string, info: Readonly<Record<string, unknown>>): Record<string, unknown> {
    const secret = new Set(this.drivers.secretKeys(driver));
    return Object.fromEntries(Object.entries(info).map(([k, v]) => [k, secret.has(k) && typeof v === 'string' ? this.secrets.seal(v) : v]));
  }

  private driverInfo(v: unknown, driver: string): Record<string, unknown> {
    if (v === undefined || v === null) v = {};
    if (typeof v !== 'object' || Array.isArray(v))
      throw new InvalidInputError('Invalid input for driver_info. Reason: must be an object.', 'HTTPBadRequest');
    this.drivers.validate(driver, v as Record<string, unknown>);
    return v as Record<string, unknown>;
  }

  /**
   * A switch by UUID or name (admins: `get_switch`). A caller who may not see switches gets the
   * same 404 as for a switch that does not exist (what a caller may not see is not found).
   * @throws NotFoundError (`SwitchNotFound`)
   */
  async get(ctx: AuthContext, ident: string): Promise<Switch> {
    if (!this.access.check('get_switch', {}, ctx)) throw new NotFoundError('switch', ident);
    const sw = (await this.access.repo.getSwitch(canonicalId(ident))) ?? (await this.access.repo.switchByName(ident));
    if (!sw) throw new NotFoundError('switch', ident);
    return sw;
  }

  /** Every switch (admins). */
  async list(ctx: AuthContext): Promise<Switch[]> {
    this.access.authorize('get_switch', {}, ctx);
    return this.access.repo.listSwitches();
  }

  /**
   * A new switch from the attributes of a create body (`POST /v2.0/switches`), checked: known
   * names, name and switch_id given, a driver esi has, the driver's settings, the flat VLAN.
   * @throws InvalidInputError (Neutron's messages)
   */
  newSwitch(body: unknown): Switch {
    const a = checkKeys(body, 'switch', CREATE, READ_ONLY, 'POST');
    const nameV = str(a, 'name', '');
    if (nameV === '') throw new InvalidInputError("Failed to parse request. Required attribute 'name' not specified", 'HTTPBadRequest');
    const switchId = str(a, 'switch_id', '');
    if (switchId === '')
      throw new InvalidInputError("Failed to parse request. Required attribute 'switch_id' not specified", 'HTTPBadRequest');
    const driver = str(a, 'driver', '');
    if (!this.drivers.names().includes(driver))
      throw new InvalidInputError(
        `Invalid input for driver. Reason: '${driver}' is not in ${JSON.stringify(this.drivers.names())}.`,
        'HTTPBadRequest',
      );
    const now = this.access.now();
    return {
      id: newUuid(),
      name: nameV,
      switch_id: switchId.toLowerCase(),
      description: description(a),
      driver: driver as SwitchDriverName,
      driver_info: this.sealInfo(driver, this.driverInfo(a.driver_info, driver)),
      flat_vlan: int(a, 'flat_vlan', 1, VLAN_MIN, VLAN_MAX),
      created_at: now,
      updated_at: now,
    };
  }

  /**
   * Register a switch.
   * @throws ForbiddenError, InvalidInputError (settings), ConflictError (name or switch_id taken)
   */
  async create(ctx: AuthContext, body: unknown): Promise<Switch> {
    this.access.authorize('create_switch', {}, ctx);
    const sw = this.newSwitch(body);
    await this.access.repo.locked(['switches'], (tx) => tx.insertSwitch(sw));
    await this.resyncKnown(sw);
    return sw;
  }

  /**
   * The changes the attributes of an update body (`PUT /v2.0/switches/{switch}`) make to `sw`,
   * checked. Secret settings left out of a new `driver_info` keep their sealed values.
   * @throws InvalidInputError (Neutron's messages)
   */
  changesOf(sw: Switch, body: unknown): SwitchChanges {
    const a = checkKeys(body, 'switch', UPDATE, new Set([...READ_ONLY, 'driver']), 'PUT');
    const changes: { -readonly [K in keyof SwitchChanges]: SwitchChanges[K] } = { updated_at: this.access.now() };
    if (a.name !== undefined) changes.name = str(a, 'name', sw.name);
    if (a.switch_id !== undefined) changes.switch_id = str(a, 'switch_id', sw.switch_id).toLowerCase();
    if (a.description !== undefined) changes.description = description(a);
    if (a.flat_vlan !== undefined) changes.flat_vlan = int(a, 'flat_vlan', sw.flat_vlan, VLAN_MIN, VLAN_MAX);
    if (a.driver_info !== undefined) {
      if (a.driver_info === null || typeof a.driver_info !== 'object' || Array.isArray(a.driver_info)) {
        throw new InvalidInputError('Invalid input for driver_info. Reason: must be an object.', 'HTTPBadRequest');
      }
      // Secrets left out (or given as the mask) keep their value; null removes one.
      const given = a.driver_info as Record<string, unknown>;
      const opened = this.openInfo(sw);
      const merged: Record<string, unknown> = { ...given };
      for (const k of this.drivers.secretKeys(sw.driver)) {
        if (given[k] === null) delete merged[k];
        else if (given[k] === undefined || given[k] === MASK) {
          if (opened[k] !== undefined) merged[k] = opened[k];
          else delete merged[k];
        }
      }
      changes.driver_info = this.sealInfo(sw.driver, this.driverInfo(merged, sw.driver));
    }
    return changes;
  }

  /**
   * Change a switch's settings, then resync it (the new settings may reach another device).
   * Secret settings left out of a new `driver_info` keep their sealed values.
   */
  async update(ctx: AuthContext, ident: string, body: unknown): Promise<Switch> {
    const sw = await this.get(ctx, ident);
    this.access.authorize('update_switch', {}, ctx);
    const changes = this.changesOf(sw, body);
    if (changes.name !== undefined && changes.name !== sw.name)
      await this.refuseIfCarrying(sw, 'renamed (bare-metal ports name it in switch_info)');
    if (changes.switch_id !== undefined && changes.switch_id !== sw.switch_id) await this.refuseIfCarrying(sw, 'given another switch_id');
    await this.access.repo.locked(['switches', `switch:${sw.id}`], (tx) => tx.updateSwitch(sw.id, changes));
    const updated = (await this.access.repo.getSwitch(sw.id))!;
    await this.resyncKnown(updated);
    return updated;
  }

  private async refuseIfCarrying(sw: Switch, what: string): Promise<void> {
    const carrying = (await this.access.repo.nodePortsOnSwitch(sw)).filter((p) => vifOf(p) !== null);
    if (carrying.length > 0)
      throw new ConflictError(
        `Switch ${sw.name} carries ${carrying.length} VIF(s) and cannot be ${what}; detach them first.`,
        'SwitchInUse',
      );
  }

  /** Remove a switch. @throws ConflictError while ports cabled to it carry VIFs */
  async delete(ctx: AuthContext, ident: string): Promise<void> {
    const sw = await this.get(ctx, ident);
    this.access.authorize('delete_switch', {}, ctx);
    await this.refuseIfCarrying(sw, 'deleted');
    await this.access.repo.locked(['switches', `switch:${sw.id}`], (tx) => tx.deleteSwitch(sw.id));
  }

  /**
   * Re-apply every port of the switch from the database (see the module documentation).
   * @returns the number of ports scheduled
   */
  async resync(ctx: AuthContext, ident: string): Promise<number> {
    const sw = await this.get(ctx, ident);
    this.access.authorize('resync_switch', {}, ctx);
    return this.resyncKnown(sw);
  }

  private async resyncKnown(sw: Switch): Promise<number> {
    const cabled = await this.access.repo.nodePortsOnSwitch(sw);
    const known = await this.access.repo.switchPortStates(sw.id);
    const registered = await this.access.repo.cablingOf(sw.id);
    const ports = [
      ...new Set([
        ...cabled.map((p) => p.local_link_connection.port_id!).filter(Boolean),
        ...known.map((s) => s.port_id),
        ...registered.map((c) => c.port_id),
      ]),
    ];
    const failed = (await this.access.repo.portsByIds(cabled.flatMap((p) => (vifOf(p) ? [vifOf(p)!] : [])))).values();
    const keys: SwitchPortKey[] = ports.map((port_id) => ({ switch_uuid: sw.id, port_id }));
    await this.access.repo.locked([`switch:${sw.id}`], async (tx) => {
      const now = this.access.now();
      for (const p of failed)
        if (p.binding_vif_type === 'binding_failed') await tx.updatePort(p.id, { binding_vif_type: 'other', binding_vif_details: {} }, now);
      await tx.touchSwitchPorts(keys, now);
    });
    if (keys.length > 0) this.access.deps.wake.notifySwitch(sw.id);
    return keys.length;
  }

  /** The ports of a switch: cabling, VIF, derived configuration and reconciliation state (admins). */
  async ports(ctx: AuthContext, ident: string): Promise<SwitchPortView[]> {
    const sw = await this.get(ctx, ident);
    const cabled = await this.access.repo.nodePortsOnSwitch(sw);
    const states = new Map((await this.access.repo.switchPortStates(sw.id)).map((s) => [s.port_id, s]));
    const cabling = new Map((await this.access.repo.cablingOf(sw.id)).map((c) => [c.port_id, c]));
    const ids = [
      ...new Set([...cabled.map((p) => p.local_link_connection.port_id!).filter(Boolean), ...states.keys(), ...cabling.keys()]),
    ].sort();
    const intents = await desiredConfigs(this.access.repo, sw, ids, (await this.provisioning?.network()) ?? null);
    return ids.map((port_id) => {
      const named = cabled.filter((p) => p.local_link_connection.port_id === port_id);
      const np = named.find((p) => holds(cabling.get(port_id), p)) ?? named[0] ?? null;
      return {
        port_id,
        baremetal_port: np?.uuid ?? null,
        node_uuid: np?.node_uuid ?? null,
        registered_node_uuid: cabling.get(port_id)?.node_uuid ?? null,
        vif: np ? vifOf(np) : null,
        desired: intents.get(port_id)!.config,
        state: states.get(port_id) ?? null,
      };
    });
  }
}
