/**
 * Ports of the image area: the image repository (implemented in `src/store/images/`), the
 * image data store (implemented in `src/drivers/image-store/`) and the project lookup
 * (implemented over the identity directory by the composition root).
 */
import type { Readable, Writable } from 'node:stream';
import type { Image, ImageMember, ImageStatus, MemberStatus, SortKey, Visibility } from './model.ts';

/** Attributes of an image that PATCH and the status transitions write (never digests or status). */
export type ImageAttributes = Pick<
  Image,
  | 'name'
  | 'visibility'
  | 'protected'
  | 'os_hidden'
  | 'owner'
  | 'disk_format'
  | 'container_format'
  | 'min_disk'
  | 'min_ram'
  | 'properties'
  | 'tags'
>;

/** What a successful upload records on the image (with the status `active`). */
export interface UploadedData {
  readonly size: number;
  readonly virtualSize: number | null;
  readonly checksum: string;
  readonly osHashAlgo: string;
  readonly osHashValue: string;
  readonly location: string;
}

/** A string filter: equal to one value, or (`in:`) to any of several. */
export interface StringFilter {
  readonly values: readonly string[];
}

/** A time filter (`created_at`, `updated_at`) with Glance's operators. */
export interface TimeFilter {
  readonly op: 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte';
  /** Epoch ms. */
  readonly time: number;
}

/** Filters of an image list, as the repository applies them. */
export interface ImageFilters {
  readonly id?: StringFilter;
  readonly name?: StringFilter;
  readonly status?: StringFilter;
  readonly diskFormat?: StringFilter;
  readonly containerFormat?: StringFilter;
  readonly owner?: string;
  readonly checksum?: string;
  readonly osHashValue?: string;
  readonly sizeMin?: number;
  readonly sizeMax?: number;
  readonly protected?: boolean;
  /** Hidden images match only `true`; Glance lists with `false` unless asked. */
  readonly osHidden: boolean;
  /** Every tag must be present. */
  readonly tags: readonly string[];
  /** Every custom property must be present with this value. */
  readonly properties: Readonly<Record<string, string>>;
  readonly createdAt?: TimeFilter;
  readonly updatedAt?: TimeFilter;
}

/** Who is listing, for the visibility rules of the query (Glance's `_select_images_query`). */
export interface ListScope {
  /** Admins see every image (community images of others only with a visibility filter). */
  readonly admin: boolean;
  /** The caller's project, or null for a token without a project. */
  readonly projectId: string | null;
  /** Shared images appear through a membership with this status (`all`: any). */
  readonly memberStatus: MemberStatus | 'all';
  /** Only this visibility (`all`: every visibility, community images of others included). */
  readonly visibility: Visibility | 'all' | null;
}

/** One page of a list, in the repository's terms. */
export interface ImageQuery {
  readonly scope: ListScope;
  readonly filters: ImageFilters;
  /** Sort keys with directions; `created_at` and `id` are appended when missing (unique order). */
  readonly sort: ReadonlyArray<{ readonly key: SortKey; readonly dir: 'asc' | 'desc' }>;
  /** Return the images after this one in the sort order. */
  readonly marker: Image | null;
  readonly limit: number;
}

/** Reads and writes of one image under its lock (see {@link ImageRepository.withImageLock}). */
export interface ImageTx {
  get(id: string): Promise<Image | null>;
  /** Replace the writable attributes (not status, digests or location); sets `updated_at`. */
  updateAttributes(id: string, attrs: ImageAttributes, now: number): Promise<Image>;
  /**
   * Set the status; entering `queued` clears size, virtual size, digests and location (Glance
   * clears size and virtual size when an image returns to queued).
   */
  setStatus(id: string, status: ImageStatus, now: number): Promise<void>;
  /** Record the data of a finished upload and make the image `active`. */
  finishUpload(id: string, data: UploadedData, now: number): Promise<void>;
  /** Delete the image with its properties, tags and members. */
  delete(id: string): Promise<void>;
}

/** Storage of images and members. Implementations are portable across SQLite and PostgreSQL. */
export interface ImageRepository {
  /**
   * Insert a new image with its properties and tags.
   * @returns false when an image with this id exists already
   */
  insert(image: Image): Promise<boolean>;
  get(id: string): Promise<Image | null>;
  /** The subset of `ids` that are image records (any status). */
  existingIds(ids: readonly string[]): Promise<Set<string>>;
  /** Ids of the images in `status` whose record was last changed before `before` (epoch ms). */
  idsInStatusSince(status: ImageStatus, before: number): Promise<string[]>;
  /** One page of images visible by `query.scope`, filtered and sorted; at most `limit`. */
  list(query: ImageQuery): Promise<Image[]>;
  /**
   * Run `fn` in one transaction holding the image's exclusive lock, so that read-check-write
   * sequences on one image (PATCH, status transitions, delete) serialise across requests and
   * processes.
   */
  withImageLock<T>(id: string, fn: (tx: ImageTx) => Promise<T>): Promise<T>;

  /** The membership of `projectId` in image `imageId`, or null. */
  getMember(imageId: string, projectId: string): Promise<ImageMember | null>;
  /** Ids among `imageIds` of which `projectId` is a member (any status). */
  membershipsOf(projectId: string, imageIds: readonly string[]): Promise<Set<string>>;
  listMembers(imageId: string): Promise<ImageMember[]>;
  countMembers(imageId: string): Promise<number>;
  /** @returns false when the project is a member already */
  addMember(member: ImageMember): Promise<boolean>;
  /** @returns the updated member, or null when there is no such membership */
  setMemberStatus(imageId: string, memberId: string, status: MemberStatus, now: number): Promise<ImageMember | null>;
  /** @returns false when there was no such membership */
  deleteMember(imageId: string, memberId: string): Promise<boolean>;
}

/** A byte range of stored data, both ends inclusive. */
export interface StoredRange {
  readonly start: number;
  readonly end: number;
}

/** How a read's stream will be consumed. */
export interface StoredReadOptions {
  /**
   * The one writable the stream will be piped into (and nothing else will read it). A store may
   * then reuse its read buffers once `destination.writableLength` shows they were written out.
   */
  readonly destination?: Writable;
}

/**
 * Where image data lives (a filesystem directory by default; an S3-compatible bucket later).
 * Data is streamed both ways: nothing holds a whole image in memory.
 */
export interface ImageStore {
  /**
   * Store all of `data` under `key`, atomically: when the promise resolves the whole object is
   * durable under `key` (replacing any previous object of that key); when it rejects, nothing
   * of it is left behind. Reads `data` until its end or until it errors; a failure of `data`
   * rejects with that error.
   * @returns the number of bytes stored
   */
  put(key: string, data: Readable): Promise<{ readonly bytes: number }>;
  /**
   * Open the object for reading, the whole of it or `range`.
   * @returns the data stream and the object's full size in bytes, or null when there is no such object
   */
  get(key: string, range?: StoredRange, options?: StoredReadOptions): Promise<{ readonly stream: Readable; readonly size: number } | null>;
  /** Remove the object; removing a missing object is not an error. */
  delete(key: string): Promise<void>;
  /** The keys of every complete stored object, in no particular order. */
  keys(): Promise<string[]>;
  /**
   * Remove what uploads that can no longer finish left behind (a killed process's temporary
   * files); uploads in progress are kept.
   * @returns how many temporary files (or folders of them) were removed
   */
  sweepTemporary(): Promise<number>;
  /**
   * The keys of uploads still being written (their temporary data exists), by this process or
   * another one sharing the store; asked after {@link sweepTemporary}, so those of dead
   * processes are gone.
   */
  uploadsInProgress(): Promise<Set<string>>;
}

/** Which project ids exist (for members and owners named by clients). */
export interface ProjectLookup {
  /** The subset of `ids` that are existing projects. */
  existing(ids: readonly string[]): Promise<Set<string>>;
}

/** The two digests Glance records of image data, hex. */
export interface DataDigests {
  /** MD5 (`checksum`). */
  readonly md5: string;
  /** SHA-512 (`os_hash_value`). */
  readonly sha512: string;
}

/**
 * An incremental MD5 + SHA-512 computation over one upload. Implementations may hash in other
 * threads; `update` then returns a promise when the caller must wait (backpressure): until it
 * resolves, no other `update` may be made and the chunk must not be modified. Once `update`
 * has returned undefined, or its promise has resolved, the chunk may be reused.
 */
export interface StreamingDigest {
  /** Add bytes. @returns a promise to await before the next update, or undefined */
  update(chunk: Uint8Array): Promise<void> | undefined;
  /** Finish; no update may follow. */
  digest(): Promise<DataDigests>;
  /** Discard the computation (the upload failed). */
  abort(): void;
}

/** Makes one {@link StreamingDigest} per upload. */
export interface DigestFactory {
  create(): StreamingDigest;
}
