/**
 * The networking reads and writes over one Kysely handle (the root or a transaction): the
 * implementation of `NetworkReads` and `NetworkTx` (src/domain/networking/ports.ts) that
 * `KyselyNetworkRepository` binds to the root for reads and to a locked transaction for writes.
 * Switch and bare-metal port queries live in `./repository.ts`; what each collection may be
 * listed by, in `./list-specs.ts`.
 */
import { sql, type CompiledQuery } from 'kysely';
import { ConflictError } from '../../domain/errors.ts';
import type { FixedIp, Network, NetPort, RbacPolicy, Subnet, SubPort, Trunk } from '../../domain/networking/model.ts';
import type { ListQuery, NetPortChanges } from '../../domain/networking/ports.ts';
import { isUniqueViolation, toJson, type ArrayQuery, type Db, type Tx } from '../database.ts';
import { listRows } from './list.ts';
import { NETWORK_SPEC, PORT_SPEC, RBAC_SPEC, SUBNET_SPEC, TRUNK_SPEC } from './list-specs.ts';
import { chunks, networkRow, portRow, subnetRow, toNetworks, toPorts, toRbac, toSubnet, toTrunks } from './rows.ts';

/** Run a write, turning a unique-index clash into a ConflictError with `message`. */
export async function unique<T>(fn: () => Promise<T>, message: string, code = 'Conflict'): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(message, code);
    throw err;
  }
}

/** Neutron-collection reads and writes over `db` (see the module documentation). */
export class NeutronQueries {
  /** The store's array reads (`Store.selectArrays`) when bound to the root handle; null in a transaction. */
  protected arrays: ArrayQuery | null = null;

  constructor(protected readonly db: Db | Tx) {}

  /**
   * Run a compiled SELECT and return its rows as arrays of values in select-list order: through
   * the store's array reads when bound to the root (no object per row: wide listings), else
   * through `db` (inside a transaction, which the array reads must not bypass).
   * @param columns the select list's output names, in order (for the fallback)
   */
  protected async valueRows(query: CompiledQuery, columns: readonly string[]): Promise<unknown[][]> {
    if (this.arrays !== null) return this.arrays(query);
    const r = await this.db.executeQuery<Record<string, unknown>>(query);
    return r.rows.map((row) => columns.map((c) => row[c]));
  }

  // --- networks ---------------------------------------------------------------------------
  async getNetwork(id: string): Promise<Network | null> {
    const row = await this.db.selectFrom('networks').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? (await toNetworks(this.db, [row]))[0]! : null;
  }

  async networksByIds(ids: readonly string[]): Promise<Map<string, Network>> {
    const out = new Map<string, Network>();
    for (const part of chunks([...new Set(ids)])) {
      if (part.length === 0) continue;
      const rows = await this.db.selectFrom('networks').selectAll().where('id', 'in', part).execute();
      for (const n of await toNetworks(this.db, rows)) out.set(n.id, n);
    }
    return out;
  }

  async listNetworks(q: ListQuery): Promise<Network[]> {
    return toNetworks(this.db, (await listRows(this.db, NETWORK_SPEC, q)) as never);
  }

  async usedVlans(physnet?: string): Promise<Map<string, Set<number>>> {
    let query = this.db.selectFrom('networks').select(['physical_network', 'segmentation_id']).where('network_type', '=', 'vlan');
    if (physnet !== undefined) query = query.where('physical_network', '=', physnet);
    const out = new Map<string, Set<number>>();
    for (const r of await query.execute()) {
      if (r.segmentation_id === null) continue;
      const set = out.get(r.physical_network) ?? new Set<number>();
      set.add(r.segmentation_id);
      out.set(r.physical_network, set);
    }
    return out;
  }

  async flatInUse(physnet: string): Promise<boolean> {
    return (
      (await this.db.selectFrom('networks').select('id').where('segment_key', '=', `flat:${physnet}`).executeTakeFirst()) !== undefined
    );
  }

  async insertNetwork(n: Omit<Network, 'shared_with'>): Promise<void> {
    const what =
      n.network_type === 'flat'
        ? `Unable to create the flat network. Physical network ${n.physical_network} is in use.`
        : `Unable to create the network. The VLAN ${n.segmentation_id} on physical network ${n.physical_network} is in use.`;
    await unique(
      () => this.db.insertInto('networks').values(networkRow(n)).execute(),
      what,
      n.network_type === 'flat' ? 'FlatNetworkInUse' : 'VlanIdInUse',
    );
  }

  async updateNetwork(
    id: string,
    changes: Partial<Pick<Network, 'name' | 'description' | 'admin_state_up' | 'mtu' | 'router_external'>>,
    now: number,
  ): Promise<void> {
    const set: Record<string, unknown> = { updated_at: now, revision_number: sql`revision_number + 1` };
    if (changes.router_external !== undefined) set.router_external = changes.router_external ? 1 : 0;
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.description !== undefined) set.description = changes.description;
    if (changes.admin_state_up !== undefined) set.admin_state_up = changes.admin_state_up ? 1 : 0;
    if (changes.mtu !== undefined) set.mtu = changes.mtu;
    await this.db.updateTable('networks').set(set).where('id', '=', id).execute();
  }

  async deleteNetwork(id: string): Promise<void> {
    const subnets = this.db.selectFrom('network_subnets').select('id').where('network_id', '=', id);
    await this.db.deleteFrom('network_ip_allocations').where('subnet_id', 'in', subnets).execute();
    await this.db.deleteFrom('network_subnets').where('network_id', '=', id).execute();
    await this.db.deleteFrom('network_rbac').where('object_id', '=', id).execute();
    await this.db.deleteFrom('networks').where('id', '=', id).execute();
  }

  // --- subnets ----------------------------------------------------------------------------
  async getSubnet(id: string): Promise<Subnet | null> {
    const row = await this.db.selectFrom('network_subnets').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toSubnet(row) : null;
  }

  async subnetsOfNetworks(networkIds: readonly string[]): Promise<Subnet[]> {
    const out: Subnet[] = [];
    for (const part of chunks([...new Set(networkIds)])) {
      if (part.length === 0) continue;
      const rows = await this.db
        .selectFrom('network_subnets')
        .selectAll()
        .where('network_id', 'in', part)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      out.push(...rows.map(toSubnet));
    }
    return out;
  }

  async listSubnets(q: ListQuery): Promise<Subnet[]> {
    return ((await listRows(this.db, SUBNET_SPEC, q)) as never[]).map(toSubnet);
  }

  async usedIps(subnetId: string): Promise<Set<string>> {
    const rows = await this.db.selectFrom('network_ip_allocations').select('ip_address').where('subnet_id', '=', subnetId).execute();
    return new Set(rows.map((r) => r.ip_address));
  }

  async countIps(subnetId: string): Promise<number> {
    const r = await this.db
      .selectFrom('network_ip_allocations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('subnet_id', '=', subnetId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async insertSubnet(s: Subnet): Promise<void> {
    await this.db.insertInto('network_subnets').values(subnetRow(s)).execute();
  }

  async updateSubnet(id: string, changes: Partial<Subnet>, now: number): Promise<void> {
    const set: Record<string, unknown> = { updated_at: now, revision_number: sql`revision_number + 1` };
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.description !== undefined) set.description = changes.description;
    if (changes.gateway_ip !== undefined) set.gateway_ip = changes.gateway_ip;
    if (changes.allocation_pools !== undefined) set.allocation_pools = toJson(changes.allocation_pools);
    if (changes.enable_dhcp !== undefined) set.enable_dhcp = changes.enable_dhcp ? 1 : 0;
    if (changes.dns_nameservers !== undefined) set.dns_nameservers = toJson(changes.dns_nameservers);
    if (changes.host_routes !== undefined) set.host_routes = toJson(changes.host_routes);
    await this.db.updateTable('network_subnets').set(set).where('id', '=', id).execute();
  }

  async deleteSubnet(id: string): Promise<void> {
    await this.db.deleteFrom('network_ip_allocations').where('subnet_id', '=', id).execute();
    await this.db.deleteFrom('network_subnets').where('id', '=', id).execute();
  }

  // --- ports ------------------------------------------------------------------------------
  async getPort(id: string): Promise<NetPort | null> {
    const row = await this.db.selectFrom('network_ports').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? (await toPorts(this.db, [row]))[0]! : null;
  }

  async portsByIds(ids: readonly string[]): Promise<Map<string, NetPort>> {
    const out = new Map<string, NetPort>();
    for (const part of chunks([...new Set(ids)])) {
      if (part.length === 0) continue;
      const rows = await this.db.selectFrom('network_ports').selectAll().where('id', 'in', part).execute();
      for (const p of await toPorts(this.db, rows)) out.set(p.id, p);
    }
    return out;
  }

  async listPorts(q: ListQuery): Promise<NetPort[]> {
    return toPorts(this.db, (await listRows(this.db, PORT_SPEC, q)) as never);
  }

  async countPorts(networkId: string, projectId?: string): Promise<number> {
    let query = this.db
      .selectFrom('network_ports')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('network_id', '=', networkId);
    if (projectId !== undefined) query = query.where('project_id', '=', projectId);
    return Number((await query.executeTakeFirstOrThrow()).n);
  }

  async insertPort(p: Omit<NetPort, 'trunk_id'>): Promise<void> {
    await unique(
      () => this.db.insertInto('network_ports').values(portRow(p)).execute(),
      `Unable to complete operation for network ${p.network_id}. The mac address ${p.mac_address} is in use.`,
      'MacAddressInUse',
    );
    await this.insertIps(p.id, p.network_id, p.fixed_ips);
  }

  private async insertIps(portId: string, networkId: string, ips: readonly FixedIp[]): Promise<void> {
    for (const [position, ip] of ips.entries()) {
      await unique(
        () =>
          this.db
            .insertInto('network_ip_allocations')
            .values({ port_id: portId, network_id: networkId, subnet_id: ip.subnet_id, ip_address: ip.ip_address, position })
            .execute(),
        `IP address ${ip.ip_address} already allocated in subnet ${ip.subnet_id}`,
        'IpAddressAlreadyAllocated',
      );
    }
  }

  async updatePort(id: string, changes: NetPortChanges, now: number): Promise<void> {
    const set: Record<string, unknown> = { updated_at: now, revision_number: sql`revision_number + 1` };
    for (const [k, v] of Object.entries(changes)) {
      if (v === undefined) continue;
      if (k === 'binding_profile' || k === 'binding_vif_details') set[k] = toJson(v);
      else if (k === 'admin_state_up') set[k] = v ? 1 : 0;
      else set[k] = v;
    }
    const port = changes.mac_address !== undefined ? await this.getPort(id) : null;
    await unique(
      () => this.db.updateTable('network_ports').set(set).where('id', '=', id).execute(),
      `Unable to complete operation for network ${port?.network_id ?? ''}. The mac address ${changes.mac_address ?? ''} is in use.`,
      'MacAddressInUse',
    );
  }

  async setPortIps(id: string, networkId: string, ips: readonly FixedIp[], now: number): Promise<void> {
    await this.db.deleteFrom('network_ip_allocations').where('port_id', '=', id).execute();
    await this.insertIps(id, networkId, ips);
    await this.db
      .updateTable('network_ports')
      .set({ updated_at: now, revision_number: sql`revision_number + 1` })
      .where('id', '=', id)
      .execute();
  }

  async deletePort(id: string): Promise<void> {
    await this.db.deleteFrom('network_ip_allocations').where('port_id', '=', id).execute();
    await this.db.deleteFrom('network_ports').where('id', '=', id).execute();
  }

  // --- trunks -----------------------------------------------------------------------------
  async getTrunk(id: string): Promise<Trunk | null> {
    const row = await this.db.selectFrom('network_trunks').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? (await toTrunks(this.db, [row]))[0]! : null;
  }

  async trunkOfPort(portId: string): Promise<{ trunk: Trunk; role: 'parent' | 'subport' } | null> {
    const parent = await this.db.selectFrom('network_trunks').select('id').where('port_id', '=', portId).executeTakeFirst();
    if (parent) return { trunk: (await this.getTrunk(parent.id))!, role: 'parent' };
    const sub = await this.db.selectFrom('network_subports').select('trunk_id').where('port_id', '=', portId).executeTakeFirst();
    return sub ? { trunk: (await this.getTrunk(sub.trunk_id))!, role: 'subport' } : null;
  }

  async trunksByIds(ids: readonly string[]): Promise<Map<string, Trunk>> {
    const out = new Map<string, Trunk>();
    for (const part of chunks([...new Set(ids)])) {
      if (part.length === 0) continue;
      const rows = await this.db.selectFrom('network_trunks').selectAll().where('id', 'in', part).execute();
      for (const t of await toTrunks(this.db, rows)) out.set(t.id, t);
    }
    return out;
  }

  async listTrunks(q: ListQuery): Promise<Trunk[]> {
    return toTrunks(this.db, (await listRows(this.db, TRUNK_SPEC, q)) as never);
  }

  async insertTrunk(t: Trunk): Promise<void> {
    await unique(
      () =>
        this.db
          .insertInto('network_trunks')
          .values({
            id: t.id,
            name: t.name,
            description: t.description,
            project_id: t.project_id,
            port_id: t.port_id,
            admin_state_up: t.admin_state_up ? 1 : 0,
            status: t.status,
            created_at: t.created_at,
            updated_at: t.updated_at,
            revision_number: t.revision_number,
          })
          .execute(),
      `Port ${t.port_id} is currently in use and is not eligible for use as a parent port.`,
      'ParentPortInUse',
    );
    await this.insertSubports(t.id, t.sub_ports);
  }

  private async insertSubports(trunkId: string, subports: readonly SubPort[]): Promise<void> {
    for (const s of subports) {
      await unique(
        () =>
          this.db
            .insertInto('network_subports')
            .values({ trunk_id: trunkId, port_id: s.port_id, segmentation_type: s.segmentation_type, segmentation_id: s.segmentation_id })
            .execute(),
        `Port ${s.port_id} or segmentation id ${s.segmentation_id} is already in use on a trunk.`,
        'DuplicateSubPort',
      );
    }
  }

  async updateTrunk(
    id: string,
    changes: Partial<Pick<Trunk, 'name' | 'description' | 'admin_state_up' | 'status'>>,
    now: number,
  ): Promise<void> {
    const set: Record<string, unknown> = { updated_at: now, revision_number: sql`revision_number + 1` };
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.description !== undefined) set.description = changes.description;
    if (changes.admin_state_up !== undefined) set.admin_state_up = changes.admin_state_up ? 1 : 0;
    if (changes.status !== undefined) set.status = changes.status;
    await this.db.updateTable('network_trunks').set(set).where('id', '=', id).execute();
  }

  async addSubports(trunkId: string, subports: readonly SubPort[], now: number): Promise<void> {
    await this.insertSubports(trunkId, subports);
    await this.updateTrunk(trunkId, {}, now);
  }

  async removeSubports(trunkId: string, portIds: readonly string[], now: number): Promise<void> {
    if (portIds.length > 0)
      await this.db
        .deleteFrom('network_subports')
        .where('trunk_id', '=', trunkId)
        .where('port_id', 'in', [...portIds])
        .execute();
    await this.updateTrunk(trunkId, {}, now);
  }

  async deleteTrunk(id: string): Promise<void> {
    await this.db.deleteFrom('network_subports').where('trunk_id', '=', id).execute();
    await this.db.deleteFrom('network_trunks').where('id', '=', id).execute();
  }

  // --- RBAC -------------------------------------------------------------------------------
  async getRbac(id: string): Promise<RbacPolicy | null> {
    const row = await this.db.selectFrom('network_rbac').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRbac(row) : null;
  }

  async rbacOfNetwork(networkId: string): Promise<RbacPolicy[]> {
    return (await this.db.selectFrom('network_rbac').selectAll().where('object_id', '=', networkId).orderBy('created_at').execute()).map(
      toRbac,
    );
  }

  async listRbac(q: ListQuery): Promise<RbacPolicy[]> {
    return ((await listRows(this.db, RBAC_SPEC, q)) as never[]).map(toRbac);
  }

  async insertRbac(r: RbacPolicy): Promise<void> {
    await unique(
      () =>
        this.db
          .insertInto('network_rbac')
          .values({ ...r })
          .execute(),
      'An RBAC policy already exists with those values.',
      'DuplicateRbacPolicy',
    );
  }

  async updateRbacTarget(id: string, target: string): Promise<void> {
    await unique(
      () => this.db.updateTable('network_rbac').set({ target_tenant: target }).where('id', '=', id).execute(),
      'An RBAC policy already exists with those values.',
      'DuplicateRbacPolicy',
    );
  }

  async deleteRbac(id: string): Promise<void> {
    await this.db.deleteFrom('network_rbac').where('id', '=', id).execute();
  }
}
