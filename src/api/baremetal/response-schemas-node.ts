/**
 * Response schemas of a node's sub-resources (TypeBox), for the document
 * (`/openapi/baremetal.json`): states and console, boot device, traits, validation, VIFs,
 * indicators, BIOS settings, history, inventory and vendor passthru, as Ironic shows them at the
 * newest microversion (`X-OpenStack-Ironic-API-Version: 1.82` or `latest`) (Ironic API reference,
 * https://docs.openstack.org/api-ref/baremetal/, "Node Management", "Node Traits", "VIFs", "Node
 * Bios", "Node History", "Node Inventory", "Node Vendor Passthru"; Ironic 21.4
 * `ironic/api/controllers/v1/{node,bios}.py`).
 *
 * The wire format is fixed, so every object is `additionalProperties: false` and every field is
 * required, except where the content is the hardware's or a driver's (inventory, vendor results)
 * (test/api/ops/openapi-responses-baremetal-node.test.ts checks real answers against them).
 */
import { Type, type TProperties } from '@sinclair/typebox';
import { Links } from './response-schemas.ts';

const Str = Type.String();
const StrOrNull = Type.Union([Type.String(), Type.Null()]);
const BoolOrNull = Type.Union([Type.Boolean(), Type.Null()]);
const Dict = Type.Object({}, { additionalProperties: true });
/** A time as Python's `isoformat()` of an aware UTC datetime (`2016-08-18T22:28:49.653000+00:00`). */
const Time = Type.String({ description: 'ISO 8601 with offset' });
const TimeOrNull = Type.Union([Time, Type.Null()]);
/** The `next` link of a full page (absent on the last page). */
const Next = Type.Optional(Type.String({ description: 'URL of the next page, when the page is full' }));

/** A strict object (the wire format is fixed). */
const strict = <P extends TProperties>(props: P) => Type.Object(props, { additionalProperties: false });

/**
 * `GET /v1/nodes/{node}/states` (api-ref "Node State Summary"): `raid_config` and
 * `target_raid_config` from 1.12, `boot_mode` and `secure_boot` from 1.75.
 */
export const NodeStatesResponse = strict({
  console_enabled: Type.Boolean(),
  last_error: StrOrNull,
  power_state: StrOrNull,
  provision_state: Str,
  provision_updated_at: TimeOrNull,
  target_power_state: StrOrNull,
  target_provision_state: StrOrNull,
  raid_config: Dict,
  target_raid_config: Dict,
  boot_mode: StrOrNull,
  secure_boot: BoolOrNull,
});

/**
 * `GET /v1/nodes/{node}/states/console` (api-ref "Get Console"): `console_info` is null while
 * the console is off; esi's console is a websocket (`{"type": "websocket", "url": "ws[s]://…"}`,
 * routes-console-stream.ts).
 */
export const NodeConsoleResponse = strict({
  console_enabled: Type.Boolean(),
  console_info: Type.Union([strict({ type: Str, url: Str }), Type.Null()]),
});

/** `GET /v1/nodes/{node}/management/boot_device` (api-ref "Get Boot Device"); the device is null when the BMC reports none. */
export const BootDeviceResponse = strict({ boot_device: StrOrNull, persistent: Type.Boolean() });

/** `GET /v1/nodes/{node}/management/boot_device/supported` (api-ref "Get Supported Boot Devices"). */
export const SupportedBootDevicesResponse = strict({ supported_boot_devices: Type.Array(Str) });

/** `GET /v1/nodes/{node}/traits` (≥ 1.37; api-ref "List Traits of a Node"). */
export const NodeTraitsResponse = strict({ traits: Type.Array(Str) });

/** One interface's validation: `result` true, false or null (not checked), and `reason` when not true. */
const InterfaceValidation = strict({ result: BoolOrNull, reason: Type.Optional(Str) });

/**
 * `GET /v1/nodes/{node}/validate` and `GET /v1/nodes/validate?node=` (api-ref "Validate Node"):
 * one entry per interface, in Ironic's order.
 */
export const NodeValidateResponse = strict(
  Object.fromEntries(
    ['bios', 'boot', 'console', 'deploy', 'inspect', 'management', 'network', 'power', 'raid', 'rescue', 'storage'].map((i) => [
      i,
      InterfaceValidation,
    ]),
  ),
);

/** `GET /v1/nodes/{node}/vifs` (≥ 1.28; api-ref "List attached VIFs of a Node"): the attached Neutron ports. */
export const NodeVifsResponse = strict({ vifs: Type.Array(strict({ id: Str })) });

/**
 * `GET /v1/nodes/{node}/management/indicators` (api-ref "List Indicators"; Ironic 21.4
 * `IndicatorController`): each indicator named `<id>@<component>`, with its links.
 */
export const NodeIndicatorsResponse = strict({
  indicators: Type.Array(strict({ name: Str, component: Str, readonly: Type.Boolean(), states: Type.Array(Str), links: Links })),
});

/** `GET /v1/nodes/{node}/management/indicators/{name}` (api-ref "Get Indicator State"). */
export const NodeIndicatorStateResponse = strict({ state: Str });

/** The fields every BIOS setting shows (api-ref "List all Bios settings by Node"). */
const biosFields = { created_at: Time, updated_at: TimeOrNull, links: Links, name: Str, value: StrOrNull };

/** The BIOS attribute registry's fields of a setting (≥ 1.74), null where the BMC says nothing. */
const registryFields = {
  attribute_type: StrOrNull,
  allowable_values: Type.Union([Type.Array(Str), Type.Null()]),
  lower_bound: Type.Union([Type.Integer(), Type.Null()]),
  max_length: Type.Union([Type.Integer(), Type.Null()]),
  min_length: Type.Union([Type.Integer(), Type.Null()]),
  read_only: BoolOrNull,
  reset_required: BoolOrNull,
  unique: BoolOrNull,
  upper_bound: Type.Union([Type.Integer(), Type.Null()]),
};

/** A BIOS setting with its registry fields (`GET …/bios/{name}`, `GET …/bios?detail=true`). */
const BiosSettingDetail = strict({ ...biosFields, ...registryFields });

/** `GET /v1/nodes/{node}/bios` (≥ 1.40; api-ref "List all Bios settings by Node"), without `detail`. */
export const NodeBiosResponse = Type.Object({ bios: Type.Array(strict(biosFields)) }, { additionalProperties: false });

/**
 * `GET /v1/nodes/{node}/bios/{name}` (api-ref "Show single Bios setting of a Node"):
 * `{"<name>": setting}`, the setting with its registry fields.
 */
export const NodeBiosSettingResponse = Type.Record(Str, BiosSettingDetail, { minProperties: 1, maxProperties: 1 });

/** The fields of a history event in a list (api-ref "List Node History"); `event` cut to 255 characters. */
const historyFields = { uuid: Str, created_at: Time, severity: Str, event: Str, links: Links };

/** A history event in full (api-ref "Get Node History Event"; a list item with `detail=true`). */
export const NodeHistoryEvent = strict({
  uuid: Str,
  created_at: Time,
  severity: Str,
  event_type: Str,
  event: Str,
  conductor: StrOrNull,
  user: StrOrNull,
  links: Links,
});

/** `GET /v1/nodes/{node}/history` (≥ 1.78; api-ref "List Node History"), without `detail`. */
export const NodeHistoryCollection = strict({ history: Type.Array(strict(historyFields)), next: Next });

/** `GET /v1/nodes/{node}/history/detail` (esi; python-ironicclient's `history list --long`) and `…/history?detail=true`. */
export const NodeHistoryDetailCollection = strict({ history: Type.Array(NodeHistoryEvent), next: Next });

/**
 * `GET /v1/nodes/{node}/inventory` (≥ 1.81; api-ref "Show Node Inventory"): the inventory
 * ironic-python-agent sent (`cpu`, `memory`, `disks`, `interfaces`, `bmc_address`, …; its
 * format is the agent's) and the inspection plugins' data.
 */
export const NodeInventoryResponse = strict({
  inventory: Type.Object({}, { additionalProperties: true, description: "ironic-python-agent's hardware inventory" }),
  plugin_data: Dict,
});

/** `GET /v1/nodes/{node}/vendor_passthru/methods` (api-ref "List Methods"): each method by name. */
export const VendorMethodsResponse = Type.Record(
  Str,
  strict({
    http_methods: Type.Array(Str),
    async: Type.Boolean(),
    description: Str,
    attach: Type.Boolean(),
    require_exclusive_lock: Type.Boolean(),
  }),
);

/**
 * A vendor passthru call's answer (api-ref "Call a Method"): a synchronous method's result as
 * JSON (200; any JSON value, the driver's); an asynchronous one is 202 without a body.
 */
export const VendorCallResponse = Type.Unknown({ description: "the method's result (200), or no body (202, an asynchronous method)" });
