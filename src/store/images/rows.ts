/**
 * Conversion between image rows (`images` plus `image_properties` and `image_tags`) and the
 * domain's {@link Image}, and the bulk loading of properties and tags for a set of images.
 */
import type { Selectable } from 'kysely';
import type { Image, ImageMember, ImageStatus, MemberStatus, Visibility } from '../../domain/images/model.ts';
import type { ImageAttributes } from '../../domain/images/ports.ts';
import { toBool, type Db, type Tx } from '../database.ts';
import type { ImageMembersTable, ImagesTable } from './tables.ts';

/** An `images` row as read. */
export type ImageRow = Selectable<ImagesTable>;

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

/** Build the domain image from its row, properties and tags. */
export function toImage(row: ImageRow, properties: Record<string, string>, tags: string[]): Image {
  return {
    id: row.id,
    name: row.name,
    status: row.status as ImageStatus,
    visibility: row.visibility as Visibility,
    protected: Number(row.protected) === 1,
    os_hidden: Number(row.os_hidden) === 1,
    owner: row.owner,
    disk_format: row.disk_format,
    container_format: row.container_format,
    min_disk: Number(row.min_disk),
    min_ram: Number(row.min_ram),
    size: num(row.size),
    virtual_size: num(row.virtual_size),
    checksum: row.checksum,
    os_hash_algo: row.os_hash_algo,
    os_hash_value: row.os_hash_value,
    properties,
    tags,
    location: row.location,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

/** The `images` columns of an image's writable attributes. */
export function attributeColumns(
  a: ImageAttributes,
): Omit<
  ImagesTable,
  'id' | 'status' | 'size' | 'virtual_size' | 'checksum' | 'os_hash_algo' | 'os_hash_value' | 'location' | 'created_at' | 'updated_at'
> {
  return {
    name: a.name,
    visibility: a.visibility,
    protected: toBool(a.protected),
    os_hidden: toBool(a.os_hidden),
    owner: a.owner,
    disk_format: a.disk_format,
    container_format: a.container_format,
    min_disk: a.min_disk,
    min_ram: a.min_ram,
  };
}

/** The full row of a new image. */
export function imageRow(image: Image): ImagesTable {
  return {
    id: image.id,
    ...attributeColumns(image),
    status: image.status,
    size: image.size,
    virtual_size: image.virtual_size,
    checksum: image.checksum,
    os_hash_algo: image.os_hash_algo,
    os_hash_value: image.os_hash_value,
    location: image.location,
    created_at: image.created_at,
    updated_at: image.updated_at,
  };
}

/** Read the properties and tags of `rows` and build their images, in the rows' order. */
export async function hydrate(db: Db | Tx, rows: readonly ImageRow[]): Promise<Image[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [props, tags] = await Promise.all([
    db.selectFrom('image_properties').selectAll().where('image_id', 'in', ids).orderBy('image_id').orderBy('name').execute(),
    db.selectFrom('image_tags').selectAll().where('image_id', 'in', ids).orderBy('image_id').orderBy('position').execute(),
  ]);
  const propsOf = new Map<string, Record<string, string>>();
  for (const p of props) {
    let m = propsOf.get(p.image_id);
    if (!m) propsOf.set(p.image_id, (m = {}));
    m[p.name] = p.value;
  }
  const tagsOf = new Map<string, string[]>();
  for (const t of tags) {
    let l = tagsOf.get(t.image_id);
    if (!l) tagsOf.set(t.image_id, (l = []));
    l.push(t.value);
  }
  return rows.map((r) => toImage(r, propsOf.get(r.id) ?? {}, tagsOf.get(r.id) ?? []));
}

/** Replace the properties and tags of an image (inside the caller's transaction). */
export async function writeDetails(
  tx: Db | Tx,
  imageId: string,
  properties: Readonly<Record<string, string>>,
  tags: readonly string[],
): Promise<void> {
  await tx.deleteFrom('image_properties').where('image_id', '=', imageId).execute();
  await tx.deleteFrom('image_tags').where('image_id', '=', imageId).execute();
  const propRows = Object.entries(properties).map(([name, value]) => ({ image_id: imageId, name, value }));
  if (propRows.length > 0) await tx.insertInto('image_properties').values(propRows).execute();
  const tagRows = tags.map((value, position) => ({ image_id: imageId, value, position }));
  if (tagRows.length > 0) await tx.insertInto('image_tags').values(tagRows).execute();
}

/** Build the domain member from its row. */
export function toMember(row: Selectable<ImageMembersTable>): ImageMember {
  return {
    image_id: row.image_id,
    member_id: row.member_id,
    status: row.status as MemberStatus,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}
