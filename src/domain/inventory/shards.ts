/**
 * Shards (Ironic 21.4 `ShardController`, API ≥ 1.82): `GET /v1/shards` lists each value of the
 * nodes' `shard` field with its number of nodes, `{"name": …, "count": …}`, most nodes first.
 * As Ironic 21.4 (`get_shard_list`, which formats the value with Python's `str`), nodes without
 * a shard are counted under the name `"None"`. Rule `baremetal:shards:get` (system readers; a
 * system-level answer: it counts every node).
 */
import type { AuthContext } from '../auth.ts';
import type { Policy } from '../policy/types.ts';
import type { NodeRepository } from './ports.ts';

/** One shard as the API shows it. */
export interface ShardSummary {
  readonly name: string;
  readonly count: number;
}

/** The shards of the inventory; see the module documentation. */
export class ShardService {
  constructor(
    private readonly nodes: Pick<NodeRepository, 'shardCounts'>,
    private readonly policy: Policy,
  ) {}

  /** Every shard, most nodes first (ties by name). @throws ForbiddenError */
  async list(ctx: AuthContext): Promise<ShardSummary[]> {
    this.policy.authorize('baremetal:shards:get', {}, ctx);
    const counts = await this.nodes.shardCounts();
    return counts
      .map((c) => ({ name: c.shard === null ? 'None' : c.shard, count: c.count }))
      .sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}
