/**
 * Image PATCH semantics (Glance's `ImagesController.update` with `_do_add`, `_do_replace`,
 * `_do_remove`, and the deserializer's `_validate_change`). The API parses the JSON-patch
 * document (media types `application/openstack-images-v2.1-json-patch` and the draft-4 style
 * `…-v2.0-json-patch`) into {@link ImageChange}s; this module checks and applies them:
 *
 * - read-only attributes (`status`, `size`, `checksum`, …) → 403 `Attribute 'x' is read-only.`;
 *   reserved ones (`locations`, `deleted`, `os_glance*`) → 403 `… is reserved.`;
 * - a value that fails the image schema → 400;
 * - `add` and `replace` set a base attribute; on a custom property `replace` needs it to
 *   exist (else 409 `Property x does not exist.`), `add` creates or overwrites it (draft-4
 *   `add` of an existing property: 409 `Property x already present.`);
 * - `remove` deletes a custom property (missing: 409); a base attribute may not be removed (403);
 * - `owner` may only be changed by an admin (403 `Owner can't be updated by non admin.`);
 * - `disk_format` / `container_format` may only change while the image is `queued` (403);
 * - `visibility: public` needs `image:publicize_image`, `community` `image:communitize_image`.
 *
 * Every change needs `image:modify_image` (checked by the caller, see `./images.ts`).
 */
import { ConflictError, ForbiddenError, InvalidInputError } from '../errors.ts';
import { checkValue, checkWritableName, uniqueTags, WRITABLE_ATTRIBUTES } from './attributes.ts';
import type { Image, Visibility } from './model.ts';
import type { ImageAttributes } from './ports.ts';

/** One operation of an image PATCH, with the attribute name decoded from its JSON pointer. */
export interface ImageChange {
  readonly op: 'add' | 'replace' | 'remove';
  /** The attribute name (the pointer's only token). */
  readonly path: string;
  /** The new value (absent for `remove`). */
  readonly value?: unknown;
}

/** What applying changes needs to know about the caller. */
export interface PatchContext {
  /** True for an admin (may change `owner`). */
  readonly admin: boolean;
  /** True for the v2.0 (draft 4) patch media type: `add` of an existing property is a conflict. */
  readonly draft4: boolean;
  /** Require the policy for a new visibility (publicize/communitize); throws ForbiddenError. */
  authorizeVisibility(visibility: Visibility): void;
}

/**
 * Check the names and values of changes before anything is looked up (Glance validates the
 * patch document in its deserializer, before the controller runs).
 * @throws ForbiddenError for read-only or reserved names; InvalidInputError for bad values
 */
export function checkChanges(changes: readonly ImageChange[]): void {
  for (const change of changes) {
    checkWritableName(change.path);
    if (change.op !== 'remove') checkValue(change.path, change.value);
  }
}

/** The writable attributes of an image, as a mutable working copy. */
function attributesOf(
  image: Image,
): { -readonly [K in keyof ImageAttributes]: ImageAttributes[K] } & { properties: Record<string, string>; tags: string[] } {
  return {
    name: image.name,
    visibility: image.visibility,
    protected: image.protected,
    os_hidden: image.os_hidden,
    owner: image.owner,
    disk_format: image.disk_format,
    container_format: image.container_format,
    min_disk: image.min_disk,
    min_ram: image.min_ram,
    properties: { ...image.properties },
    tags: [...image.tags],
  };
}

/**
 * Apply checked changes to an image's attributes, in order.
 * @returns the new attributes (the image itself is not modified)
 * @throws ForbiddenError, ConflictError as listed in the module comment
 */
export function applyChanges(image: Image, changes: readonly ImageChange[], pc: PatchContext): ImageAttributes {
  const a = attributesOf(image);
  for (const change of changes) {
    const name = change.path;
    const base = WRITABLE_ATTRIBUTES.includes(name);
    if (change.op === 'remove') {
      if (base) throw new ForbiddenError(`Property ${name} may not be removed.`, 'Forbidden');
      if (!Object.hasOwn(a.properties, name)) throw propertyConflict(`Property ${name} does not exist.`);
      delete a.properties[name];
      continue;
    }
    if (!base) {
      const exists = Object.hasOwn(a.properties, name);
      if (change.op === 'replace' && !exists) throw propertyConflict(`Property ${name} does not exist.`);
      if (change.op === 'add' && exists && pc.draft4) throw propertyConflict(`Property ${name} already present.`);
      a.properties[name] = change.value as string;
      continue;
    }
    setBase(a, image, name, change.value, pc, change.op === 'add');
  }
  return a;
}

/** Set one writable base attribute (value already checked against the schema). */
function setBase(a: ReturnType<typeof attributesOf>, image: Image, name: string, value: unknown, pc: PatchContext, isAdd: boolean): void {
  switch (name) {
    case 'name':
      a.name = value as string | null;
      return;
    case 'visibility':
      pc.authorizeVisibility(value as Visibility);
      a.visibility = value as Visibility;
      return;
    case 'protected':
      a.protected = value as boolean;
      return;
    case 'os_hidden':
      a.os_hidden = value as boolean;
      return;
    case 'owner':
      // Glance refuses `replace /owner` for non-admins; esi refuses `add /owner` alike.
      if (!pc.admin) throw new ForbiddenError("Owner can't be updated by non admin.", 'Forbidden');
      a.owner = value as string | null;
      return;
    case 'disk_format':
    case 'container_format':
      if (image.status !== 'queued') throw new ForbiddenError(`Attribute ${name} can be only replaced for a queued image.`, 'Forbidden');
      if (name === 'disk_format') a.disk_format = value as string | null;
      else a.container_format = value as string | null;
      return;
    case 'min_ram':
      a.min_ram = value as number;
      return;
    case 'min_disk':
      a.min_disk = value as number;
      return;
    case 'tags':
      a.tags = uniqueTags(value as string[]);
      return;
    default:
      throw new InvalidInputError(`Attribute ${name} cannot be ${isAdd ? 'added' : 'replaced'}.`, 'InvalidObject');
  }
}

/** A change that clashes with the image's properties: Glance answers 409. */
function propertyConflict(message: string): ConflictError {
  return new ConflictError(message, 'PropertyConflict');
}
