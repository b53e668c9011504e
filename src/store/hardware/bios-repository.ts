/**
 * Kysely implementation of the BIOS settings cache port (`BiosSettingsRepository`,
 * src/domain/inventory/node-hardware.ts) over `node_bios_settings` (migration 0013).
 */
import type { BiosSetting } from '../../domain/hardware/bios.ts';
import type { BiosSettingsRepository, StoredBiosSetting } from '../../domain/inventory/node-hardware.ts';
import { fromJson, toJson, type Db } from '../database.ts';
import type { NodeBiosSettingsTable } from './tables.ts';

const flag = (v: boolean | null): number | null => (v === null ? null : v ? 1 : 0);
const unflag = (v: number | null): boolean | null => (v === null ? null : v !== 0);

/** BIOS settings cache over a Kysely handle. */
export class KyselyBiosSettingsRepository implements BiosSettingsRepository {
  constructor(private readonly db: Db) {}

  async list(nodeId: number): Promise<StoredBiosSetting[]> {
    const rows = await this.db.selectFrom('node_bios_settings').selectAll().where('node_id', '=', nodeId).orderBy('name').execute();
    return rows.map(toSetting);
  }

  async replace(nodeId: number, settings: readonly BiosSetting[], now: number): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const old = new Map(
        (await tx.selectFrom('node_bios_settings').selectAll().where('node_id', '=', nodeId).execute()).map((r) => [r.name, r]),
      );
      await tx.deleteFrom('node_bios_settings').where('node_id', '=', nodeId).execute();
      if (settings.length === 0) return;
      const rows: NodeBiosSettingsTable[] = settings.map((s) => {
        const before = old.get(s.name);
        return {
          node_id: nodeId,
          name: s.name,
          value: s.value,
          attribute_type: s.attribute_type,
          allowable_values: s.allowable_values === null ? null : toJson([...s.allowable_values]),
          lower_bound: s.lower_bound,
          upper_bound: s.upper_bound,
          min_length: s.min_length,
          max_length: s.max_length,
          read_only: flag(s.read_only),
          reset_required: flag(s.reset_required),
          is_unique: flag(s.unique),
          created_at: before?.created_at ?? now,
          updated_at: before === undefined ? null : before.value !== s.value ? now : before.updated_at,
        };
      });
      for (let i = 0; i < rows.length; i += 200)
        await tx
          .insertInto('node_bios_settings')
          .values(rows.slice(i, i + 200))
          .execute();
    });
  }
}

function toSetting(r: NodeBiosSettingsTable): StoredBiosSetting {
  return {
    name: r.name,
    value: r.value,
    attribute_type: r.attribute_type,
    allowable_values: r.allowable_values === null ? null : fromJson<string[]>(r.allowable_values, []),
    lower_bound: r.lower_bound,
    upper_bound: r.upper_bound,
    min_length: r.min_length,
    max_length: r.max_length,
    read_only: unflag(r.read_only),
    reset_required: unflag(r.reset_required),
    unique: unflag(r.is_unique),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}
