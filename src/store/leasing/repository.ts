/**
 * Kysely implementation of the leasing storage port (`src/domain/leasing/repository.ts`):
 * offer and lease queries (`./queries.ts`), the node lock and node claims, the event log and
 * console tokens. Portable across SQLite and PostgreSQL.
 */
import { LEASE_ACTIVE, LEASE_CANCEL_PENDING, LEASE_PENDING_END, LEASE_PENDING_START, OFFER_LIVE } from '../../domain/leasing/status.ts';
import { sql } from 'kysely';
import type { ConsoleTokenRecord, Lease, LeasingEvent, Offer } from '../../domain/leasing/model.ts';
import type { LeasePolicy } from '../../domain/leasing/policy-rules.ts';
import type { LeaseQuota } from '../../domain/leasing/quota-rules.ts';
import type { EventQuery, LeaseQuery, LeasingRepository, LeasingTx, PolicyQuery } from '../../domain/leasing/repository.ts';
import { CompiledShapes } from '../compiled-shapes.ts';
import type { Store } from '../database.ts';
import { LimitsStore } from './limits.ts';
import { leaseSelect, LeasingQueries } from './queries.ts';
import { toEvent, toLease, toOffer } from './rows.ts';

/** The leasing store over an open {@link Store}. */
export class KyselyLeasingRepository extends LeasingQueries implements LeasingRepository {
  private readonly limits: LimitsStore;

  constructor(private readonly store: Store) {
    super(store.db, new CompiledShapes());
    this.limits = new LimitsStore(store.db);
  }

  /**
   * The matching uuids first, in order, as column arrays (about 100 bytes of transient memory per
   * lease, not the ~5 KB of a rendered one), then the rows `size` at a time by primary key, with
   * the filters applied again.
   */
  async *leaseBatches(query: LeaseQuery, size: number): AsyncIterable<Lease[]> {
    const keys = leaseSelect(this.store.db, query);
    if (!keys) return;
    const rows = await this.store.selectArrays(keys.select('uuid').orderBy('created_at').orderBy('uuid').compile());
    const uuids = rows.map((r) => r[0] as string);
    rows.length = 0;
    for (let i = 0; i < uuids.length; i += size) {
      const part = uuids.slice(i, i + size);
      const found = await leaseSelect(this.store.db, query, part)!.selectAll().execute();
      const byUuid = new Map(found.map((r) => [r.uuid, r]));
      const batch = part.flatMap((u) => {
        const row = byUuid.get(u);
        return row ? [toLease(row)] : [];
      });
      if (batch.length > 0) yield batch;
    }
  }

  /** Runs `fn` inside `store.withLock(['node:<uuid>'])` with queries bound to the transaction. */
  withNodeLock<T>(nodeUuid: string, fn: (tx: LeasingTx) => Promise<T>): Promise<T> {
    return this.store.withLock([`node:${nodeUuid}`], (tx) => fn(new LeasingQueries(tx, this.shapes)));
  }

  /** Runs `fn` inside `store.withLock` on `node:<uuid>` and `project:<id>` keys (sorted there). */
  withLeaseLocks<T>(nodeUuids: readonly string[], projectIds: readonly string[], fn: (tx: LeasingTx) => Promise<T>): Promise<T> {
    const keys = [...nodeUuids.map((n) => `node:${n}`), ...projectIds.map((p) => `project:${p}`)];
    return this.store.withLock(keys, (tx) => fn(new LeasingQueries(tx, this.shapes)));
  }

  async claimNode(nodeUuid: string, holder: string, until: number, now: number): Promise<boolean> {
    return this.store.withLock([`node:${nodeUuid}`], async (tx) => {
      const read = this.shapes.query('claim:read', [nodeUuid], () =>
        tx.selectFrom('lease_node_claims').selectAll().where('node_uuid', '=', nodeUuid),
      );
      const [row] = (await tx.executeQuery<{ holder: string; expires_at: number }>(read)).rows;
      if (!row) {
        const insert = this.shapes.query('claim:insert', [nodeUuid, holder, until], () =>
          tx.insertInto('lease_node_claims').values({ node_uuid: nodeUuid, holder, expires_at: until }),
        );
        await tx.executeQuery(insert);
        return true;
      }
      if (row.holder !== holder && Number(row.expires_at) > now) return false;
      await tx.updateTable('lease_node_claims').set({ holder, expires_at: until }).where('node_uuid', '=', nodeUuid).execute();
      return true;
    });
  }

  async releaseNode(nodeUuid: string, holder: string): Promise<void> {
    const db = this.store.db;
    await db.executeQuery(
      this.shapes.query('claim:release', [nodeUuid, holder], () =>
        db.deleteFrom('lease_node_claims').where('node_uuid', '=', nodeUuid).where('holder', '=', holder),
      ),
    );
  }

  async releaseClaimsOf(prefix: string): Promise<number> {
    const mark = `${prefix}#`;
    const r = await this.store.db
      .deleteFrom('lease_node_claims')
      .where(sql<string>`substr(holder, 1, ${mark.length})`, '=', mark)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async claimNodes(nodeUuids: readonly string[], holder: string, until: number, now: number): Promise<Set<string>> {
    const taken = new Set<string>();
    if (nodeUuids.length === 0) return taken;
    return this.store.withLock(
      nodeUuids.map((n) => `node:${n}`),
      async (tx) => {
        const rows = await tx
          .selectFrom('lease_node_claims')
          .selectAll()
          .where('node_uuid', 'in', [...nodeUuids])
          .execute();
        const held = new Map(rows.map((r) => [r.node_uuid, r]));
        const fresh: string[] = [];
        const stale: string[] = [];
        for (const n of nodeUuids) {
          const r = held.get(n);
          if (!r) fresh.push(n);
          else if (r.holder === holder || Number(r.expires_at) <= now) stale.push(n);
          else continue;
          taken.add(n);
        }
        if (fresh.length > 0)
          await tx
            .insertInto('lease_node_claims')
            .values(fresh.map((n) => ({ node_uuid: n, holder, expires_at: until })))
            .execute();
        if (stale.length > 0)
          await tx.updateTable('lease_node_claims').set({ holder, expires_at: until }).where('node_uuid', 'in', stale).execute();
        return taken;
      },
    );
  }

  async releaseNodes(nodeUuids: readonly string[], holder: string): Promise<void> {
    if (nodeUuids.length === 0) return;
    const db = this.store.db;
    // One kept statement per list length up to 16 (a cancel releases one node, a due batch a few).
    const shape = nodeUuids.length <= 16 ? `claim:release:${nodeUuids.length}` : null;
    await db.executeQuery(
      this.shapes.query(shape, [...nodeUuids, holder], () =>
        db
          .deleteFrom('lease_node_claims')
          .where('node_uuid', 'in', [...nodeUuids])
          .where('holder', '=', holder),
      ),
    );
  }

  async pendingItems(until: number): Promise<{ leases: Lease[]; offers: Offer[] }> {
    const db = this.store.db;
    // One indexed range per boundary kind: (status, start_time) and (status, end_time).
    const [starting, ending, cancelling, offers] = await Promise.all([
      db
        .selectFrom('leases')
        .selectAll()
        .where('status', 'in', [...LEASE_PENDING_START])
        .where('start_time', '<=', until)
        .execute(),
      db
        .selectFrom('leases')
        .selectAll()
        .where('status', 'in', [...LEASE_PENDING_END])
        .where('end_time', '<=', until)
        .execute(),
      db.selectFrom('leases').selectAll().where('status', '=', LEASE_CANCEL_PENDING).execute(),
      db
        .selectFrom('offers')
        .selectAll()
        .where('status', 'in', [...OFFER_LIVE])
        .where('end_time', '<=', until)
        .execute(),
    ]);
    return { leases: [...starting, ...ending, ...cancelling].map(toLease), offers: offers.map(toOffer) };
  }

  async listEvents(q: EventQuery): Promise<LeasingEvent[]> {
    let s = this.store.db.selectFrom('lease_events').selectAll();
    if (q.afterId !== undefined) s = s.where('id', '>', q.afterId);
    if (q.afterTime !== undefined) s = s.where('event_time', '>', q.afterTime);
    const party = q.lesseeOrOwnerId;
    if (party !== undefined) s = s.where((eb) => eb.or([eb('lessee_id', '=', party), eb('owner_id', '=', party)]));
    if (q.eventType !== undefined) s = s.where('event_type', '=', q.eventType);
    if (q.resourceType !== undefined) s = s.where('resource_type', '=', q.resourceType);
    if (q.resourceUuid !== undefined) s = s.where('resource_uuid', '=', q.resourceUuid);
    return (await s.orderBy('id').execute()).map(toEvent);
  }

  async insertConsoleToken(t: ConsoleTokenRecord): Promise<void> {
    await this.store.db
      .insertInto('console_auth_tokens')
      .values({ token_hash: t.token_hash, node_uuid: t.node_uuid, expires_at: t.expires_at, created_at: t.created_at })
      .execute();
  }

  async findConsoleToken(tokenHash: string, now: number): Promise<Pick<ConsoleTokenRecord, 'node_uuid' | 'expires_at'> | null> {
    const row = await this.store.db
      .selectFrom('console_auth_tokens')
      .select(['node_uuid', 'expires_at'])
      .where('token_hash', '=', tokenHash)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row ? { node_uuid: row.node_uuid, expires_at: Number(row.expires_at) } : null;
  }

  async purgeConsoleTokens(now: number): Promise<number> {
    const r = await this.store.db.deleteFrom('console_auth_tokens').where('expires_at', '<=', now).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async leasesEndingBetween(from: number, to: number): Promise<Lease[]> {
    const rows = await this.store.db
      .selectFrom('leases')
      .selectAll()
      .where('status', '=', LEASE_ACTIVE)
      .where('end_time', '>', from)
      .where('end_time', '<=', to)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('lease_notices')
              .select(sql<number>`1`.as('one'))
              .whereRef('lease_notices.lease_uuid', '=', 'leases.uuid')
              .where('lease_notices.kind', '=', 'ending_soon'),
          ),
        ),
      )
      .orderBy('end_time')
      .execute();
    return rows.map(toLease);
  }

  getPolicy(uuid: string): Promise<LeasePolicy | null> {
    return this.limits.getPolicy(uuid);
  }

  listPolicies(query: PolicyQuery): Promise<LeasePolicy[]> {
    return this.limits.listPolicies(query);
  }

  insertPolicy(policy: LeasePolicy): Promise<boolean> {
    return this.limits.insertPolicy(policy);
  }

  updatePolicy(policy: LeasePolicy): Promise<void> {
    return this.limits.updatePolicy(policy);
  }

  deletePolicy(uuid: string): Promise<boolean> {
    return this.limits.deletePolicy(uuid);
  }

  listQuotas(): Promise<LeaseQuota[]> {
    return this.limits.listQuotas();
  }

  putQuota(quota: LeaseQuota): Promise<void> {
    return this.limits.putQuota(quota);
  }

  deleteQuota(projectId: string): Promise<boolean> {
    return this.limits.deleteQuota(projectId);
  }
}
