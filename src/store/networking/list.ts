/**
 * One generic list query for the Neutron-style collections: equality filters (a value list per
 * column, `IN`, booleans as 0/1, `null` as `IS NULL`), a visibility condition, sorting on
 * whitelisted columns with `id` as tie-breaker, and keyset pagination after a marker row —
 * one SELECT per page whatever the filters.
 *
 * Dynamic column names are only ever taken from the per-table whitelists given by the caller,
 * never from the request.
 */
import { sql, type ExpressionBuilder, type Expression, type Kysely, type SqlBool } from 'kysely';
import type { ListQuery } from '../../domain/networking/ports.ts';
import type { Db, Tx } from '../database.ts';

/** How a collection's table is listed. */
export interface ListSpec {
  readonly table: string;
  /** Filterable columns (domain names are column names). */
  readonly columns: ReadonlySet<string>;
  /** Sortable columns (all non-null). */
  readonly sortable: ReadonlySet<string>;
  /** Rows a project may see (`visibleTo` set). */
  readonly visible: (eb: ExpressionBuilder<any, any>, projectId: string) => Expression<SqlBool>;
  /** Filters that are not plain columns (`shared`, `fixed_ip_address`…). */
  readonly special?: Readonly<
    Record<string, (eb: ExpressionBuilder<any, any>, values: ListQuery['filters'][string], q: ListQuery) => Expression<SqlBool>>
  >;
}

/** A value as stored: booleans as 0/1. */
function stored(v: string | number | boolean | null): string | number | null {
  return typeof v === 'boolean' ? (v ? 1 : 0) : v;
}

/**
 * Select one page of rows of `spec.table` for the query.
 * @returns raw rows in page order
 */
export async function listRows(db: Db | Tx, spec: ListSpec, q: ListQuery): Promise<Record<string, any>[]> {
  const k = db as unknown as Kysely<any>;
  const t = spec.table;
  const sorts = [...q.sort.filter((s) => spec.sortable.has(s.key))];
  if (!sorts.some((s) => s.key === 'id')) sorts.push({ key: 'id', dir: sorts[0]?.dir ?? 'asc' });
  let marker: Record<string, any> | undefined;
  if (q.markerId !== null) marker = await k.selectFrom(t).selectAll().where('id', '=', q.markerId).executeTakeFirst();

  let query = k.selectFrom(t).selectAll(t);
  query = query.where((eb) => {
    const conds: Expression<SqlBool>[] = [];
    for (const [col, values] of Object.entries(q.filters)) {
      const special = spec.special?.[col];
      if (special) {
        conds.push(special(eb, values, q));
        continue;
      }
      if (!spec.columns.has(col)) continue;
      const ref = eb.ref(`${t}.${col}`);
      const nonNull = values.filter((v) => v !== null).map(stored);
      const alts: Expression<SqlBool>[] = [];
      if (nonNull.length > 0) alts.push(eb(ref, 'in', nonNull));
      if (values.includes(null)) alts.push(eb(ref, 'is', null));
      conds.push(alts.length === 0 ? sql<SqlBool>`1 = 0` : eb.or(alts));
    }
    if (q.visibleTo !== null) conds.push(spec.visible(eb, q.visibleTo));
    if (marker) {
      const ors: Expression<SqlBool>[] = [];
      for (let i = 0; i < sorts.length; i++) {
        const ands: Expression<SqlBool>[] = [];
        for (let j = 0; j < i; j++) ands.push(eb(eb.ref(`${t}.${sorts[j]!.key}`), '=', marker[sorts[j]!.key]));
        const s = sorts[i]!;
        ands.push(eb(eb.ref(`${t}.${s.key}`), s.dir === 'asc' ? '>' : '<', marker[s.key]));
        ors.push(eb.and(ands));
      }
      conds.push(eb.or(ors));
    }
    return conds.length === 0 ? sql<SqlBool>`1 = 1` : eb.and(conds);
  });
  for (const s of sorts) query = query.orderBy(`${t}.${s.key}`, s.dir);
  if (q.limit !== null) query = query.limit(q.limit);
  return query.execute();
}
