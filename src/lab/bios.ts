/**
 * The lab's BIOS (DSP2046 `Bios.v1_1_0`, `AttributeRegistry.v1_3_0`, `Settings`): every
 * system has firmware settings described by one attribute registry, and changes go through a
 * pending settings object applied at the next reset, as real BMCs do (DSP0266 §"Settings
 * resource"):
 *
 * | URI (under `/redfish/v1`)                                  | methods |
 * |------------------------------------------------------------|---------|
 * | `/Systems/{id}/Bios`                                        | GET: current `Attributes`, `AttributeRegistry`, `@Redfish.Settings` → `Bios/Settings`, `#Bios.ResetBios` |
 * | `/Systems/{id}/Bios/Settings`                               | GET: pending `Attributes`; PATCH `{"Attributes": {...}}` (checked against the registry) |
 * | `/Systems/{id}/Bios/Actions/Bios.ResetBios`                 | POST → 204: factory defaults at the next reset |
 * | `/Registries`, `/Registries/{file}`, `/Registries/{file}/{file}.json` | GET: the `MessageRegistryFile` and the `AttributeRegistry` |
 *
 * A PATCH naming an unknown attribute is 400 `PropertyUnknown`; a read-only one 400
 * `PropertyNotWritable`; a value of the wrong type 400 `PropertyValueTypeError`; an
 * enumeration value not allowed 400 `PropertyValueNotInList`; an integer out of bounds or a
 * string of the wrong length 400 `PropertyValueOutOfRange`. Nothing is staged then.
 *
 * Every boot of a system (power on, restart: {@link LabState.subscribe}) first resets the
 * settings to defaults when `ResetBios` was asked, then applies the pending attributes.
 */
import type { FastifyInstance } from 'fastify';
import { bodyObject, checkIfMatch, etagOf, resource, sameId, type Params } from './http.ts';
import { REDFISH_ROOT, collection, ref, systemUri, type Json } from './render-system.ts';
import { LabError, type LabState, type SystemState } from './state.ts';

/** Id (and file name) of the lab's BIOS attribute registry. */
export const BIOS_REGISTRY_ID = 'BiosAttributeRegistry.v1_0_0';
/** The registry's `Registry` value (`Name.Major.Minor`). */
export const BIOS_REGISTRY_NAME = 'BiosAttributeRegistry.1.0';

/** A BIOS attribute's definition (an `AttributeRegistry` `Attributes` entry). */
export interface BiosAttributeDef {
  readonly name: string;
  readonly type: 'Enumeration' | 'Integer' | 'String' | 'Boolean';
  readonly default: string | number | boolean;
  readonly values?: readonly string[];
  readonly lower?: number;
  readonly upper?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly readOnly?: boolean;
  readonly displayName: string;
}

const ENABLED = ['Enabled', 'Disabled'] as const;

/**
 * The attributes of the lab's BIOS, modelled on a common rack server's (processor, memory,
 * boot, serial console and integrated devices settings).
 */
export const BIOS_ATTRIBUTES: readonly BiosAttributeDef[] = Object.freeze([
  { name: 'BootMode', type: 'Enumeration', default: 'Uefi', values: ['Uefi', 'Bios'], displayName: 'Boot Mode' },
  { name: 'ProcVirtualization', type: 'Enumeration', default: 'Enabled', values: ENABLED, displayName: 'Virtualization Technology' },
  { name: 'LogicalProc', type: 'Enumeration', default: 'Enabled', values: ENABLED, displayName: 'Logical Processor' },
  { name: 'ProcTurboMode', type: 'Enumeration', default: 'Enabled', values: ENABLED, displayName: 'Turbo Mode' },
  { name: 'SriovGlobalEnable', type: 'Enumeration', default: 'Disabled', values: ENABLED, displayName: 'SR-IOV Global Enable' },
  {
    name: 'SysProfile',
    type: 'Enumeration',
    default: 'PerfPerWattOptimizedDapc',
    values: ['PerfPerWattOptimizedDapc', 'PerfOptimized', 'DenseCfgOptimized', 'Custom'],
    displayName: 'System Profile',
  },
  { name: 'NumaNodesPerSocket', type: 'Integer', default: 1, lower: 1, upper: 4, displayName: 'NUMA Nodes Per Socket' },
  { name: 'PxeDev1EnDis', type: 'Enumeration', default: 'Enabled', values: ENABLED, displayName: 'PXE Device 1' },
  {
    name: 'SerialComm',
    type: 'Enumeration',
    default: 'OnConRedirCom1',
    values: ['OnConRedirCom1', 'OnConRedirCom2', 'Off'],
    displayName: 'Serial Communication',
  },
  { name: 'SecureBoot', type: 'Enumeration', default: 'Disabled', values: ENABLED, displayName: 'Secure Boot' },
  { name: 'AssetTag', type: 'String', default: '', minLength: 0, maxLength: 63, displayName: 'Asset Tag' },
  { name: 'SystemServiceTag', type: 'String', default: '', readOnly: true, displayName: 'Service Tag' },
  { name: 'TpmSecurity', type: 'Boolean', default: true, displayName: 'TPM Security' },
] satisfies BiosAttributeDef[]);

const BY_NAME = new Map(BIOS_ATTRIBUTES.map((a) => [a.name, a]));

/** BIOS state of one system. */
interface BiosState {
  current: Record<string, string | number | boolean>;
  pending: Record<string, string | number | boolean>;
  resetPending: boolean;
}

/** The BIOS of every lab system. */
export class LabBios {
  readonly #state: LabState;
  readonly #bios = new Map<string, BiosState>();

  /** Creates the BIOS of every system of `state` at factory defaults and follows its boots. */
  constructor(state: LabState) {
    this.#state = state;
    for (const s of state.systems()) this.#bios.set(s.id, { current: defaults(s), pending: {}, resetPending: false });
    state.subscribe((e) => {
      if (e.type === 'boot') this.#applyAtBoot(e.systemId);
    });
  }

  /** Current attributes of system `id` (a copy). @throws LabError 404. */
  attributes(id: string): Record<string, string | number | boolean> {
    return { ...this.#of(id).current };
  }

  /** Pending attributes of system `id` (a copy). @throws LabError 404. */
  pending(id: string): Record<string, string | number | boolean> {
    return { ...this.#of(id).pending };
  }

  /**
   * Stages `attrs` for the next reset, after checking every one (all or nothing).
   * @throws LabError 400 (see the module doc), 404 for an unknown system.
   */
  stage(id: string, attrs: unknown): void {
    const b = this.#of(id);
    if (attrs === null || typeof attrs !== 'object' || Array.isArray(attrs)) {
      throw new LabError(400, 'PropertyValueTypeError', [JSON.stringify(attrs) ?? 'null', 'Attributes'], ['#/Attributes']);
    }
    const checked: Record<string, string | number | boolean> = {};
    for (const [name, value] of Object.entries(attrs as Record<string, unknown>)) checked[name] = checkValue(name, value);
    Object.assign(b.pending, checked);
  }

  /** Asks for factory defaults at the next reset (`#Bios.ResetBios`). @throws LabError 404. */
  requestReset(id: string): void {
    const b = this.#of(id);
    b.resetPending = true;
    b.pending = {};
  }

  #applyAtBoot(id: string): void {
    const b = this.#bios.get(id);
    if (b === undefined) return;
    if (b.resetPending) b.current = defaults(this.#state.system(id));
    Object.assign(b.current, b.pending);
    b.pending = {};
    b.resetPending = false;
  }

  #of(id: string): BiosState {
    const b = this.#bios.get(id);
    if (b === undefined) throw new LabError(404, 'ResourceMissingAtURI', [`${systemUri(id)}/Bios`]);
    return b;
  }
}

function defaults(s: SystemState): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const a of BIOS_ATTRIBUTES) out[a.name] = a.default;
  out.SystemServiceTag = `ESILAB${String(s.index).padStart(6, '0')}`;
  return out;
}

/** Checks one attribute against the registry. @throws LabError 400. */
function checkValue(name: string, value: unknown): string | number | boolean {
  const def = BY_NAME.get(name);
  const at = [`#/Attributes/${name}`];
  if (def === undefined) throw new LabError(400, 'PropertyUnknown', [name], at);
  if (def.readOnly) throw new LabError(400, 'PropertyNotWritable', [name], at);
  const shown = JSON.stringify(value) ?? 'null';
  switch (def.type) {
    case 'Enumeration':
      if (typeof value !== 'string') throw new LabError(400, 'PropertyValueTypeError', [shown, name], at);
      if (!def.values!.includes(value)) throw new LabError(400, 'PropertyValueNotInList', [value, name], at);
      return value;
    case 'Integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) throw new LabError(400, 'PropertyValueTypeError', [shown, name], at);
      if (value < def.lower! || value > def.upper!) throw new LabError(400, 'PropertyValueOutOfRange', [shown, name], at);
      return value;
    case 'String':
      if (typeof value !== 'string') throw new LabError(400, 'PropertyValueTypeError', [shown, name], at);
      if (value.length < (def.minLength ?? 0) || value.length > (def.maxLength ?? Infinity))
        throw new LabError(400, 'PropertyValueOutOfRange', [shown, name], at);
      return value;
    case 'Boolean':
      if (typeof value !== 'boolean') throw new LabError(400, 'PropertyValueTypeError', [shown, name], at);
      return value;
  }
}

/** The `Bios` resource of system `s`. */
export function renderBios(s: SystemState, bios: LabBios): Json {
  const uri = `${systemUri(s.id)}/Bios`;
  return {
    '@odata.type': '#Bios.v1_1_0.Bios',
    '@odata.id': uri,
    Id: 'BIOS',
    Name: 'BIOS Configuration Current Settings',
    AttributeRegistry: BIOS_REGISTRY_ID,
    Attributes: bios.attributes(s.id),
    '@Redfish.Settings': {
      '@odata.type': '#Settings.v1_3_0.Settings',
      SettingsObject: ref(`${uri}/Settings`),
      SupportedApplyTimes: ['OnReset'],
    },
    Actions: {
      '#Bios.ResetBios': { target: `${uri}/Actions/Bios.ResetBios` },
    },
  };
}

function renderSettings(s: SystemState, bios: LabBios): Json {
  return {
    '@odata.type': '#Bios.v1_1_0.Bios',
    '@odata.id': `${systemUri(s.id)}/Bios/Settings`,
    Id: 'Settings',
    Name: 'BIOS Configuration Pending Settings',
    AttributeRegistry: BIOS_REGISTRY_ID,
    Attributes: bios.pending(s.id),
  };
}

/** The `AttributeRegistry` resource of the lab's BIOS. */
export function renderAttributeRegistry(): Json {
  return {
    '@odata.type': '#AttributeRegistry.v1_3_0.AttributeRegistry',
    '@odata.id': `${REDFISH_ROOT}/Registries/${BIOS_REGISTRY_ID}/${BIOS_REGISTRY_ID}.json`,
    Id: BIOS_REGISTRY_ID,
    Name: 'esi lab BIOS Attribute Registry',
    Language: 'en',
    OwningEntity: 'esi',
    RegistryVersion: '1.0.0',
    SupportedSystems: [{ ProductName: 'esi lab virtual system', SystemId: 'ESILAB', FirmwareVersion: '1.0.0' }],
    RegistryEntries: {
      Attributes: BIOS_ATTRIBUTES.map((a) => ({
        AttributeName: a.name,
        DisplayName: a.displayName,
        Type: a.type,
        DefaultValue: a.default,
        ReadOnly: a.readOnly === true,
        ResetRequired: true,
        IsSystemUniqueProperty: a.name === 'SystemServiceTag',
        ...(a.values ? { Value: a.values.map((v) => ({ ValueName: v, ValueDisplayName: v })) } : {}),
        ...(a.lower !== undefined ? { LowerBound: a.lower, UpperBound: a.upper } : {}),
        ...(a.type === 'String' && a.maxLength !== undefined ? { MinLength: a.minLength ?? 0, MaxLength: a.maxLength } : {}),
      })),
    },
  };
}

/** Registers the BIOS and registry resources (module table) on `app`. */
export function registerBiosRoutes(app: FastifyInstance, state: LabState, bios: LabBios): void {
  const R = REDFISH_ROOT;
  const sys = (p: Params): SystemState => state.system(p.id!);
  resource(app, `${R}/Systems/:id/Bios`, { GET: (_req, _reply, p) => renderBios(sys(p), bios) });
  resource(app, `${R}/Systems/:id/Bios/Settings`, {
    GET: (_req, _reply, p) => renderSettings(sys(p), bios),
    PATCH: (req, _reply, p) => {
      const s = sys(p);
      checkIfMatch(req, etagOf(renderSettings(s, bios)));
      const body = bodyObject(req);
      for (const key of Object.keys(body)) {
        if (key !== 'Attributes' && !key.startsWith('@')) throw new LabError(400, 'PropertyUnknown', [key], [`#/${key}`]);
      }
      if (body.Attributes === undefined) throw new LabError(400, 'PropertyMissing', ['Attributes'], ['#/Attributes']);
      bios.stage(s.id, body.Attributes);
      return renderSettings(s, bios);
    },
  });
  resource(app, `${R}/Systems/:id/Bios/Actions/Bios.ResetBios`, {
    POST: (_req, reply, p) => {
      bios.requestReset(sys(p).id);
      void reply.code(204).send();
      return undefined;
    },
  });
  resource(app, `${R}/Registries`, {
    GET: () =>
      collection('MessageRegistryFileCollection', `${R}/Registries`, 'Registry File Collection', [`${R}/Registries/${BIOS_REGISTRY_ID}`]),
  });
  resource(app, `${R}/Registries/:file`, {
    GET: (req, _reply, p) => {
      if (!sameId(p.file, BIOS_REGISTRY_ID)) throw new LabError(404, 'ResourceMissingAtURI', [req.url]);
      return {
        '@odata.type': '#MessageRegistryFile.v1_1_0.MessageRegistryFile',
        '@odata.id': `${R}/Registries/${BIOS_REGISTRY_ID}`,
        Id: BIOS_REGISTRY_ID,
        Name: 'BIOS Attribute Registry File',
        Description: 'Registry of the BIOS attributes of the lab systems',
        Languages: ['en'],
        Registry: BIOS_REGISTRY_NAME,
        Location: [{ Language: 'en', Uri: `${R}/Registries/${BIOS_REGISTRY_ID}/${BIOS_REGISTRY_ID}.json` }],
      };
    },
  });
  resource(app, `${R}/Registries/:file/:doc`, {
    GET: (req, _reply, p) => {
      if (!sameId(p.file, BIOS_REGISTRY_ID) || !sameId(p.doc, `${BIOS_REGISTRY_ID}.json`))
        throw new LabError(404, 'ResourceMissingAtURI', [req.url]);
      return renderAttributeRegistry();
    },
  });
}
