/**
 * The L3 reads and writes of the networking repository (migration 0016): routers, the ports
 * they hold (`router_ports`), and the reads the dataplane intents need (networks with DHCP,
 * the NICs that carry a network's ports). Added to the Neutron collections of `./queries.ts`
 * by inheritance, so that one handle (root or transaction) serves both.
 */
import { sql, type Selectable } from 'kysely';
import {
  DEVICE_OWNER_ROUTER_GATEWAY,
  DEVICE_OWNER_ROUTER_INTERFACE,
  type Router,
  type RouterGateway,
  type RouterPort,
  type RouterPortType,
  type RouterStatus,
} from '../../domain/networking/model.ts';
import type { ListQuery, NetworkNicRow, RouterChanges } from '../../domain/networking/ports.ts';
import type { Db, Tx } from '../database.ts';
import { listRows } from './list.ts';
import { ROUTER_SPEC } from './list-specs.ts';
import { NeutronQueries, unique } from './queries.ts';
import { chunks, NODE_PORT_COLUMNS, toNodePort } from './rows.ts';
import type { RoutersTable } from './tables.ts';

/** Routers from rows, with their gateway ports (one query). */
async function toRouters(db: Db | Tx, rows: readonly Selectable<RoutersTable>[]): Promise<Router[]> {
  const gwPorts = new Map<string, string>();
  for (const part of chunks(rows.filter((r) => r.gw_network_id !== null).map((r) => r.id))) {
    if (part.length === 0) continue;
    const ports = await db
      .selectFrom('router_ports')
      .select(['router_id', 'port_id'])
      .where('router_id', 'in', part)
      .where('port_type', '=', DEVICE_OWNER_ROUTER_GATEWAY)
      .execute();
    for (const p of ports) gwPorts.set(p.router_id, p.port_id);
  }
  return rows.map((r) => {
    const port = gwPorts.get(r.id);
    const gateway: RouterGateway | null =
      r.gw_network_id !== null && port !== undefined
        ? { network_id: r.gw_network_id, port_id: port, enable_snat: r.enable_snat === 1 }
        : null;
    return {
      id: r.id,
      name: r.name,
      description: r.description,
      project_id: r.project_id,
      admin_state_up: r.admin_state_up === 1,
      status: r.status as RouterStatus,
      gateway,
      created_at: Number(r.created_at),
      updated_at: Number(r.updated_at),
      revision_number: r.revision_number,
    };
  });
}

function toRouterPort(r: { router_id: string; port_id: string; port_type: string }): RouterPort {
  return { router_id: r.router_id, port_id: r.port_id, port_type: r.port_type as RouterPortType };
}

/** Routers, router ports and the dataplane reads, over one handle. */
export class L3Queries extends NeutronQueries {
  constructor(db: Db | Tx) {
    super(db);
  }

  // --- routers ----------------------------------------------------------------------------
  async getRouter(id: string): Promise<Router | null> {
    const row = await this.db.selectFrom('routers').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? (await toRouters(this.db, [row]))[0]! : null;
  }

  async routersByIds(ids: readonly string[]): Promise<Map<string, Router>> {
    const out = new Map<string, Router>();
    for (const part of chunks([...new Set(ids)])) {
      if (part.length === 0) continue;
      const rows = await this.db.selectFrom('routers').selectAll().where('id', 'in', part).execute();
      for (const r of await toRouters(this.db, rows)) out.set(r.id, r);
    }
    return out;
  }

  async listRouters(q: ListQuery): Promise<Router[]> {
    return toRouters(this.db, (await listRows(this.db, ROUTER_SPEC, q)) as never);
  }

  async countRouters(projectId: string): Promise<number> {
    const r = await this.db
      .selectFrom('routers')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async routerPorts(routerId: string): Promise<RouterPort[]> {
    const rows = await this.db
      .selectFrom('router_ports')
      .select(['router_id', 'port_id', 'port_type'])
      .where('router_id', '=', routerId)
      .orderBy(sql`case when port_type = ${DEVICE_OWNER_ROUTER_GATEWAY} then 0 else 1 end`)
      .orderBy('created_at')
      .orderBy('port_id')
      .execute();
    return rows.map(toRouterPort);
  }

  async routerPortOf(portId: string): Promise<RouterPort | null> {
    const row = await this.db
      .selectFrom('router_ports')
      .select(['router_id', 'port_id', 'port_type'])
      .where('port_id', '=', portId)
      .executeTakeFirst();
    return row ? toRouterPort(row) : null;
  }

  async routersOnNetworks(networkIds: readonly string[]): Promise<string[]> {
    const out = new Set<string>();
    for (const part of chunks([...new Set(networkIds)])) {
      if (part.length === 0) continue;
      const rows = await this.db
        .selectFrom('router_ports as rp')
        .innerJoin('network_ports as p', 'p.id', 'rp.port_id')
        .select('rp.router_id')
        .distinct()
        .where('p.network_id', 'in', part)
        .execute();
      for (const r of rows) out.add(r.router_id);
    }
    return [...out].sort();
  }

  async routersBetween(externalNetworkId: string, subnetId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('routers as r')
      .innerJoin('router_ports as rp', 'rp.router_id', 'r.id')
      .innerJoin('network_ip_allocations as a', 'a.port_id', 'rp.port_id')
      .select('r.id')
      .distinct()
      .where('r.gw_network_id', '=', externalNetworkId)
      .where('rp.port_type', '=', DEVICE_OWNER_ROUTER_INTERFACE)
      .where('a.subnet_id', '=', subnetId)
      .orderBy('r.id')
      .execute();
    return rows.map((r) => r.id);
  }

  async routerIds(): Promise<string[]> {
    return (await this.db.selectFrom('routers').select('id').orderBy('id').execute()).map((r) => r.id);
  }

  async insertRouter(r: Omit<Router, 'gateway'>): Promise<void> {
    await this.db
      .insertInto('routers')
      .values({
        id: r.id,
        name: r.name,
        description: r.description,
        project_id: r.project_id,
        admin_state_up: r.admin_state_up ? 1 : 0,
        status: r.status,
        gw_network_id: null,
        enable_snat: 1,
        created_at: r.created_at,
        updated_at: r.updated_at,
        revision_number: r.revision_number,
      })
      .execute();
  }

  async updateRouter(id: string, changes: RouterChanges, now: number): Promise<void> {
    const set: Record<string, unknown> = { updated_at: now, revision_number: sql`revision_number + 1` };
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.description !== undefined) set.description = changes.description;
    if (changes.admin_state_up !== undefined) set.admin_state_up = changes.admin_state_up ? 1 : 0;
    if (changes.status !== undefined) set.status = changes.status;
    await this.db.updateTable('routers').set(set).where('id', '=', id).execute();
  }

  async setRouterGateway(id: string, gateway: RouterGateway | null, now: number): Promise<void> {
    await this.db.deleteFrom('router_ports').where('router_id', '=', id).where('port_type', '=', DEVICE_OWNER_ROUTER_GATEWAY).execute();
    if (gateway !== null)
      await this.insertRouterPort({ router_id: id, port_id: gateway.port_id, port_type: DEVICE_OWNER_ROUTER_GATEWAY }, now);
    await this.db
      .updateTable('routers')
      .set({
        gw_network_id: gateway?.network_id ?? null,
        enable_snat: gateway === null || gateway.enable_snat ? 1 : 0,
        updated_at: now,
        revision_number: sql`revision_number + 1`,
      })
      .where('id', '=', id)
      .execute();
  }

  async deleteRouter(id: string): Promise<void> {
    await this.db.deleteFrom('router_ports').where('router_id', '=', id).execute();
    await this.db.deleteFrom('routers').where('id', '=', id).execute();
  }

  async insertRouterPort(rp: RouterPort, now: number): Promise<void> {
    await unique(
      () =>
        this.db
          .insertInto('router_ports')
          .values({ ...rp, created_at: now })
          .execute(),
      `Port ${rp.port_id} is already in use by a router.`,
      'PortInUse',
    );
    if (rp.port_type !== DEVICE_OWNER_ROUTER_GATEWAY) await this.updateRouter(rp.router_id, {}, now);
  }

  async deleteRouterPort(portId: string, now: number): Promise<void> {
    const rp = await this.routerPortOf(portId);
    await this.db.deleteFrom('router_ports').where('port_id', '=', portId).execute();
    if (rp) await this.updateRouter(rp.router_id, {}, now);
  }

  // --- what the dataplane intents read ------------------------------------------------------
  async dhcpNetworkIds(): Promise<string[]> {
    const rows = await this.db.selectFrom('network_subnets').select('network_id').distinct().where('enable_dhcp', '=', 1).execute();
    return rows.map((r) => r.network_id).sort();
  }

  async nicsOfNetwork(networkId: string): Promise<NetworkNicRow[]> {
    const direct = await this.db
      .selectFrom('network_ports as np')
      .innerJoin('ports', 'ports.uuid', 'np.bound_port_uuid')
      .innerJoin('nodes', 'nodes.id', 'ports.node_id')
      .select([...NODE_PORT_COLUMNS, 'np.id as port_id'])
      .where('np.network_id', '=', networkId)
      .orderBy('ports.id')
      .execute();
    const viaTrunk = await this.db
      .selectFrom('network_subports as s')
      .innerJoin('network_ports as sp', 'sp.id', 's.port_id')
      .innerJoin('network_trunks as t', 't.id', 's.trunk_id')
      .innerJoin('network_ports as pp', 'pp.id', 't.port_id')
      .innerJoin('ports', 'ports.uuid', 'pp.bound_port_uuid')
      .innerJoin('nodes', 'nodes.id', 'ports.node_id')
      .select([...NODE_PORT_COLUMNS, 's.port_id as port_id', 'pp.id as vif_id'])
      .where('sp.network_id', '=', networkId)
      .orderBy('ports.id')
      .execute();
    return [
      ...direct.map((r) => ({ port_id: r.port_id, vif_id: r.port_id, nic: toNodePort(r) })),
      ...viaTrunk.map((r) => ({ port_id: r.port_id, vif_id: r.vif_id, nic: toNodePort(r) })),
    ];
  }
}
