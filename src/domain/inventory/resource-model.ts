/**
 * The inventory resources besides nodes and ports (issue 18): chassis, portgroups, volume
 * connectors and volume targets, with Ironic 21.4's field names (snake_case) so that JSON-PATCH
 * paths and list filters apply to them directly. Timestamps are epoch ms (UTC).
 *
 * Sources: https://docs.openstack.org/api-ref/baremetal/ (#chassis-chassis, #portgroups-portgroups,
 * #volume-volume) and Ironic 21.4's objects (`ironic/objects/{chassis,portgroup,volume_connector,
 * volume_target}.py`).
 */
import type { JsonObject } from './masking.ts';

/** A chassis: a named group of nodes (system-level; nodes name it by `chassis_uuid`). */
export interface Chassis {
  /** Internal id: the default sort order (creation order). */
  readonly id: number;
  readonly uuid: string;
  /** At most 255 characters. */
  readonly description: string | null;
  readonly extra: JsonObject;
  readonly created_at: number;
  readonly updated_at: number | null;
}

/** A portgroup: a bond (link aggregate) of a node's ports. */
export interface Portgroup {
  readonly id: number;
  readonly uuid: string;
  /** A logical name (unique), or null. */
  readonly name: string | null;
  /** Lower-case MAC (unique), or null. */
  readonly address: string | null;
  /** Internal id of the node. */
  readonly node_id: number;
  /** UUID of that node (joined). */
  readonly node_uuid: string;
  /** Bonding mode (e.g. `active-backup`, `802.3ad`); Ironic's default is `active-backup`. */
  readonly mode: string | null;
  /** Bonding properties (e.g. `miimon`). */
  readonly properties: JsonObject;
  readonly extra: JsonObject;
  /** Read-only data the conductor keeps. */
  readonly internal_info: JsonObject;
  /** Whether the group's ports may also be used on their own (PXE, VIFs). */
  readonly standalone_ports_supported: boolean;
  readonly created_at: number;
  readonly updated_at: number | null;
}

/** A volume connector: how a node reaches storage (an initiator: iqn, ip, mac, wwnn, wwpn…). */
export interface VolumeConnector {
  readonly id: number;
  readonly uuid: string;
  readonly node_id: number;
  readonly node_uuid: string;
  /** Connector type (`iqn`, `ip`, `mac`, `wwnn`, `wwpn`, `port`, `portgroup`); (type, connector_id) is unique. */
  readonly type: string;
  readonly connector_id: string;
  readonly extra: JsonObject;
  readonly created_at: number;
  readonly updated_at: number | null;
}

/** A volume target: a volume a node may boot from or attach (boot from volume). */
export interface VolumeTarget {
  readonly id: number;
  readonly uuid: string;
  readonly node_id: number;
  readonly node_uuid: string;
  /** Storage type (e.g. `iscsi`, `fibre_channel`). */
  readonly volume_type: string;
  /** The storage service's id of the volume. */
  readonly volume_id: string;
  /** Boot order; (node, boot_index) is unique, 0 is the boot volume. */
  readonly boot_index: number;
  /** Connection details; secrets are masked when shown, and all of it needs `baremetal:volume:view_target_properties`. */
  readonly properties: JsonObject;
  readonly extra: JsonObject;
  readonly created_at: number;
  readonly updated_at: number | null;
}

/** Sort keys of chassis lists (Ironic refuses `extra`). */
export const CHASSIS_SORT_KEYS: ReadonlySet<string> = new Set(['id', 'uuid', 'description', 'created_at', 'updated_at']);

/** Sort keys of portgroup lists (Ironic refuses `extra`, `internal_info`, `properties`). */
export const PORTGROUP_SORT_KEYS: ReadonlySet<string> = new Set([
  'id',
  'uuid',
  'node_id',
  'name',
  'address',
  'mode',
  'standalone_ports_supported',
  'created_at',
  'updated_at',
]);

/** Sort keys of volume connector lists (Ironic refuses `extra`). */
export const CONNECTOR_SORT_KEYS: ReadonlySet<string> = new Set([
  'id',
  'uuid',
  'node_id',
  'type',
  'connector_id',
  'created_at',
  'updated_at',
]);

/** Sort keys of volume target lists (Ironic refuses `extra`, `properties`). */
export const TARGET_SORT_KEYS: ReadonlySet<string> = new Set([
  'id',
  'uuid',
  'node_id',
  'volume_type',
  'volume_id',
  'boot_index',
  'created_at',
  'updated_at',
]);

/** Text columns among the sort keys (NULL sorts as ''; numeric ones as -1). */
export const TEXT_SORT_KEYS: ReadonlySet<string> = new Set([
  'uuid',
  'description',
  'name',
  'address',
  'mode',
  'type',
  'connector_id',
  'volume_type',
  'volume_id',
]);
