/**
 * The floating IP reads and writes of the networking repository (migration 0019): floating IPs
 * and their port forwardings. Added to the router queries (`./l3-queries.ts`) by inheritance, so
 * that one handle (root or transaction) serves every networking read and write.
 */
import { sql, type Selectable } from 'kysely';
import type { FloatingIp, FloatingIpStatus, PortForwarding, PortForwardingProtocol } from '../../domain/networking/model.ts';
import type { FloatingIpChanges, IdsOrEvery, ListQuery, PortForwardingChanges } from '../../domain/networking/ports.ts';
import type { Db, Tx } from '../database.ts';
import { L3Queries } from './l3-queries.ts';
import { listRows } from './list.ts';
import { FLOATINGIP_SPEC, PORT_FORWARDING_SPEC } from './list-specs.ts';
import { unique } from './queries.ts';
import { chunks, idParts } from './rows.ts';
import type { FloatingIpsTable, PortForwardingsTable } from './tables.ts';

function toFloatingIp(r: Selectable<FloatingIpsTable>): FloatingIp {
  return {
    id: r.id,
    project_id: r.project_id,
    description: r.description,
    floating_network_id: r.floating_network_id,
    floating_port_id: r.floating_port_id,
    floating_ip_address: r.floating_ip_address,
    fixed_port_id: r.fixed_port_id,
    fixed_ip_address: r.fixed_ip_address,
    router_id: r.router_id,
    status: r.status as FloatingIpStatus,
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
    revision_number: r.revision_number,
  };
}

function toPortForwarding(r: Selectable<PortForwardingsTable>): PortForwarding {
  return {
    id: r.id,
    floatingip_id: r.floatingip_id,
    internal_port_id: r.internal_port_id,
    internal_ip_address: r.internal_ip_address,
    protocol: r.protocol as PortForwardingProtocol,
    internal_port: [r.internal_port_start, r.internal_port_end],
    external_port: [r.external_port_start, r.external_port_end],
    description: r.description,
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

const ALREADY_ASSOCIATED = 'That fixed IP already has a floating IP on this external network.';
const PF_EXISTS = 'A duplicate port forwarding entry with the same attributes already exists.';

/** Floating IP and port forwarding reads and writes over one handle. */
export class FipQueries extends L3Queries {
  constructor(db: Db | Tx) {
    super(db);
  }

  // --- floating IPs -------------------------------------------------------------------------
  async getFloatingIp(id: string): Promise<FloatingIp | null> {
    const row = await this.db.selectFrom('floatingips').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toFloatingIp(row) : null;
  }

  async listFloatingIps(q: ListQuery): Promise<FloatingIp[]> {
    return ((await listRows(this.db, FLOATINGIP_SPEC, q)) as Selectable<FloatingIpsTable>[]).map(toFloatingIp);
  }

  async countFloatingIps(projectId: string): Promise<number> {
    const r = await this.db
      .selectFrom('floatingips')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async floatingIpsOfPorts(portIds: IdsOrEvery): Promise<FloatingIp[]> {
    const out: FloatingIp[] = [];
    for (const part of idParts(portIds)) {
      const q = this.db.selectFrom('floatingips').selectAll();
      const rows = await (part === null ? q.where('fixed_port_id', 'is not', null) : q.where('fixed_port_id', 'in', part)).execute();
      out.push(...rows.map(toFloatingIp));
    }
    return out.sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1));
  }

  async floatingIpsByIds(ids: readonly string[]): Promise<Map<string, FloatingIp>> {
    const out = new Map<string, FloatingIp>();
    for (const part of chunks([...new Set(ids)])) {
      if (part.length === 0) continue;
      for (const r of await this.db.selectFrom('floatingips').selectAll().where('id', 'in', part).execute()) out.set(r.id, toFloatingIp(r));
    }
    return out;
  }

  async floatingIpsOfRouter(routerId: string): Promise<FloatingIp[]> {
    const rows = await this.db
      .selectFrom('floatingips')
      .selectAll()
      .where('router_id', '=', routerId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toFloatingIp);
  }

  async insertFloatingIp(f: FloatingIp): Promise<void> {
    await unique(() => this.db.insertInto('floatingips').values(f).execute(), ALREADY_ASSOCIATED, 'FloatingIPPortAlreadyAssociated');
  }

  async updateFloatingIp(id: string, changes: FloatingIpChanges, now: number): Promise<void> {
    const set: Record<string, unknown> = { ...changes, updated_at: now, revision_number: sql`revision_number + 1` };
    await unique(
      () => this.db.updateTable('floatingips').set(set).where('id', '=', id).execute(),
      ALREADY_ASSOCIATED,
      'FloatingIPPortAlreadyAssociated',
    );
  }

  async deleteFloatingIp(id: string): Promise<void> {
    await this.db.deleteFrom('port_forwardings').where('floatingip_id', '=', id).execute();
    await this.db.deleteFrom('floatingips').where('id', '=', id).execute();
  }

  // --- port forwardings ----------------------------------------------------------------------
  async getPortForwarding(id: string): Promise<PortForwarding | null> {
    const row = await this.db.selectFrom('port_forwardings').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toPortForwarding(row) : null;
  }

  async listPortForwardings(q: ListQuery): Promise<PortForwarding[]> {
    return ((await listRows(this.db, PORT_FORWARDING_SPEC, q)) as Selectable<PortForwardingsTable>[]).map(toPortForwarding);
  }

  async portForwardingsOf(fipIds: readonly string[]): Promise<Map<string, PortForwarding[]>> {
    const out = new Map<string, PortForwarding[]>();
    for (const part of chunks([...new Set(fipIds)])) {
      if (part.length === 0) continue;
      const rows = await this.db
        .selectFrom('port_forwardings')
        .selectAll()
        .where('floatingip_id', 'in', part)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      for (const r of rows) out.set(r.floatingip_id, [...(out.get(r.floatingip_id) ?? []), toPortForwarding(r)]);
    }
    return out;
  }

  async portForwardingsOfPorts(portIds: IdsOrEvery): Promise<PortForwarding[]> {
    const out: PortForwarding[] = [];
    for (const part of idParts(portIds)) {
      const q = this.db.selectFrom('port_forwardings').selectAll();
      const rows = await (part === null ? q : q.where('internal_port_id', 'in', part)).orderBy('id').execute();
      out.push(...rows.map(toPortForwarding));
    }
    return out;
  }

  async insertPortForwarding(pf: PortForwarding): Promise<void> {
    await unique(
      () =>
        this.db
          .insertInto('port_forwardings')
          .values({
            id: pf.id,
            floatingip_id: pf.floatingip_id,
            internal_port_id: pf.internal_port_id,
            internal_ip_address: pf.internal_ip_address,
            protocol: pf.protocol,
            internal_port_start: pf.internal_port[0],
            internal_port_end: pf.internal_port[1],
            external_port_start: pf.external_port[0],
            external_port_end: pf.external_port[1],
            description: pf.description,
            created_at: pf.created_at,
            updated_at: pf.updated_at,
          })
          .execute(),
      PF_EXISTS,
      'PortForwardingExists',
    );
    await this.touchFloatingIp(pf.floatingip_id, pf.updated_at);
  }

  async updatePortForwarding(id: string, changes: PortForwardingChanges, now: number): Promise<void> {
    const { internal_port, external_port, ...rest } = changes;
    const set: Record<string, unknown> = { ...rest, updated_at: now };
    if (internal_port) Object.assign(set, { internal_port_start: internal_port[0], internal_port_end: internal_port[1] });
    if (external_port) Object.assign(set, { external_port_start: external_port[0], external_port_end: external_port[1] });
    await unique(() => this.db.updateTable('port_forwardings').set(set).where('id', '=', id).execute(), PF_EXISTS, 'PortForwardingExists');
    const pf = await this.getPortForwarding(id);
    if (pf) await this.touchFloatingIp(pf.floatingip_id, now);
  }

  async deletePortForwarding(id: string, now: number): Promise<void> {
    const pf = await this.getPortForwarding(id);
    await this.db.deleteFrom('port_forwardings').where('id', '=', id).execute();
    if (pf) await this.touchFloatingIp(pf.floatingip_id, now);
  }

  /** Bump a floating IP's revision (its port forwardings changed: Neutron's `revises_on_change`). */
  private async touchFloatingIp(id: string, now: number): Promise<void> {
    await this.db
      .updateTable('floatingips')
      .set({ updated_at: now, revision_number: sql`revision_number + 1` })
      .where('id', '=', id)
      .execute();
  }
}
