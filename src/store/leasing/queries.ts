/**
 * Offer and lease queries of the leasing store on one Kysely handle — the root handle for
 * plain reads, or a transaction inside `withNodeLock` (then it implements the port's
 * {@link LeasingTx}). Portable across SQLite and PostgreSQL.
 *
 * The statements every claim, cancel, start and end runs (a lease or offer by uuid, a lease's
 * insert, a status change, the conflict read, an event) are built and compiled by Kysely once per
 * shape ({@link CompiledShapes}, shared by the repository and its transactions): building and
 * compiling them cost more CPU than SQLite's answer (issue 22, the HTTP replay).
 */
import type { CompiledQuery, ExpressionBuilder, Selectable, SelectQueryBuilder } from 'kysely';
import type { Lease, LeaseStatus, NewLeasingEvent, Offer, OfferStatus, Window } from '../../domain/leasing/model.ts';
import type { LeasePolicy } from '../../domain/leasing/policy-rules.ts';
import type { LeaseQuota, LeaseUsage } from '../../domain/leasing/quota-rules.ts';
import type { LeaseChange, LeaseQuery, LeasingTx, OfferLeaseWindow, OfferQuery } from '../../domain/leasing/repository.ts';
import { CompiledShapes } from '../compiled-shapes.ts';
import type { Db, Tx } from '../database.ts';
import type { Database } from '../schema.ts';
import { getQuota, policiesOf } from './limits.ts';
import { insertEventsWithDeliveries, insertEventWithDeliveries } from './outbox.ts';
import { leaseRow, offerRow, toLease, toOffer } from './rows.ts';
import type { LeasesTable, OffersTable } from './tables.ts';

/** Largest `in (…)` list per query (SQLite's bound-parameter limit is far above). */
const CHUNK = 1000;

/** Longest uuid list of a batched status change whose compiled statement is kept (one per length). */
const KEPT_BATCH = 16;

type OfferScope = { resourceType: string; resourceUuid: string } | { parentLeaseUuid: string };
type LeaseScope = OfferScope | { offerUuid: string };

/** Offer and lease queries on a handle. */
export class LeasingQueries implements LeasingTx {
  /**
   * @param db the root handle or a transaction
   * @param shapes compiled statements by shape, shared by every handle of one store (one dialect)
   */
  constructor(
    protected readonly db: Db | Tx,
    protected readonly shapes: CompiledShapes = new CompiledShapes(),
  ) {}

  /**
   * Run a statement compiled once per `shape` ({@link CompiledShapes.query}: `params` are its
   * parameters in compile order; a null shape compiles every time).
   * @returns its rows (none for a statement without `returning`)
   */
  private async run<R>(shape: string | null, params: readonly unknown[], build: () => { compile(): CompiledQuery }): Promise<R[]> {
    return (await this.db.executeQuery<R>(this.shapes.query(shape, params, build))).rows;
  }

  async getOffer(uuid: string): Promise<Offer | null> {
    const [row] = await this.run<Selectable<OffersTable>>('getOffer', [uuid], () =>
      this.db.selectFrom('offers').selectAll().where('uuid', '=', uuid),
    );
    return row ? toOffer(row) : null;
  }

  async findOffers(q: OfferQuery): Promise<Offer[]> {
    if (q.resourceUuids !== undefined && q.resourceUuids.length > CHUNK) {
      // A long node list (the offers of a resource class) is read a chunk at a time, in order.
      const out: Offer[] = [];
      for (let i = 0; i < q.resourceUuids.length; i += CHUNK)
        out.push(...(await this.findOffers({ ...q, resourceUuids: q.resourceUuids.slice(i, i + CHUNK) })));
      return out.sort((a, b) => a.created_at - b.created_at || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
    }
    let s = this.db.selectFrom('offers').selectAll();
    if (q.uuid !== undefined) s = s.where('uuid', '=', q.uuid);
    if (q.uuids !== undefined) {
      if (q.uuids.length === 0) return [];
      s = s.where('uuid', 'in', [...q.uuids]);
    }
    if (q.endsAtOrAfter !== undefined) s = s.where('end_time', '>=', q.endsAtOrAfter);
    if (q.name !== undefined) s = s.where('name', '=', q.name);
    if (q.projectId !== undefined) s = s.where('project_id', '=', q.projectId);
    if (q.lesseeId !== undefined) s = s.where('lessee_id', '=', q.lesseeId);
    if (q.statuses !== undefined) {
      if (q.statuses.length === 0) return [];
      s = s.where('status', 'in', [...q.statuses]);
    }
    if (q.resourceType !== undefined) s = s.where('resource_type', '=', q.resourceType);
    if (q.resourceUuid !== undefined) s = s.where('resource_uuid', '=', q.resourceUuid);
    if (q.resourceUuids !== undefined) {
      if (q.resourceUuids.length === 0) return [];
      s = s.where('resource_uuid', 'in', [...q.resourceUuids]);
    }
    if (q.parentLeaseUuid !== undefined) s = s.where('parent_lease_uuid', '=', q.parentLeaseUuid);
    if (q.parentLeaseUuids !== undefined) {
      if (q.parentLeaseUuids.length === 0) return [];
      s = s.where('parent_lease_uuid', 'in', [...q.parentLeaseUuids]);
    }
    if (q.contains !== undefined) s = s.where('start_time', '<=', q.contains.start).where('end_time', '>=', q.contains.end);
    const visible = q.visibleTo;
    if (visible !== undefined) {
      s = s.where((eb) =>
        eb.or([
          eb('project_id', '=', visible.projectId),
          eb('lessee_id', 'is', null),
          ...(visible.lesseeIds.length > 0 ? [eb('lessee_id', 'in', [...visible.lesseeIds])] : []),
        ]),
      );
    }
    return (await s.orderBy('created_at').orderBy('uuid').execute()).map(toOffer);
  }

  async getLease(uuid: string): Promise<Lease | null> {
    const [row] = await this.run<Selectable<LeasesTable>>('getLease', [uuid], () =>
      this.db.selectFrom('leases').selectAll().where('uuid', '=', uuid),
    );
    return row ? toLease(row) : null;
  }

  async findLeases(q: LeaseQuery): Promise<Lease[]> {
    const s = leaseSelect(this.db, q);
    return s ? (await s.selectAll().orderBy('created_at').orderBy('uuid').execute()).map(toLease) : [];
  }

  async overlappingLeases(scope: LeaseScope, w: Window, statuses: readonly LeaseStatus[], excludeUuid?: string): Promise<Lease[]> {
    if (statuses.length === 0) return [];
    const build = () => {
      let s = this.db
        .selectFrom('leases')
        .selectAll()
        .where((eb) => leaseScope(eb, scope))
        .where('status', 'in', [...statuses])
        .where('start_time', '<', w.end)
        .where('end_time', '>', w.start);
      if (excludeUuid !== undefined) s = s.where('uuid', '!=', excludeUuid);
      return s.orderBy('start_time');
    };
    const [kind, scopeParams] =
      'offerUuid' in scope
        ? ['offer', [scope.offerUuid]]
        : 'parentLeaseUuid' in scope
          ? ['parent', [scope.parentLeaseUuid]]
          : ['node', [scope.resourceType, scope.resourceUuid]];
    const shape = `overlappingLeases:${kind}:${statuses.length}:${excludeUuid !== undefined}`;
    const params = [...scopeParams, ...statuses, w.end, w.start, ...(excludeUuid !== undefined ? [excludeUuid] : [])];
    return (await this.run<Selectable<LeasesTable>>(shape, params, build)).map(toLease);
  }

  async overlappingOffers(scope: OfferScope, w: Window, statuses: readonly OfferStatus[]): Promise<Offer[]> {
    if (statuses.length === 0) return [];
    const rows = await this.db
      .selectFrom('offers')
      .selectAll()
      .where((eb) => offerScope(eb, scope))
      .where('status', 'in', [...statuses])
      .where('start_time', '<', w.end)
      .where('end_time', '>', w.start)
      .orderBy('start_time')
      .execute();
    return rows.map(toOffer);
  }

  /**
   * One range of `leases_offer_end_idx` per offer, index only. The status is checked here, not
   * in SQL: a `status in (…)` term lets SQLite's planner pick `leases_status_*_idx` instead, which
   * walks every blocking lease of the fleet; a lease that ends after `from` in another status
   * (cancelled in advance) costs one index entry.
   */
  async offerLeaseWindows(offerUuids: readonly string[], from: number, statuses: readonly LeaseStatus[]): Promise<OfferLeaseWindow[]> {
    if (statuses.length === 0 || offerUuids.length === 0) return [];
    const wanted = new Set<string>(statuses);
    const out: OfferLeaseWindow[] = [];
    for (let i = 0; i < offerUuids.length; i += CHUNK) {
      const rows = await this.db
        .selectFrom('leases')
        .select(['offer_uuid', 'start_time', 'end_time', 'status'])
        .where('offer_uuid', 'in', offerUuids.slice(i, i + CHUNK))
        .where('end_time', '>', from)
        .execute();
      for (const r of rows) {
        if (r.offer_uuid !== null && wanted.has(r.status))
          out.push({ offer_uuid: r.offer_uuid, start: Number(r.start_time), end: Number(r.end_time) });
      }
    }
    return out;
  }

  async leasesOnNodes(resourceUuids: readonly string[], w: Window, statuses: readonly LeaseStatus[]): Promise<Lease[]> {
    if (statuses.length === 0 || resourceUuids.length === 0) return [];
    const out: Lease[] = [];
    for (let i = 0; i < resourceUuids.length; i += CHUNK) {
      const rows = await this.db
        .selectFrom('leases')
        .selectAll()
        .where('resource_uuid', 'in', resourceUuids.slice(i, i + CHUNK))
        .where('status', 'in', [...statuses])
        .where('start_time', '<', w.end)
        .where('end_time', '>', w.start)
        .execute();
      for (const r of rows) out.push(toLease(r));
    }
    return out.sort((a, b) => a.start_time - b.start_time);
  }

  async leasesOfProject(projectId: string, w: Window): Promise<LeaseUsage[]> {
    const rows = await this.db
      .selectFrom('leases')
      .select(['status', 'start_time', 'end_time', 'fulfill_time', 'expire_time'])
      .where('project_id', '=', projectId)
      .where('end_time', '>', w.start)
      .where('start_time', '<', w.end)
      .execute();
    return rows.map((r) => ({
      status: r.status as LeaseStatus,
      start_time: Number(r.start_time),
      end_time: Number(r.end_time),
      fulfill_time: r.fulfill_time === null ? null : Number(r.fulfill_time),
      expire_time: r.expire_time === null ? null : Number(r.expire_time),
    }));
  }

  policiesOf(ownerIds: readonly string[]): Promise<LeasePolicy[]> {
    return policiesOf(this.db, ownerIds);
  }

  getQuota(projectId: string): Promise<LeaseQuota | null> {
    return getQuota(this.db, projectId);
  }

  async insertNotice(leaseUuid: string, kind: string, now: number): Promise<boolean> {
    const r = await this.db
      .insertInto('lease_notices')
      .values({ lease_uuid: leaseUuid, kind, created_at: now })
      .onConflict((oc) => oc.columns(['lease_uuid', 'kind']).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  async insertOffer(offer: Offer): Promise<void> {
    await this.db.insertInto('offers').values(offerRow(offer)).execute();
  }

  async insertLease(lease: Lease): Promise<void> {
    const row = leaseRow(lease);
    await this.run('insertLease', Object.values(row), () => this.db.insertInto('leases').values(row));
  }

  async transitionLease(uuid: string, from: readonly LeaseStatus[], change: LeaseChange, now: number): Promise<Lease | null> {
    if (from.length === 0) return null;
    const set = changeColumns(change, now);
    const shape = `transitionLease:${Object.keys(set).join(',')}:${from.length}`;
    const [row] = await this.run<Selectable<LeasesTable>>(shape, [...Object.values(set), uuid, ...from], () =>
      this.db
        .updateTable('leases')
        .set(set)
        .where('uuid', '=', uuid)
        .where('status', 'in', [...from])
        .returningAll(),
    );
    return row ? toLease(row) : null;
  }

  async transitionLeases(uuids: readonly string[], from: readonly LeaseStatus[], change: LeaseChange, now: number): Promise<Lease[]> {
    if (from.length === 0) return [];
    const out: Lease[] = [];
    const set = changeColumns(change, now);
    for (let i = 0; i < uuids.length; i += CHUNK) {
      const part = uuids.slice(i, i + CHUNK);
      const shape = part.length <= KEPT_BATCH ? `transitionLeases:${Object.keys(set).join(',')}:${part.length}:${from.length}` : null;
      const rows = await this.run<Selectable<LeasesTable>>(shape, [...Object.values(set), ...part, ...from], () =>
        this.db
          .updateTable('leases')
          .set(set)
          .where('uuid', 'in', part)
          .where('status', 'in', [...from])
          .returningAll(),
      );
      for (const row of rows) out.push(toLease(row));
    }
    return out;
  }

  async transitionOffer(uuid: string, from: readonly OfferStatus[], to: OfferStatus, now: number): Promise<Offer | null> {
    if (from.length === 0) return null;
    const row = await this.db
      .updateTable('offers')
      .set({ status: to, updated_at: now })
      .where('uuid', '=', uuid)
      .where('status', 'in', [...from])
      .returningAll()
      .executeTakeFirst();
    return row ? toOffer(row) : null;
  }

  async setLeaseEnd(uuid: string, endTime: number, now: number): Promise<Lease | null> {
    const row = await this.db
      .updateTable('leases')
      .set({ end_time: endTime, updated_at: now })
      .where('uuid', '=', uuid)
      .returningAll()
      .executeTakeFirst();
    return row ? toLease(row) : null;
  }

  async insertEvent(e: NewLeasingEvent): Promise<void> {
    await insertEventWithDeliveries(this.db, e, this.shapes);
  }

  async insertEvents(events: readonly NewLeasingEvent[]): Promise<void> {
    await insertEventsWithDeliveries(this.db, events, this.shapes);
  }

  async deleteConsoleTokens(nodeUuid: string): Promise<number> {
    const deleted = this.shapes.query('deleteConsoleTokens', [nodeUuid], () =>
      this.db.deleteFrom('console_auth_tokens').where('node_uuid', '=', nodeUuid),
    );
    return Number((await this.db.executeQuery(deleted)).numAffectedRows ?? 0n);
  }
}

/** The column values of a lease status change at `now` (epoch ms). */
function changeColumns(change: LeaseChange, now: number) {
  return {
    status: change.status,
    updated_at: now,
    ...(change.fulfillTime !== undefined ? { fulfill_time: change.fulfillTime } : {}),
    ...(change.expireTime !== undefined ? { expire_time: change.expireTime } : {}),
  };
}

function leaseScope(eb: ExpressionBuilder<Database, 'leases'>, scope: LeaseScope) {
  if ('offerUuid' in scope) return eb('offer_uuid', '=', scope.offerUuid);
  if ('parentLeaseUuid' in scope) return eb('parent_lease_uuid', '=', scope.parentLeaseUuid);
  return eb.and([eb('resource_type', '=', scope.resourceType), eb('resource_uuid', '=', scope.resourceUuid)]);
}

function offerScope(eb: ExpressionBuilder<Database, 'offers'>, scope: OfferScope) {
  if ('parentLeaseUuid' in scope) return eb('parent_lease_uuid', '=', scope.parentLeaseUuid);
  return eb.and([eb('resource_type', '=', scope.resourceType), eb('resource_uuid', '=', scope.resourceUuid)]);
}

/**
 * The lease rows matching `q` (no select list, no order), or null when a filter can match no row
 * (an empty `in` list): shared by {@link LeasingQueries.findLeases} and the repository's batched
 * read of long lists.
 * @param among only these uuids, looked up by primary key first: in a subquery that SQLite
 *   cannot flatten into the filters (it has a LIMIT), because for 1,000 keys its planner would
 *   otherwise rather walk a status index — every lease of those statuses, for each batch
 */
export function leaseSelect(db: Db | Tx, q: LeaseQuery, among?: readonly string[]) {
  const handle: Db = db;
  const byKey = (keys: readonly string[]) =>
    handle.selectFrom((eb) =>
      eb
        .selectFrom('leases')
        .selectAll()
        .where('uuid', 'in', [...keys])
        .limit(keys.length)
        .as('leases'),
    );
  let s: SelectQueryBuilder<Database, 'leases', object> = among === undefined ? handle.selectFrom('leases') : byKey(among);
  if (q.uuid !== undefined) s = s.where('uuid', '=', q.uuid);
  if (q.uuids !== undefined) {
    if (q.uuids.length === 0) return null;
    s = s.where('uuid', 'in', [...q.uuids]);
  }
  if (q.parentLeaseUuids !== undefined) {
    if (q.parentLeaseUuids.length === 0) return null;
    s = s.where('parent_lease_uuid', 'in', [...q.parentLeaseUuids]);
  }
  if (q.name !== undefined) s = s.where('name', '=', q.name);
  if (q.projectId !== undefined) s = s.where('project_id', '=', q.projectId);
  if (q.ownerId !== undefined) s = s.where('owner_id', '=', q.ownerId);
  const either = q.projectOrOwnerId;
  if (either !== undefined) s = s.where((eb) => eb.or([eb('project_id', '=', either), eb('owner_id', '=', either)]));
  if (q.statuses !== undefined) {
    if (q.statuses.length === 0) return null;
    s = s.where('status', 'in', [...q.statuses]);
  }
  if (q.offerUuid !== undefined) s = s.where('offer_uuid', '=', q.offerUuid);
  if (q.offerUuids !== undefined) {
    if (q.offerUuids.length === 0) return null;
    s = s.where('offer_uuid', 'in', [...q.offerUuids]);
  }
  if (q.parentLeaseUuid !== undefined) s = s.where('parent_lease_uuid', '=', q.parentLeaseUuid);
  if (q.resourceType !== undefined) s = s.where('resource_type', '=', q.resourceType);
  if (q.resourceUuid !== undefined) s = s.where('resource_uuid', '=', q.resourceUuid);
  if (q.resourceUuids !== undefined) {
    if (q.resourceUuids.length === 0) return null;
    s = s.where('resource_uuid', 'in', [...q.resourceUuids]);
  }
  if (q.purpose !== undefined) s = s.where('purpose', '=', q.purpose);
  if (q.intersects !== undefined) s = s.where('start_time', '<=', q.intersects.end).where('end_time', '>=', q.intersects.start);
  return s;
}
