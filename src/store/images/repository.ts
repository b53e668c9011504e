/**
 * Kysely implementation of the image repository port (`src/domain/images/ports.ts`), portable
 * across SQLite and PostgreSQL. Per-image serialisation uses `Store.withLock(['image:<id>'])`.
 */
import type { Image, ImageMember, ImageStatus, MemberStatus } from '../../domain/images/model.ts';
import type { ImageAttributes, ImageQuery, ImageRepository, ImageTx, UploadedData } from '../../domain/images/ports.ts';
import { isUniqueViolation, type Db, type Store, type Tx } from '../database.ts';
import { selectImagePage } from './list-query.ts';
import { attributeColumns, hydrate, imageRow, toMember, writeDetails } from './rows.ts';

async function getImage(db: Db | Tx, id: string): Promise<Image | null> {
  const row = await db.selectFrom('images').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? (await hydrate(db, [row]))[0]! : null;
}

/** The reads and writes of one image inside a locked transaction. */
class LockedImage implements ImageTx {
  constructor(private readonly tx: Tx) {}

  get(id: string): Promise<Image | null> {
    return getImage(this.tx, id);
  }

  async updateAttributes(id: string, attrs: ImageAttributes, now: number): Promise<Image> {
    await this.tx
      .updateTable('images')
      .set({ ...attributeColumns(attrs), updated_at: now })
      .where('id', '=', id)
      .execute();
    await writeDetails(this.tx, id, attrs.properties, attrs.tags);
    const image = await getImage(this.tx, id);
    if (!image) throw new Error(`image ${id} vanished inside its lock`);
    return image;
  }

  async setStatus(id: string, status: ImageStatus, now: number): Promise<void> {
    const cleared =
      status === 'queued'
        ? { size: null, virtual_size: null, checksum: null, os_hash_algo: null, os_hash_value: null, location: null }
        : {};
    await this.tx
      .updateTable('images')
      .set({ status, updated_at: now, ...cleared })
      .where('id', '=', id)
      .execute();
  }

  async finishUpload(id: string, data: UploadedData, now: number): Promise<void> {
    await this.tx
      .updateTable('images')
      .set({
        status: 'active',
        size: data.size,
        virtual_size: data.virtualSize,
        checksum: data.checksum,
        os_hash_algo: data.osHashAlgo,
        os_hash_value: data.osHashValue,
        location: data.location,
        updated_at: now,
      })
      .where('id', '=', id)
      .execute();
  }

  async delete(id: string): Promise<void> {
    // Cascades to properties, tags and members; explicit deletes keep this independent of the
    // engine's foreign-key enforcement.
    await this.tx.deleteFrom('image_members').where('image_id', '=', id).execute();
    await this.tx.deleteFrom('image_properties').where('image_id', '=', id).execute();
    await this.tx.deleteFrom('image_tags').where('image_id', '=', id).execute();
    await this.tx.deleteFrom('images').where('id', '=', id).execute();
  }
}

/** The image store over an open {@link Store}. */
export class KyselyImageRepository implements ImageRepository {
  constructor(private readonly store: Store) {}

  private get db(): Db {
    return this.store.db;
  }

  async insert(image: Image): Promise<boolean> {
    try {
      await this.db.transaction().execute(async (tx) => {
        await tx.insertInto('images').values(imageRow(image)).execute();
        await writeDetails(tx, image.id, image.properties, image.tags);
      });
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw err;
    }
  }

  get(id: string): Promise<Image | null> {
    return getImage(this.db, id);
  }

  async existingIds(ids: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (let i = 0; i < ids.length; i += 500) {
      const part = ids.slice(i, i + 500);
      for (const r of await this.db.selectFrom('images').select('id').where('id', 'in', part).execute()) out.add(r.id);
    }
    return out;
  }

  async idsInStatusSince(status: ImageStatus, before: number): Promise<string[]> {
    const rows = await this.db.selectFrom('images').select('id').where('status', '=', status).where('updated_at', '<', before).execute();
    return rows.map((r) => r.id);
  }

  async list(query: ImageQuery): Promise<Image[]> {
    return hydrate(this.db, await selectImagePage(this.db, query).execute());
  }

  withImageLock<T>(id: string, fn: (tx: ImageTx) => Promise<T>): Promise<T> {
    return this.store.withLock([`image:${id}`], (tx) => fn(new LockedImage(tx)));
  }

  async getMember(imageId: string, projectId: string): Promise<ImageMember | null> {
    const row = await this.db
      .selectFrom('image_members')
      .selectAll()
      .where('image_id', '=', imageId)
      .where('member_id', '=', projectId)
      .executeTakeFirst();
    return row ? toMember(row) : null;
  }

  async membershipsOf(projectId: string, imageIds: readonly string[]): Promise<Set<string>> {
    if (imageIds.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('image_members')
      .select('image_id')
      .where('member_id', '=', projectId)
      .where('image_id', 'in', [...imageIds])
      .execute();
    return new Set(rows.map((r) => r.image_id));
  }

  async listMembers(imageId: string): Promise<ImageMember[]> {
    const rows = await this.db
      .selectFrom('image_members')
      .selectAll()
      .where('image_id', '=', imageId)
      .orderBy('created_at')
      .orderBy('member_id')
      .execute();
    return rows.map(toMember);
  }

  async countMembers(imageId: string): Promise<number> {
    const row = await this.db
      .selectFrom('image_members')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('image_id', '=', imageId)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async addMember(member: ImageMember): Promise<boolean> {
    try {
      await this.db
        .insertInto('image_members')
        .values({
          image_id: member.image_id,
          member_id: member.member_id,
          status: member.status,
          created_at: member.created_at,
          updated_at: member.updated_at,
        })
        .execute();
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw err;
    }
  }

  async setMemberStatus(imageId: string, memberId: string, status: MemberStatus, now: number): Promise<ImageMember | null> {
    await this.db
      .updateTable('image_members')
      .set({ status, updated_at: now })
      .where('image_id', '=', imageId)
      .where('member_id', '=', memberId)
      .execute();
    return this.getMember(imageId, memberId);
  }

  async deleteMember(imageId: string, memberId: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('image_members')
      .where('image_id', '=', imageId)
      .where('member_id', '=', memberId)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
