/**
 * Kysely table types of the image area (Glance's images, image_properties, image_tags and
 * image_members, without Glance's soft-delete columns: rows are deleted). Timestamps are epoch
 * ms, booleans 0/1 (docs/architecture.md). Created by migration `0005_images`.
 */

/** Images. `status` ∈ queued | saving | active | deactivated (see src/domain/images/model.ts). */
export interface ImagesTable {
  id: string;
  name: string | null;
  status: string;
  visibility: string;
  protected: number;
  os_hidden: number;
  owner: string | null;
  disk_format: string | null;
  container_format: string | null;
  min_disk: number;
  min_ram: number;
  size: number | null;
  virtual_size: number | null;
  checksum: string | null;
  os_hash_algo: string | null;
  os_hash_value: string | null;
  /** Key of the data in the image store; null without data. */
  location: string | null;
  created_at: number;
  updated_at: number;
}

/** Custom properties, one row each (filters use them). */
export interface ImagePropertiesTable {
  image_id: string;
  name: string;
  value: string;
}

/** Tags, one row each; `position` keeps their order. */
export interface ImageTagsTable {
  image_id: string;
  value: string;
  position: number;
}

/** Memberships of shared images. `status` ∈ pending | accepted | rejected. */
export interface ImageMembersTable {
  image_id: string;
  member_id: string;
  status: string;
  created_at: number;
  updated_at: number;
}

/** All image tables, merged into the store's `Database` type. */
export interface ImageTables {
  images: ImagesTable;
  image_properties: ImagePropertiesTable;
  image_tags: ImageTagsTable;
  image_members: ImageMembersTable;
}
