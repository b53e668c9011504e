/**
 * The scheduler's node reads (`SchedulingNodes`, src/domain/scheduling/ports.ts): the dozen
 * columns the filters read, for the nodes a query admits, as value arrays
 * (`Store.selectArrays`, no object per row from the driver) turned into `SchedNode`s.
 *
 * With `freeOnly` the database applies the cheap filters (`available`, not in maintenance, no
 * instance — the `nodes_provision_state_idx` index narrows the scan). The distinct resource
 * classes are cached for {@link RC_CACHE_MS}; callers that find no matching class ask again
 * with `fresh` (a class that no longer matches simply filters out).
 */
import type { CompiledQuery } from 'kysely';
import type { Clock } from '../../domain/clock.ts';
import type { SchedNode } from '../../domain/scheduling/model.ts';
import { schedNodeOf } from '../../domain/scheduling/node-facts.ts';
import type { SchedulingNodeQuery, SchedulingNodes } from '../../domain/scheduling/ports.ts';
import type { ArrayQuery, Db } from '../database.ts';
import { nodeMapper } from '../inventory/node-rows.ts';

/** Columns read, in order (also the mapper's field order). */
const COLUMNS = ['id', 'version', 'uuid', 'owner', 'lessee', 'name', 'resource_class', 'traits', 'provision_state', 'maintenance', 'power_state', 'instance_uuid', 'properties'] as const;
/** How long the list of resource classes is reused, ms. */
export const RC_CACHE_MS = 2000;

/** Scheduler node reads over a Kysely handle. */
export class KyselySchedulingNodes implements SchedulingNodes {
  #classes: { at: number; list: string[] } | null = null;
  readonly #map = nodeMapper(COLUMNS);

  /**
   * @param arrays the store's `selectArrays`; without it rows are read through `db`
   */
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly arrays?: ArrayQuery,
  ) {}

  async find(q: SchedulingNodeQuery): Promise<SchedNode[]> {
    let query = this.db.selectFrom('nodes').select([...COLUMNS]);
    if (q.freeOnly) {
      query = query.where('provision_state', '=', 'available').where('maintenance', '=', 0).where('instance_uuid', 'is', null);
    }
    if (q.project !== null) {
      const p = q.project;
      query = query.where((eb) => eb.or([eb('owner', '=', p), eb('lessee', '=', p)]));
    }
    if (q.resourceClasses !== null) {
      if (q.resourceClasses.length === 0) return [];
      query = query.where('resource_class', 'in', q.resourceClasses);
    }
    if (q.uuids !== null) {
      if (q.uuids.length === 0) return [];
      query = query.where('uuid', 'in', q.uuids);
    }
    const rows = await this.#rows(query.orderBy('id').compile());
    return rows.map((r) => schedNodeOf(this.#map(r)));
  }

  async get(uuid: string): Promise<SchedNode | null> {
    const rows = await this.#rows(this.db.selectFrom('nodes').select([...COLUMNS]).where('uuid', '=', uuid).compile());
    return rows[0] ? schedNodeOf(this.#map(rows[0])) : null;
  }

  async resourceClasses(fresh = false): Promise<string[]> {
    const now = this.clock.now();
    if (!fresh && this.#classes !== null && now - this.#classes.at < RC_CACHE_MS && now >= this.#classes.at) return this.#classes.list;
    const rows = await this.db.selectFrom('nodes').select('resource_class').distinct().where('resource_class', 'is not', null).execute();
    const list = rows.map((r) => r.resource_class!).sort();
    this.#classes = { at: now, list };
    return list;
  }

  async #rows(query: CompiledQuery): Promise<unknown[][]> {
    if (this.arrays) return this.arrays(query);
    const r = await this.db.executeQuery<Record<string, unknown>>(query);
    return r.rows.map((row) => COLUMNS.map((c) => row[c]));
  }
}
