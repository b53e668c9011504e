/**
 * BIOS interface of the `redfish` hardware type (Ironic 21.4 `RedfishBIOS`, through sushy's
 * `system.bios`), over DSP2046 `Bios` and its `AttributeRegistry`:
 *
 * - settings: `GET <system>/Bios` → `Attributes`; their metadata from the registry named by
 *   `AttributeRegistry`, found in the service's `Registries` collection (member whose `Id` or
 *   `Registry` matches) at the `Location` of language `en` (or `default`), as sushy does;
 * - apply: every change is checked against the registry first (unknown name, read-only,
 *   enumeration value, integer bounds, string length, type) so that a bad request changes
 *   nothing; then `PATCH` of the settings object (`@Redfish.Settings.SettingsObject`, else
 *   `Bios/Settings`) with `{"Attributes": {...}}`, a reboot so the firmware applies them
 *   (Redfish "OnReset" apply time), and a read-back that fails when a value did not change;
 * - factory reset: `POST` of `#Bios.ResetBios`, then a reboot.
 *
 * Values are typed by the registry (`Integer` → number, `Boolean` → boolean, others
 * strings); Ironic stores and shows them as strings: strings as they are, numbers and booleans
 * as their JSON text (`2`, `true`), and an attribute whose value is an object or a list (some
 * vendors nest them) as its JSON text (`{"Slot":1}`), never as `[object Object]`.
 *
 * Reading the settings needs the `Bios` resource: a BMC that cannot be reached, refuses it or
 * sends no JSON object fails the read (the conductor records it in `last_error`). The registry
 * is extra metadata, as in Ironic's `cache_bios_settings`: one that cannot be read leaves the
 * settings without registry fields.
 */
import { InvalidInputError } from '../../../domain/errors.ts';
import type { BiosInterface, BiosSetting, BiosSettingChange } from '../../../domain/hardware/bios.ts';
import { HardwareError, type DriverNode } from '../../../domain/hardware/interfaces.ts';
import type { RedfishClient, RequestContext } from './client.ts';
import { parseRedfishDriverInfo, type RedfishDriverInfo } from './driver-info.ts';
import type { RedfishPower } from './power.ts';
import { invalidResponse, odataId, readSystem } from './system.ts';

type Json = Record<string, unknown>;

/** The redfish BIOS interface. */
export class RedfishBios implements BiosInterface {
  readonly #client: RedfishClient;
  readonly #power: RedfishPower;

  constructor(client: RedfishClient, power: RedfishPower) {
    this.#client = client;
    this.#power = power;
  }

  /** See {@link BiosInterface.getSettings}. */
  async getSettings(node: DriverNode): Promise<BiosSetting[]> {
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'get BIOS settings' };
    const bios = await this.#readBios(info, ctx);
    const registry = await this.#registry(info, ctx, bios.json.AttributeRegistry);
    return settingsOf(bios.json, registry);
  }

  /** See {@link BiosInterface.applySettings}. */
  async applySettings(node: DriverNode, settings: readonly BiosSettingChange[], timeoutS: number): Promise<void> {
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'apply BIOS settings' };
    const bios = await this.#readBios(info, ctx);
    const registry = await this.#registry(info, ctx, bios.json.AttributeRegistry);
    const current = attributesOf(bios.json);
    const wanted: Json = {};
    for (const s of settings) wanted[s.name] = typedValue(node.uuid, s, current, registry);
    const settingsPath = odataId((bios.json['@Redfish.Settings'] as Json | undefined)?.SettingsObject) ?? `${bios.path}/Settings`;
    await this.#client.send(info, ctx, 'PATCH', settingsPath, { Attributes: wanted });
    await this.#power.setPowerState(node, 'rebooting', timeoutS);
    const after = attributesOf((await this.#client.send(info, ctx, 'GET', bios.path)).json ?? {});
    const missed = Object.entries(wanted).filter(([k, v]) => after[k] !== v);
    if (missed.length > 0) {
      throw new HardwareError(
        `Redfish BMC at ${info.address} did not apply the BIOS settings of node ${node.uuid} after a reboot: ${missed
          .map(([k, v]) => `${k} is ${JSON.stringify(after[k])}, wanted ${JSON.stringify(v)}`)
          .join('; ')}.`,
        { reason: 'invalid-response', nodeUuid: node.uuid, operation: ctx.operation },
      );
    }
  }

  /** See {@link BiosInterface.factoryReset}. */
  async factoryReset(node: DriverNode, timeoutS: number): Promise<void> {
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'reset BIOS settings to defaults' };
    const bios = await this.#readBios(info, ctx);
    const action = ((bios.json.Actions as Json | undefined)?.['#Bios.ResetBios'] as Json | undefined)?.target;
    if (typeof action !== 'string' || action === '') throw invalidResponse(info, ctx, 'a Bios resource without a #Bios.ResetBios action');
    await this.#client.send(info, ctx, 'POST', action, {});
    await this.#power.setPowerState(node, 'rebooting', timeoutS);
  }

  /** The system's Bios resource: its path and body. */
  async #readBios(info: RedfishDriverInfo, ctx: RequestContext): Promise<{ path: string; json: Json }> {
    const sys = await readSystem(this.#client, info, ctx);
    const path = odataId(sys.json.Bios);
    if (path === null) throw invalidResponse(info, ctx, 'a ComputerSystem without a Bios resource');
    const res = await this.#client.send(info, ctx, 'GET', path);
    if (res.json === null) throw invalidResponse(info, ctx, 'an empty Bios resource');
    return { path, json: res.json };
  }

  /** The attribute definitions of registry `name` by attribute name, or an empty map when the BMC has none. */
  async #registry(info: RedfishDriverInfo, ctx: RequestContext, name: unknown): Promise<Map<string, Json>> {
    if (typeof name !== 'string' || name === '') return new Map();
    try {
      return await this.#readRegistry(info, ctx, name);
    } catch (err) {
      // Ironic goes on without the registry (it logs the failure); so does esi.
      if (err instanceof HardwareError && err.reason !== 'unreachable') return new Map();
      throw err;
    }
  }

  async #readRegistry(info: RedfishDriverInfo, ctx: RequestContext, name: string): Promise<Map<string, Json>> {
    const out = new Map<string, Json>();
    const root = await this.#client.send(info, ctx, 'GET', '/redfish/v1/');
    const collPath = odataId(root.json?.Registries);
    if (collPath === null) return out;
    const coll = await this.#client.send(info, ctx, 'GET', collPath);
    const members = Array.isArray(coll.json?.Members) ? (coll.json.Members as unknown[]) : [];
    for (const m of members) {
      const p = odataId(m);
      if (p === null) continue;
      const file = (await this.#client.send(info, ctx, 'GET', p)).json ?? {};
      if (file.Id !== name && file.Registry !== name) continue;
      const locations = Array.isArray(file.Location) ? (file.Location as Json[]) : [];
      const loc =
        locations.find((l) => String(l.Language).toLowerCase() === 'en') ??
        locations.find((l) => String(l.Language).toLowerCase() === 'default');
      if (typeof loc?.Uri !== 'string') return out;
      const reg = (await this.#client.send(info, ctx, 'GET', loc.Uri)).json ?? {};
      const attrs = (reg.RegistryEntries as Json | undefined)?.Attributes;
      if (Array.isArray(attrs)) for (const a of attrs as Json[]) if (typeof a.AttributeName === 'string') out.set(a.AttributeName, a);
      return out;
    }
    return out;
  }
}

function attributesOf(bios: Json): Json {
  const a = bios.Attributes;
  return a !== null && typeof a === 'object' && !Array.isArray(a) ? (a as Json) : {};
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** A BIOS attribute value as the string Ironic shows (see the module documentation); null when unset. */
export function settingText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Ironic's view of the settings: string values plus the registry's metadata. */
function settingsOf(bios: Json, registry: Map<string, Json>): BiosSetting[] {
  return Object.entries(attributesOf(bios))
    .map(([name, value]): BiosSetting => {
      const r = registry.get(name);
      const values = Array.isArray(r?.Value) ? (r.Value as Json[]).map((v) => String(v.ValueName)) : null;
      return {
        name,
        value: settingText(value),
        attribute_type: typeof r?.Type === 'string' ? r.Type : null,
        allowable_values: values,
        lower_bound: num(r?.LowerBound),
        upper_bound: num(r?.UpperBound),
        min_length: num(r?.MinLength),
        max_length: num(r?.MaxLength),
        read_only: typeof r?.ReadOnly === 'boolean' ? r.ReadOnly : null,
        reset_required: typeof r?.ResetRequired === 'boolean' ? r.ResetRequired : null,
        unique: typeof r?.IsSystemUniqueProperty === 'boolean' ? r.IsSystemUniqueProperty : null,
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The value to send for change `s`, typed and checked against the registry (or, without a
 * registry entry, against the current attributes).
 * @throws InvalidInputError naming the setting and what is wrong.
 */
function typedValue(nodeUuid: string, s: BiosSettingChange, current: Json, registry: Map<string, Json>): unknown {
  const r = registry.get(s.name);
  const bad = (why: string) =>
    new InvalidInputError(
      `Cannot apply BIOS setting ${s.name}=${JSON.stringify(s.value)} to node ${nodeUuid}: ${why}.`,
      'InvalidParameterValue',
    );
  if (r === undefined) {
    if (!Object.hasOwn(current, s.name)) throw bad('the node has no such BIOS setting');
    return s.value;
  }
  if (r.ReadOnly === true) throw bad('the setting is read-only');
  switch (r.Type) {
    case 'Enumeration': {
      const allowed = Array.isArray(r.Value) ? (r.Value as Json[]).map((v) => String(v.ValueName)) : [];
      const v = String(s.value);
      if (allowed.length > 0 && !allowed.includes(v)) throw bad(`allowed values are ${allowed.join(', ')}`);
      return v;
    }
    case 'Integer': {
      const v =
        typeof s.value === 'number' ? s.value : typeof s.value === 'string' && /^-?\d+$/.test(s.value.trim()) ? Number(s.value) : NaN;
      if (!Number.isInteger(v)) throw bad('an integer is required');
      const lo = num(r.LowerBound);
      const hi = num(r.UpperBound);
      if ((lo !== null && v < lo) || (hi !== null && v > hi)) throw bad(`the value must be between ${lo ?? '-∞'} and ${hi ?? '∞'}`);
      return v;
    }
    case 'Boolean': {
      if (typeof s.value === 'boolean') return s.value;
      const t = String(s.value).toLowerCase();
      if (t === 'true' || t === 'false') return t === 'true';
      throw bad('true or false is required');
    }
    default: {
      const v = String(s.value);
      const min = num(r.MinLength);
      const max = num(r.MaxLength);
      if ((min !== null && v.length < min) || (max !== null && v.length > max))
        throw bad(`the length must be between ${min ?? 0} and ${max ?? '∞'} characters`);
      return v;
    }
  }
}
