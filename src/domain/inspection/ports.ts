/**
 * Storage ports of inspection: the stored inventories (Ironic's `node_inventory`) and the port
 * writes of the conductor that holds a node while it processes an inspection.
 */
import type { JsonObject } from '../inventory/masking.ts';

/** A node's stored inspection result (`GET /v1/nodes/{id}/inventory`). */
export interface StoredInventory {
  readonly inventory: JsonObject;
  readonly plugin_data: JsonObject;
  /** Epoch ms. */
  readonly created_at: number;
  readonly updated_at: number | null;
}

/** A port inspection creates. */
export interface InspectedPortCreate {
  readonly uuid: string;
  /** Lower-case MAC. */
  readonly address: string;
  readonly pxe_enabled: boolean;
  readonly local_link_connection: Record<string, string>;
}

/** A change inspection makes to an existing port of the node. */
export interface InspectedPortUpdate {
  readonly uuid: string;
  readonly pxe_enabled?: boolean;
  readonly local_link_connection?: Record<string, string>;
}

/** The port writes of one inspection. */
export interface InspectionPortPlan {
  readonly creates: readonly InspectedPortCreate[];
  readonly updates: readonly InspectedPortUpdate[];
}

/** Storage of inventories and the conductor's port writes. */
export interface InspectionRepository {
  /** The stored inventory of the node (internal id), or null. */
  getInventory(nodeId: number): Promise<StoredInventory | null>;
  /** Store (replace) the node's inventory and plugin data. */
  putInventory(nodeId: number, inventory: JsonObject, pluginData: JsonObject, now: number): Promise<void>;
  /** Replace only the plugin data (after processing). */
  putPluginData(nodeId: number, pluginData: JsonObject, now: number): Promise<void>;
  /**
   * Apply a port plan to a node that conductor `host` holds (its reservation), in one
   * transaction. A create whose MAC already belongs to a port (of any node) is skipped.
   * @returns the MACs skipped
   * @throws Error when the node is not reserved by `host` (nothing written)
   */
  applyPorts(nodeId: number, host: string, plan: InspectionPortPlan, now: number): Promise<string[]>;
}
