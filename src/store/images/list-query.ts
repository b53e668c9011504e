/**
 * The SQL of an image list page (the repository side of `src/domain/images/list.ts`), after
 * Glance's `_select_images_query`, `_make_conditions_from_filters` and `_paginate_query`:
 *
 * - scope: an admin sees every row; anyone else sees `public` and `community` images, the
 *   project's own, and `shared` images with a membership of the project (in the requested
 *   member status, or any with `all`);
 * - visibility: with a visibility filter only that visibility (`all`: every one); without,
 *   community images only of the caller's own project;
 * - `killed` images are never listed (Glance);
 * - filters: `in` lists on id, name, status and formats; owner, checksum, `os_hash_value`,
 *   size range, `protected`, `os_hidden`, every tag, every property = value, time comparisons;
 * - order and keyset pagination over the sort keys (`created_at` and `id` always last, so the
 *   order is total); nullable keys compare as `coalesce(column, '')` (`-1` for size) in both
 *   the order and the marker predicate, so the two agree on both engines.
 */
import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Image, SortKey } from '../../domain/images/model.ts';
import type { ImageFilters, ImageQuery, ListScope, TimeFilter } from '../../domain/images/ports.ts';
import { toBool, type Db } from '../database.ts';
import type { Database } from '../schema.ts';
import type { ImageRow } from './rows.ts';

type EB = ExpressionBuilder<Database, 'images'>;
type Q = SelectQueryBuilder<Database, 'images', ImageRow>;

/** The sortable expression of a key and the marker's value for it. */
function sortExpr(key: SortKey): Expression<string | number> {
  switch (key) {
    case 'name':
    case 'container_format':
    case 'disk_format':
      return sql<string>`coalesce(${sql.ref(`images.${key}`)}, '')`;
    case 'size':
      return sql<number>`coalesce(${sql.ref('images.size')}, -1)`;
    default:
      return sql.ref<string | number>(`images.${key}`);
  }
}

function markerValue(marker: Image, key: SortKey): string | number {
  switch (key) {
    case 'name':
      return marker.name ?? '';
    case 'container_format':
      return marker.container_format ?? '';
    case 'disk_format':
      return marker.disk_format ?? '';
    case 'size':
      return marker.size ?? -1;
    case 'status':
      return marker.status;
    case 'id':
      return marker.id;
    case 'created_at':
      return marker.created_at;
    case 'updated_at':
      return marker.updated_at;
  }
}

function scoped(q: Q, scope: ListScope): Q {
  const project = scope.projectId;
  if (!scope.admin) {
    q = q.where((eb: EB) => {
      const ors: Expression<SqlBool>[] = [eb('images.visibility', 'in', ['public', 'community'])];
      if (project !== null) {
        ors.push(eb('images.owner', '=', project));
        let members = eb
          .selectFrom('image_members as m')
          .select(sql<number>`1`.as('one'))
          .whereRef('m.image_id', '=', 'images.id')
          .where('m.member_id', '=', project);
        if (scope.memberStatus !== 'all') members = members.where('m.status', '=', scope.memberStatus);
        ors.push(eb.and([eb('images.visibility', '=', 'shared'), eb.exists(members)]));
      }
      return eb.or(ors);
    });
  }
  if (scope.visibility !== null) {
    if (scope.visibility !== 'all') q = q.where('images.visibility', '=', scope.visibility);
  } else if (project === null) {
    q = q.where('images.visibility', '!=', 'community');
  } else {
    q = q.where((eb: EB) => eb.or([eb('images.owner', '=', project), eb('images.visibility', '!=', 'community')]));
  }
  return q;
}

const TIME_OPS = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function timeFilter(q: Q, column: 'images.created_at' | 'images.updated_at', f: TimeFilter | undefined): Q {
  return f === undefined ? q : q.where(column, TIME_OPS[f.op], f.time);
}

function filtered(q: Q, f: ImageFilters): Q {
  if (f.id) q = q.where('images.id', 'in', [...f.id.values]);
  if (f.name) q = q.where('images.name', 'in', [...f.name.values]);
  if (f.status) q = q.where('images.status', 'in', [...f.status.values]);
  if (f.diskFormat) q = q.where('images.disk_format', 'in', [...f.diskFormat.values]);
  if (f.containerFormat) q = q.where('images.container_format', 'in', [...f.containerFormat.values]);
  if (f.owner !== undefined) q = q.where('images.owner', '=', f.owner);
  if (f.checksum !== undefined) q = q.where('images.checksum', '=', f.checksum);
  if (f.osHashValue !== undefined) q = q.where('images.os_hash_value', '=', f.osHashValue);
  if (f.sizeMin !== undefined) q = q.where('images.size', '>=', f.sizeMin);
  if (f.sizeMax !== undefined) q = q.where('images.size', '<=', f.sizeMax);
  if (f.protected !== undefined) q = q.where('images.protected', '=', toBool(f.protected));
  q = q.where('images.os_hidden', '=', toBool(f.osHidden));
  for (const tag of f.tags) {
    q = q.where((eb: EB) =>
      eb.exists(
        eb
          .selectFrom('image_tags as t')
          .select(sql<number>`1`.as('one'))
          .whereRef('t.image_id', '=', 'images.id')
          .where('t.value', '=', tag),
      ),
    );
  }
  for (const [name, value] of Object.entries(f.properties)) {
    q = q.where((eb: EB) =>
      eb.exists(
        eb
          .selectFrom('image_properties as p')
          .select(sql<number>`1`.as('one'))
          .whereRef('p.image_id', '=', 'images.id')
          .where('p.name', '=', name)
          .where('p.value', '=', value),
      ),
    );
  }
  q = timeFilter(q, 'images.created_at', f.createdAt);
  return timeFilter(q, 'images.updated_at', f.updatedAt);
}

function paginated(q: Q, sort: ImageQuery['sort'], marker: Image | null, limit: number): Q {
  if (marker !== null) {
    q = q.where((eb: EB) =>
      eb.or(
        sort.map((s, i) => {
          const ands: Expression<SqlBool>[] = sort.slice(0, i).map((p) => eb(sortExpr(p.key), '=', markerValue(marker, p.key)));
          ands.push(eb(sortExpr(s.key), s.dir === 'desc' ? '<' : '>', markerValue(marker, s.key)));
          return eb.and(ands);
        }),
      ),
    );
  }
  for (const s of sort) q = q.orderBy(sortExpr(s.key), s.dir);
  return q.limit(limit);
}

/** Select one page of image rows. */
export function selectImagePage(db: Db, query: ImageQuery): Q {
  const base = db.selectFrom('images').selectAll('images').where('images.status', '!=', 'killed');
  return paginated(filtered(scoped(base, query.scope), query.filters), query.sort, query.marker, query.limit);
}
