/**
 * The switch side of the networking repository (./repository.ts): switches esi manages, the
 * reconciliation state of their ports (`desired_rev` / `applied_rev`, what the switch reconciler
 * reads and records: src/conductor/switch-reconciler.ts), and switch port cabling — which node
 * a switch port is registered to and which bare-metal port holds it.
 */
import { sql } from 'kysely';
import type { Switch, SwitchPortCabling, SwitchPortState } from '../../domain/networking/model.ts';
import type { SwitchPortKey, SwitchPortOutcome } from '../../domain/networking/ports.ts';
import { toJson, type Db, type Tx } from '../database.ts';
import { QuotaQueries } from './quota-queries.ts';
import { unique } from './queries.ts';
import { toCabling, toSwitch, toSwitchPort } from './rows.ts';

/** Switch, switch port state and cabling reads and writes over one handle. */
export class SwitchQueries extends QuotaQueries {
  constructor(db: Db | Tx) {
    super(db);
  }

  // --- switches ---------------------------------------------------------------------------
  async getSwitch(id: string): Promise<Switch | null> {
    const row = await this.db.selectFrom('switches').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toSwitch(row) : null;
  }

  async switchByName(name: string): Promise<Switch | null> {
    const row = await this.db.selectFrom('switches').selectAll().where('name', '=', name).executeTakeFirst();
    return row ? toSwitch(row) : null;
  }

  async switchBySwitchId(switchId: string): Promise<Switch | null> {
    const row = await this.db.selectFrom('switches').selectAll().where('switch_id', '=', switchId.toLowerCase()).executeTakeFirst();
    return row ? toSwitch(row) : null;
  }

  async listSwitches(): Promise<Switch[]> {
    return (await this.db.selectFrom('switches').selectAll().orderBy('name').execute()).map(toSwitch);
  }

  async insertSwitch(s: Switch): Promise<void> {
    await unique(
      () =>
        this.db
          .insertInto('switches')
          .values({ ...s, switch_id: s.switch_id.toLowerCase(), driver_info: toJson(s.driver_info) })
          .execute(),
      `A switch named ${s.name} or with switch_id ${s.switch_id} already exists.`,
      'SwitchExists',
    );
  }

  async updateSwitch(id: string, changes: Partial<Omit<Switch, 'id' | 'created_at'>>): Promise<void> {
    const set: Record<string, unknown> = { ...changes };
    if (changes.driver_info !== undefined) set.driver_info = toJson(changes.driver_info);
    if (changes.switch_id !== undefined) set.switch_id = changes.switch_id.toLowerCase();
    await unique(
      () => this.db.updateTable('switches').set(set).where('id', '=', id).execute(),
      'Another switch has that name or switch_id.',
      'SwitchExists',
    );
  }

  async deleteSwitch(id: string): Promise<void> {
    await this.db.deleteFrom('switch_ports').where('switch_uuid', '=', id).execute();
    await this.db.deleteFrom('switch_port_cabling').where('switch_uuid', '=', id).execute();
    await this.db.deleteFrom('switches').where('id', '=', id).execute();
  }

  // --- switch port state ------------------------------------------------------------------
  async switchPortStates(switchUuid: string): Promise<SwitchPortState[]> {
    return (await this.db.selectFrom('switch_ports').selectAll().where('switch_uuid', '=', switchUuid).orderBy('port_id').execute()).map(
      toSwitchPort,
    );
  }

  async dueSwitchPorts(now: number, limit: number): Promise<SwitchPortState[]> {
    const rows = await this.db
      .selectFrom('switch_ports')
      .selectAll()
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at')
      .limit(limit)
      .execute();
    return rows.map(toSwitchPort);
  }

  async touchSwitchPorts(keys: readonly SwitchPortKey[], now: number): Promise<void> {
    const seen = new Set<string>();
    for (const k of keys) {
      const id = `${k.switch_uuid}\u0000${k.port_id}`;
      if (seen.has(id)) continue;
      seen.add(id);
      await this.db
        .insertInto('switch_ports')
        .values({
          switch_uuid: k.switch_uuid,
          port_id: k.port_id,
          desired_rev: 1,
          applied_rev: 0,
          status: 'pending',
          applied: null,
          last_error: null,
          attempts: 0,
          next_attempt_at: now,
          updated_at: now,
        })
        .onConflict((oc) =>
          oc.columns(['switch_uuid', 'port_id']).doUpdateSet({
            desired_rev: sql`switch_ports.desired_rev + 1`,
            status: 'pending',
            attempts: 0,
            next_attempt_at: now,
            updated_at: now,
          }),
        )
        .execute();
    }
  }

  async recordSwitchPort(key: SwitchPortKey, o: SwitchPortOutcome): Promise<void> {
    const base = this.db.updateTable('switch_ports').where('switch_uuid', '=', key.switch_uuid).where('port_id', '=', key.port_id);
    if (o.kind === 'retry') {
      await base
        .set({ attempts: o.attempts, next_attempt_at: o.nextAttemptAt, last_error: o.error, updated_at: o.now })
        .where('desired_rev', '=', o.rev)
        .execute();
      return;
    }
    // What was applied (or given up on) is recorded whatever the intent is now; the status
    // only settles when no newer intent arrived meanwhile.
    await this.db
      .updateTable('switch_ports')
      .set({
        applied: o.config === null ? null : toJson(o.config),
        applied_rev: o.rev,
        last_error: o.kind === 'failed' ? o.error : null,
        attempts: 0,
        updated_at: o.now,
        status: sql`case when desired_rev = ${o.rev} then ${o.kind} else status end`,
      })
      .where('switch_uuid', '=', key.switch_uuid)
      .where('port_id', '=', key.port_id)
      .execute();
  }

  // --- switch port cabling (registrations and holders) ---------------------------------------
  private cablingQuery() {
    return this.db
      .selectFrom('switch_port_cabling as c')
      .innerJoin('nodes', 'nodes.id', 'c.node_id')
      .select(['c.switch_uuid', 'c.port_id', 'nodes.uuid as node_uuid', 'c.baremetal_port_uuid', 'c.claimed_at', 'c.registered_at']);
  }

  async cabling(key: SwitchPortKey): Promise<SwitchPortCabling | null> {
    const row = await this.cablingQuery()
      .where('c.switch_uuid', '=', key.switch_uuid)
      .where('c.port_id', '=', key.port_id)
      .executeTakeFirst();
    return row ? toCabling(row) : null;
  }

  async cablingOf(switchUuid: string): Promise<SwitchPortCabling[]> {
    return (await this.cablingQuery().where('c.switch_uuid', '=', switchUuid).orderBy('c.port_id').execute()).map(toCabling);
  }

  async setCabling(key: SwitchPortKey, nodeUuid: string, holder: string | null, claimedAt: number | null, now: number): Promise<boolean> {
    const node = await this.db.selectFrom('nodes').select('id').where('uuid', '=', nodeUuid).executeTakeFirst();
    if (!node) return false;
    await this.db
      .insertInto('switch_port_cabling')
      .values({
        switch_uuid: key.switch_uuid,
        port_id: key.port_id,
        node_id: node.id,
        baremetal_port_uuid: holder,
        claimed_at: claimedAt,
        registered_at: now,
      })
      .onConflict((oc) =>
        oc
          .columns(['switch_uuid', 'port_id'])
          .doUpdateSet({ node_id: node.id, baremetal_port_uuid: holder, claimed_at: claimedAt, registered_at: now }),
      )
      .execute();
    return true;
  }

  async setHolder(key: SwitchPortKey, holder: string | null, claimedAt: number | null): Promise<void> {
    await this.db
      .updateTable('switch_port_cabling')
      .set({ baremetal_port_uuid: holder, claimed_at: claimedAt })
      .where('switch_uuid', '=', key.switch_uuid)
      .where('port_id', '=', key.port_id)
      .execute();
  }

  async releaseHolder(portUuid: string, keep: SwitchPortKey | null): Promise<void> {
    let q = this.db
      .updateTable('switch_port_cabling')
      .set({ baremetal_port_uuid: null, claimed_at: null })
      .where('baremetal_port_uuid', '=', portUuid);
    if (keep) q = q.where((eb) => eb.not(eb.and([eb('switch_uuid', '=', keep.switch_uuid), eb('port_id', '=', keep.port_id)])));
    await q.execute();
  }

  async dropCablingHeldBy(portUuid: string, keep: SwitchPortKey | null): Promise<void> {
    let q = this.db.deleteFrom('switch_port_cabling').where('baremetal_port_uuid', '=', portUuid);
    if (keep) q = q.where((eb) => eb.not(eb.and([eb('switch_uuid', '=', keep.switch_uuid), eb('port_id', '=', keep.port_id)])));
    await q.execute();
  }

  async deleteCabling(key: SwitchPortKey): Promise<void> {
    await this.db.deleteFrom('switch_port_cabling').where('switch_uuid', '=', key.switch_uuid).where('port_id', '=', key.port_id).execute();
  }
}
