/**
 * Kysely implementation of the inspection repository port (src/domain/inspection/ports.ts),
 * portable across SQLite and PostgreSQL: stored inventories (upsert by `node_id`) and the
 * conductor's port writes for a node it holds — in one transaction that first checks
 * `nodes.reservation = host` (the port repository's own writes refuse reserved nodes, which
 * is right for the API but not for the conductor that holds the lock).
 */
import type { JsonObject } from '../../domain/inventory/masking.ts';
import type { InspectionPortPlan, InspectionRepository, StoredInventory } from '../../domain/inspection/ports.ts';
import { fromJson, toJson, type Db } from '../database.ts';

/** The inspection repository over a Kysely database. */
export class KyselyInspectionRepository implements InspectionRepository {
  constructor(private readonly db: Db) {}

  async getInventory(nodeId: number): Promise<StoredInventory | null> {
    const r = await this.db.selectFrom('node_inventory').selectAll().where('node_id', '=', nodeId).executeTakeFirst();
    if (!r) return null;
    return {
      inventory: fromJson<JsonObject>(r.inventory_data, {}),
      plugin_data: fromJson<JsonObject>(r.plugin_data, {}),
      created_at: Number(r.created_at),
      updated_at: r.updated_at === null ? null : Number(r.updated_at),
    };
  }

  async putInventory(nodeId: number, inventory: JsonObject, pluginData: JsonObject, now: number): Promise<void> {
    await this.db
      .insertInto('node_inventory')
      .values({ node_id: nodeId, inventory_data: toJson(inventory), plugin_data: toJson(pluginData), created_at: now, updated_at: null })
      .onConflict((oc) =>
        oc.column('node_id').doUpdateSet({ inventory_data: toJson(inventory), plugin_data: toJson(pluginData), updated_at: now }),
      )
      .execute();
  }

  async putPluginData(nodeId: number, pluginData: JsonObject, now: number): Promise<void> {
    await this.db
      .updateTable('node_inventory')
      .set({ plugin_data: toJson(pluginData), updated_at: now })
      .where('node_id', '=', nodeId)
      .execute();
  }

  async applyPorts(nodeId: number, host: string, plan: InspectionPortPlan, now: number): Promise<string[]> {
    return this.db.transaction().execute(async (tx) => {
      const node = await tx.selectFrom('nodes').select(['reservation']).where('id', '=', nodeId).executeTakeFirst();
      if (!node || node.reservation !== host) throw new Error(`node ${nodeId} is not held by conductor ${host}`);
      const skipped: string[] = [];
      for (const c of plan.creates) {
        const taken = await tx.selectFrom('ports').select('id').where('address', '=', c.address).executeTakeFirst();
        if (taken) {
          skipped.push(c.address);
          continue;
        }
        await tx
          .insertInto('ports')
          .values({
            uuid: c.uuid,
            address: c.address,
            node_id: nodeId,
            portgroup_uuid: null,
            extra: '{}',
            internal_info: '{}',
            local_link_connection: toJson(c.local_link_connection),
            pxe_enabled: c.pxe_enabled ? 1 : 0,
            physical_network: null,
            is_smartnic: 0,
            created_at: now,
            updated_at: null,
          })
          .execute();
      }
      for (const u of plan.updates) {
        await tx
          .updateTable('ports')
          .set({
            ...(u.pxe_enabled !== undefined ? { pxe_enabled: u.pxe_enabled ? 1 : 0 } : {}),
            ...(u.local_link_connection !== undefined ? { local_link_connection: toJson(u.local_link_connection) } : {}),
            updated_at: now,
          })
          .where('uuid', '=', u.uuid)
          .where('node_id', '=', nodeId)
          .execute();
      }
      return skipped;
    });
  }
}
