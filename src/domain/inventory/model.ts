/**
 * The inventory model: bare-metal nodes and their network ports.
 *
 * Field names deliberately follow Ironic's node and port objects (snake_case), so that
 * JSON-PATCH paths (`/driver_info/redfish_address`), per-field policies and list filters apply
 * to the model directly without a translation table. Timestamps are epoch milliseconds (UTC);
 * the API renders them as ISO-8601. Source of the field set:
 * https://docs.openstack.org/api-ref/baremetal/#nodes-nodes and #ports-ports.
 */
import type { InterfaceKind } from '../hardware/interfaces.ts';
import type { JsonObject } from './masking.ts';
import type { NodePowerState, ProvisionState } from './states.ts';

/** The twelve `<kind>_interface` fields of a node. */
export type InterfaceField = `${InterfaceKind}_interface`;

/** A node as stored (one row of the inventory). */
export interface Node {
  /** Internal, monotonically increasing id: the default sort order (creation order). */
  readonly id: number;
  /** Row version, incremented by every write (optimistic concurrency and render caching). */
  readonly version: number;
  readonly uuid: string;
  readonly name: string | null;
  readonly description: string | null;
  readonly driver: string;
  readonly chassis_uuid: string | null;
  readonly resource_class: string | null;
  /** Lower-case; '' for the default group. */
  readonly conductor_group: string;
  readonly shard: string | null;
  /** Owner project id. */
  readonly owner: string | null;
  /** Lessee project id. */
  readonly lessee: string | null;
  readonly instance_uuid: string | null;
  readonly allocation_uuid: string | null;
  /** Sorted, unique. */
  readonly traits: readonly string[];
  /** Secret values (see `isSecretKey`) are stored sealed (`enc:v1:…`), never in clear. */
  readonly driver_info: JsonObject;
  readonly driver_internal_info: JsonObject;
  readonly instance_info: JsonObject;
  readonly properties: JsonObject;
  readonly extra: JsonObject;
  readonly network_data: JsonObject;
  readonly power_state: NodePowerState | null;
  /** A pending power change: a power target (`power on`, `rebooting`, …) or null. */
  readonly target_power_state: string | null;
  readonly provision_state: ProvisionState;
  readonly target_provision_state: ProvisionState | null;
  readonly provision_updated_at: number | null;
  readonly last_error: string | null;
  readonly fault: string | null;
  /** Hostname of the conductor holding the node's exclusive lock, or null. */
  readonly reservation: string | null;
  readonly maintenance: boolean;
  readonly maintenance_reason: string | null;
  readonly protected: boolean;
  readonly protected_reason: string | null;
  readonly retired: boolean;
  readonly retired_reason: string | null;
  readonly automated_clean: boolean | null;
  readonly console_enabled: boolean;
  readonly clean_step: JsonObject;
  readonly deploy_step: JsonObject;
  readonly raid_config: JsonObject;
  readonly target_raid_config: JsonObject;
  readonly inspection_started_at: number | null;
  readonly inspection_finished_at: number | null;
  readonly boot_mode: string | null;
  readonly secure_boot: boolean | null;
  readonly bios_interface: string | null;
  readonly boot_interface: string | null;
  readonly console_interface: string | null;
  readonly deploy_interface: string | null;
  readonly inspect_interface: string | null;
  readonly management_interface: string | null;
  readonly network_interface: string | null;
  readonly power_interface: string | null;
  readonly raid_interface: string | null;
  readonly rescue_interface: string | null;
  readonly storage_interface: string | null;
  readonly vendor_interface: string | null;
  readonly created_at: number;
  /** Null until the first update (as Ironic). */
  readonly updated_at: number | null;
}

/** A node field name. */
export type NodeField = Exclude<keyof Node, 'id' | 'version'>;

/**
 * Part of a node, as loaded for a list with a field selection: the listed fields plus the
 * ones every caller needs (identity, ownership for policy, version for caching).
 */
export type NodeSlice = Partial<Node> & Pick<Node, 'id' | 'version' | 'uuid' | 'owner' | 'lessee'>;

/** Fields always loaded with a {@link NodeSlice}. */
export const SLICE_BASE_FIELDS: readonly (keyof Node)[] = Object.freeze(['id', 'version', 'uuid', 'owner', 'lessee']);

/** The interface fields, in Ironic's order. */
export const INTERFACE_FIELDS: readonly InterfaceField[] = Object.freeze([
  'bios_interface',
  'boot_interface',
  'console_interface',
  'deploy_interface',
  'inspect_interface',
  'management_interface',
  'network_interface',
  'power_interface',
  'raid_interface',
  'rescue_interface',
  'storage_interface',
  'vendor_interface',
]);

/** Node fields stored as JSON objects. */
export const NODE_JSON_FIELDS = Object.freeze([
  'driver_info',
  'driver_internal_info',
  'instance_info',
  'properties',
  'extra',
  'network_data',
  'clean_step',
  'deploy_step',
  'raid_config',
  'target_raid_config',
] as const);

/** Every node field the API can show (the API hides some per microversion). */
export const NODE_FIELDS: readonly NodeField[] = Object.freeze([
  'uuid',
  'name',
  'description',
  'driver',
  'chassis_uuid',
  'resource_class',
  'conductor_group',
  'shard',
  'owner',
  'lessee',
  'instance_uuid',
  'allocation_uuid',
  'traits',
  'driver_info',
  'driver_internal_info',
  'instance_info',
  'properties',
  'extra',
  'network_data',
  'power_state',
  'target_power_state',
  'provision_state',
  'target_provision_state',
  'provision_updated_at',
  'last_error',
  'fault',
  'reservation',
  'maintenance',
  'maintenance_reason',
  'protected',
  'protected_reason',
  'retired',
  'retired_reason',
  'automated_clean',
  'console_enabled',
  'clean_step',
  'deploy_step',
  'raid_config',
  'target_raid_config',
  'inspection_started_at',
  'inspection_finished_at',
  'boot_mode',
  'secure_boot',
  ...INTERFACE_FIELDS,
  'created_at',
  'updated_at',
]);

/** Fields a node list may be sorted by: any scalar column (JSON and list fields → 400). */
export const NODE_SORT_KEYS: ReadonlySet<string> = new Set([
  'id',
  ...NODE_FIELDS.filter((f) => !(NODE_JSON_FIELDS as readonly string[]).includes(f) && f !== 'traits'),
]);

/** A network port of a node. */
export interface Port {
  readonly id: number;
  readonly uuid: string;
  /** Lower-case, colon-separated MAC address; unique. */
  readonly address: string;
  /** Internal id of the node the port belongs to. */
  readonly node_id: number;
  /** UUID of that node (joined). */
  readonly node_uuid: string;
  readonly portgroup_uuid: string | null;
  readonly extra: JsonObject;
  /** Read-only data the conductor keeps (e.g. `tenant_vif_port_id`). */
  readonly internal_info: JsonObject;
  readonly local_link_connection: Record<string, string>;
  readonly pxe_enabled: boolean;
  readonly physical_network: string | null;
  readonly is_smartnic: boolean;
  readonly created_at: number;
  readonly updated_at: number | null;
}

/** Fields a port list may be sorted by. */
export const PORT_SORT_KEYS: ReadonlySet<string> = new Set([
  'id',
  'uuid',
  'address',
  'pxe_enabled',
  'physical_network',
  'is_smartnic',
  'created_at',
  'updated_at',
]);

/** A conductor process as registered in the inventory (`GET /v1/conductors`). */
export interface Conductor {
  readonly hostname: string;
  readonly conductor_group: string;
  /** Names of the hardware types this conductor can drive. */
  readonly drivers: readonly string[];
  readonly created_at: number;
  /** Last heartbeat, epoch ms. */
  readonly updated_at: number;
}
