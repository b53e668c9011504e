/**
 * Kysely implementation of the networking repository port (src/domain/networking/ports.ts),
 * portable across SQLite and PostgreSQL: the Neutron collections (`./queries.ts`), routers and
 * the dataplane reads (`./l3-queries.ts`), floating IPs and port forwardings
 * (`./fip-queries.ts`), per-project quota limits (`./quota-queries.ts`), switches, switch-port
 * reconciliation state and cabling (`./switch-queries.ts`), and here the bare-metal port reads
 * and writes of VIF binding and of `esi node network list`.
 * `locked()` runs a function in `Store.withLock` (advisory locks on PostgreSQL).
 *
 * Bare-metal ports keep `local_link_connection` as JSON text written by esi
 * (`JSON.stringify`, compact), so a port on a switch is found with a `LIKE` on the exact JSON
 * member text first and confirmed on the parsed value.
 */
import { sql, type CompiledQuery, type ExpressionBuilder } from 'kysely';
import type { Switch } from '../../domain/networking/model.ts';
import type { FixedIp } from '../../domain/networking/model.ts';
import type {
  NetworkRepository,
  NetworkTx,
  BoundNetPort,
  NodePortLink,
  IdsOrEvery,
  NodeScope,
  NodeVifRow,
  SubPortRow,
} from '../../domain/networking/ports.ts';
import { fromJson, toJson, type Db, type Store, type Tx } from '../database.ts';
import type { Database } from '../schema.ts';
import { DISPLAY_IN_STEP } from '../inventory/node-display.ts';
import { SwitchQueries } from './switch-queries.ts';
import { chunks, idParts, NODE_PORT_COLUMNS, toNodePort } from './rows.ts';

/** Escape `%`, `_` and `\` for a LIKE pattern with `ESCAPE '\'`. */
function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** All reads and writes over one handle. */
export class NetworkQueries extends SwitchQueries implements NetworkTx {
  constructor(db: Db | Tx) {
    super(db);
  }

  // --- bare-metal ports -------------------------------------------------------------------
  private nodePortQuery() {
    return this.db
      .selectFrom('ports')
      .innerJoin('nodes', 'nodes.id', 'ports.node_id')
      .select([...NODE_PORT_COLUMNS]);
  }

  async nodePorts(nodeUuid: string): Promise<NodePortLink[]> {
    const rows = await this.nodePortQuery().where('nodes.uuid', '=', nodeUuid).orderBy('ports.id').execute();
    return rows.map(toNodePort);
  }

  async nodeVifRows(nodeUuids: readonly string[]): Promise<NodeVifRow[]> {
    const out: NodeVifRow[] = [];
    for (const part of chunks([...new Set(nodeUuids)])) {
      if (part.length === 0) continue;
      out.push(...(await this.vifRows(this.vifRowQuery().where('nodes.uuid', 'in', part))));
    }
    return out;
  }

  async nodeVifRowsIn(scope: NodeScope): Promise<NodeVifRow[]> {
    if (scope.kind === 'none') return [];
    const q = this.vifRowQuery();
    return this.vifRows(scope.kind === 'project' ? q.where(ownsOrLeases(scope.project)) : q);
  }

  async nodePortsIn(scope: NodeScope): Promise<NodePortLink[]> {
    if (scope.kind === 'none') return [];
    const q = this.nodePortQuery();
    return (await (scope.kind === 'project' ? q.where(ownsOrLeases(scope.project)) : q).orderBy('ports.id').execute()).map(toNodePort);
  }

  /**
   * Bare-metal ports joined with their node, bound VIF and the VIF's trunk, in the column order
   * of {@link VIF_ROW_COLUMNS}; of the binding only its VIF type (`binding_failed` or another).
   */
  private vifRowQuery() {
    return this.db
      .selectFrom('ports')
      .innerJoin('nodes', 'nodes.id', 'ports.node_id')
      .leftJoin('network_ports as np', 'np.bound_port_uuid', 'ports.uuid')
      .leftJoin('network_trunks as t', 't.port_id', 'np.id')
      .select([
        'ports.uuid as port_uuid',
        'ports.address',
        'nodes.uuid as node_uuid',
        'nodes.name as node_name',
        'np.id as vif_id',
        'np.name as vif_name',
        'np.project_id as vif_project',
        'np.network_id as vif_network',
        'np.status as vif_status',
        'np.binding_vif_type as vif_type',
        't.id as trunk_id',
        't.name as trunk_name',
        't.project_id as trunk_project',
      ]);
  }

  /**
   * Run a {@link vifRowQuery} (oldest bare-metal port first) as value arrays, then read the
   * details of failed bindings (rare) by id: the joined read stays within the covering index
   * `network_ports_bound_cover_idx` (migration 0024) and never visits the VIFs' table rows.
   */
  private async vifRows(q: ReturnType<NetworkQueries['vifRowQuery']>): Promise<NodeVifRow[]> {
    const rows = await this.valueRows(q.orderBy('ports.id').compile(), VIF_ROW_COLUMNS);
    const failed = rows.filter((r) => r[FAILED_TYPE_COLUMN] === 'binding_failed').map((r) => r[VIF_ID_COLUMN] as string);
    const reasons = new Map<string, string>();
    for (const part of chunks(failed)) {
      if (part.length === 0) continue;
      const found = await this.db.selectFrom('network_ports').select(['id', 'binding_vif_details']).where('id', 'in', part).execute();
      for (const f of found)
        reasons.set(f.id, String(fromJson<Record<string, unknown>>(f.binding_vif_details, {}).reason ?? 'binding failed'));
    }
    return rows.map((r) => toVifRow(r, reasons));
  }

  async fixedIpsOf(portIds: IdsOrEvery): Promise<Map<string, FixedIp[]>> {
    const out = new Map<string, FixedIp[]>();
    const query = (part: readonly string[] | null): CompiledQuery => {
      let q = this.db.selectFrom('network_ip_allocations').select(['port_id', 'subnet_id', 'ip_address']);
      if (part !== null) q = q.where('port_id', 'in', part);
      return q.orderBy('port_id').orderBy('position').compile();
    };
    for (const part of idParts(portIds)) {
      for (const [port, subnet_id, ip_address] of (await this.valueRows(query(part), [
        'port_id',
        'subnet_id',
        'ip_address',
      ])) as string[][]) {
        const ip: FixedIp = { subnet_id: subnet_id!, ip_address: ip_address! };
        const list = out.get(port!);
        if (list) list.push(ip);
        else out.set(port!, [ip]);
      }
    }
    return out;
  }

  async fixedIpsOfBoundPorts(): Promise<Map<string, FixedIp[]>> {
    // From the bound ports (the covering index of `bound_port_uuid`) to their allocations: the
    // VIFs' addresses only, not every router, DHCP, floating or trunk sub-port's; no ORDER BY
    // (a port's allocations come in `position` order from the allocations' covering index, and are
    // sorted below where a port has several, as the index's order is not a promise of SQL).
    const q = this.db
      .selectFrom('network_ports as np')
      .innerJoin('network_ip_allocations as a', 'a.port_id', 'np.id')
      .select(['a.port_id', 'a.subnet_id', 'a.ip_address', 'a.position'])
      .where('np.bound_port_uuid', 'is not', null)
      .compile();
    const out = new Map<string, FixedIp[]>();
    const positions = new Map<FixedIp, number>();
    let several = false;
    for (const [port, subnet_id, ip_address, position] of (await this.valueRows(q, ['port_id', 'subnet_id', 'ip_address', 'position'])) as [
      string,
      string,
      string,
      number,
    ][]) {
      const ip: FixedIp = { subnet_id, ip_address };
      positions.set(ip, Number(position));
      const list = out.get(port);
      if (list) {
        list.push(ip);
        several = true;
      } else out.set(port, [ip]);
    }
    if (several) for (const list of out.values()) if (list.length > 1) list.sort((a, b) => positions.get(a)! - positions.get(b)!);
    return out;
  }

  async subPortsOf(trunkIds: IdsOrEvery): Promise<Map<string, SubPortRow[]>> {
    const out = new Map<string, SubPortRow[]>();
    const columns = ['trunk_id', 'port_id', 'segmentation_id', 'project_id', 'network_id'];
    const query = (part: readonly string[] | null): CompiledQuery => {
      let q = this.db
        .selectFrom('network_subports as s')
        .innerJoin('network_ports as p', 'p.id', 's.port_id')
        .select(['s.trunk_id', 's.port_id', 's.segmentation_id', 'p.project_id', 'p.network_id']);
      if (part !== null) q = q.where('s.trunk_id', 'in', part);
      return q.orderBy('s.trunk_id').orderBy('s.segmentation_id').compile();
    };
    for (const part of idParts(trunkIds)) {
      for (const r of await this.valueRows(query(part), columns)) {
        const [trunk, port_id, segmentation_id, project_id, network_id] = r as [string, string, number, string, string];
        const sub: SubPortRow = { port_id, project_id, network_id, segmentation_id: Number(segmentation_id) };
        const list = out.get(trunk);
        if (list) list.push(sub);
        else out.set(trunk, [sub]);
      }
    }
    return out;
  }

  async nodePortByVif(vifId: string): Promise<NodePortLink | null> {
    const bound = await this.db.selectFrom('network_ports').select('bound_port_uuid').where('id', '=', vifId).executeTakeFirst();
    if (!bound?.bound_port_uuid) return null;
    const row = await this.nodePortQuery().where('ports.uuid', '=', bound.bound_port_uuid).executeTakeFirst();
    return row ? toNodePort(row) : null;
  }

  async nodePortsOnSwitch(sw: Pick<Switch, 'switch_id' | 'name'>): Promise<NodePortLink[]> {
    const member = (key: string, value: string): string => `%${likeEscape(`"${key}":${JSON.stringify(value)}`)}%`;
    const rows = await this.nodePortQuery()
      .where((eb) =>
        eb.or([
          eb(sql`lower(ports.local_link_connection)`, 'like', sql<string>`${member('switch_id', sw.switch_id.toLowerCase())} escape '\\'`),
          eb('ports.local_link_connection', 'like', sql<string>`${member('switch_info', sw.name)} escape '\\'`),
        ]),
      )
      .orderBy('ports.id')
      .execute();
    return rows.map(toNodePort).filter((p) => {
      const llc = p.local_link_connection;
      return llc.switch_info !== undefined && llc.switch_info !== ''
        ? llc.switch_info === sw.name
        : (llc.switch_id ?? '').toLowerCase() === sw.switch_id.toLowerCase();
    });
  }

  async nodePortByUuid(uuid: string): Promise<NodePortLink | null> {
    const row = await this.nodePortQuery().where('ports.uuid', '=', uuid).executeTakeFirst();
    return row ? toNodePort(row) : null;
  }

  async boundPorts(): Promise<BoundNetPort[]> {
    const rows = await this.db
      .selectFrom('network_ports')
      .select(['id', 'bound_port_uuid'])
      .where('bound_port_uuid', 'is not', null)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ id: r.id, bound_port_uuid: r.bound_port_uuid! }));
  }

  async claimNode(nodeUuid: string): Promise<'ok' | 'reserved' | 'missing'> {
    const r = await this.db
      .updateTable('nodes')
      .set({ version: sql`version + 1`, display_version: DISPLAY_IN_STEP })
      .where('uuid', '=', nodeUuid)
      .where('reservation', 'is', null)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 1) return 'ok';
    const n = await this.db.selectFrom('nodes').select('reservation').where('uuid', '=', nodeUuid).executeTakeFirst();
    return n ? 'reserved' : 'missing';
  }

  async setNodePortInternalInfo(portUuid: string, internalInfo: Readonly<Record<string, unknown>>, now: number): Promise<void> {
    await this.db
      .updateTable('ports')
      .set({ internal_info: toJson(internalInfo), updated_at: now })
      .where('uuid', '=', portUuid)
      .execute();
  }
}

/** The networking repository over an open store. */
export class KyselyNetworkRepository extends NetworkQueries implements NetworkRepository {
  constructor(private readonly store: Store) {
    super(store.db);
    this.arrays = store.selectArrays;
  }

  locked<T>(keys: readonly string[], fn: (tx: NetworkTx) => Promise<T>): Promise<T> {
    return this.store.withLock(keys, (tx) => fn(new NetworkQueries(tx)));
  }
}

/** `nodes.owner = project OR nodes.lessee = project`: the nodes a project-scoped caller lists. */
function ownsOrLeases(project: string) {
  return (eb: ExpressionBuilder<Database, 'nodes'>) => eb.or([eb('nodes.owner', '=', project), eb('nodes.lessee', '=', project)]);
}

/** The output columns of `vifRowQuery`, in order (the names of the fallback's object rows). */
const VIF_ROW_COLUMNS = [
  'port_uuid',
  'address',
  'node_uuid',
  'node_name',
  'vif_id',
  'vif_name',
  'vif_project',
  'vif_network',
  'vif_status',
  'vif_type',
  'trunk_id',
  'trunk_name',
  'trunk_project',
] as const;

/** Positions in {@link VIF_ROW_COLUMNS} of the VIF's id and its binding's VIF type. */
const VIF_ID_COLUMN = VIF_ROW_COLUMNS.indexOf('vif_id');
const FAILED_TYPE_COLUMN = VIF_ROW_COLUMNS.indexOf('vif_type');

/**
 * A value row of `vifRowQuery` (columns as {@link VIF_ROW_COLUMNS}) as a {@link NodeVifRow}.
 * @param reasons the reason of each failed binding, by VIF id
 */
function toVifRow(row: unknown[], reasons: ReadonlyMap<string, string>): NodeVifRow {
  const r = row as Array<string | null>;
  const vifId = r[4]!;
  return {
    port_uuid: r[0]!,
    address: r[1]!,
    node_uuid: r[2]!,
    node_name: r[3]!,
    vif:
      vifId === null
        ? null
        : {
            id: vifId,
            name: r[5]!,
            project_id: r[6]!,
            network_id: r[7]!,
            status: r[8]!,
            failed: r[9] === 'binding_failed' ? (reasons.get(vifId) ?? 'binding failed') : null,
            trunk: r[10] === null ? null : { id: r[10]!, name: r[11]!, project_id: r[12]! },
          },
  };
}
