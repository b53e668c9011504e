/**
 * Request body schemas of the image API (TypeBox) and the parser of the create body: Glance's
 * image schema (`glance/api/v2/images.py` `get_base_properties`, "permissive": additional
 * properties are custom properties, strings) for `POST /v2/images`, and the JSON-patch
 * documents of `PATCH /v2/images/{id}` in both media types (./wire.ts `parsePatch` reads them).
 *
 * A body the create schema refuses is Glance's 400 with Glance's words: the domain's value check
 * of the attribute at fault (src/domain/images/attributes.ts `checkValue`) says it
 * (`Provided object does not match schema 'image': 7 is not of type 'null', 'string'`). Names a
 * client may not write are refused before any value, with Glance's 403, as Glance does.
 * Values are checked here for shape; ranges (`min_ram` ≥ 0) are the domain's.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { CONTAINER_FORMATS, DISK_FORMATS, PROPERTY_VALUE_MAX, STRING_MAX, VISIBILITIES } from '../../domain/images/index.ts';
import { checkCreateNames, checkValue } from '../../domain/images/attributes.ts';
import { InvalidInputError } from '../../domain/errors.ts';
import type { ImageChange } from '../../domain/images/index.ts';
import { jsonObject, parsePatch, type PATCH_MEDIA_TYPES } from './wire.ts';

const StrOrNull = Type.Union([Type.String({ maxLength: STRING_MAX }), Type.Null()]);
const oneOf = (values: readonly string[]): TSchema => Type.Union(values.map((v) => Type.Literal(v)));
const oneOfOrNull = (values: readonly string[]): TSchema => Type.Union([...values.map((v) => Type.Literal(v)), Type.Null()]);

/** `POST /v2/images`: the writable attributes, an `id` of the caller's choice, custom properties. */
export const ImageCreateBody = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$' })),
    name: Type.Optional(StrOrNull),
    visibility: Type.Optional(oneOf(VISIBILITIES)),
    protected: Type.Optional(Type.Boolean()),
    os_hidden: Type.Optional(Type.Boolean()),
    owner: Type.Optional(StrOrNull),
    disk_format: Type.Optional(oneOfOrNull(DISK_FORMATS)),
    container_format: Type.Optional(oneOfOrNull(CONTAINER_FORMATS)),
    min_ram: Type.Optional(Type.Integer({ description: 'MiB; not negative, at most 2^31 - 1' })),
    min_disk: Type.Optional(Type.Integer({ description: 'GiB; not negative, at most 2^31 - 1' })),
    tags: Type.Optional(Type.Array(Type.String({ maxLength: STRING_MAX }))),
  },
  { additionalProperties: Type.String({ maxLength: PROPERTY_VALUE_MAX, description: 'a custom property' }) },
);

/** One operation of the `…-v2.1-json-patch` media type (RFC 6902; one-level paths). */
const PatchOp = Type.Object(
  {
    op: Type.Union([Type.Literal('add'), Type.Literal('remove'), Type.Literal('replace')]),
    path: Type.String({ description: 'JSON pointer of one attribute or custom property: /name' }),
    value: Type.Optional(Type.Unknown({ description: 'not with remove' })),
  },
  { additionalProperties: true, description: 'other members are ignored (RFC 6902)' },
);

/** One operation of the `…-v2.0-json-patch` media type (draft 4: the op names the path). */
const Draft4PatchOp = Type.Union(
  (['add', 'remove', 'replace'] as const).map((op) =>
    Type.Object({ [op]: Type.String(), value: Type.Optional(Type.Unknown()) }, { additionalProperties: true }),
  ),
);

/** `PATCH /v2/images/{id}` in `application/openstack-images-v2.1-json-patch`. */
export const ImagePatchBody = Type.Array(PatchOp);

/** `PATCH /v2/images/{id}` in `application/openstack-images-v2.0-json-patch` (draft 4). */
export const ImagePatchDraft4Body = Type.Array(Draft4PatchOp);

/** The patch body schema of each JSON-patch media type, for the document. */
export const PATCH_BODIES: Readonly<Record<keyof typeof PATCH_MEDIA_TYPES, TSchema>> = {
  'application/openstack-images-v2.0-json-patch': ImagePatchDraft4Body,
  'application/openstack-images-v2.1-json-patch': ImagePatchBody,
};

const createCheck = TypeCompiler.Compile(ImageCreateBody);
const patchChecks = new Map(Object.entries(PATCH_BODIES).map(([type, schema]) => [type, TypeCompiler.Compile(schema)]));

/**
 * The body of `POST /v2/images`, checked against {@link ImageCreateBody}.
 * @throws InvalidInputError (400) `Body expected in request.`, a body that is no object, a
 *   value of the wrong shape (Glance's message); ForbiddenError (403) for a read-only or
 *   reserved name
 */
export function parseImageCreate(body: unknown): Static<typeof ImageCreateBody> {
  const attrs = jsonObject(body);
  checkCreateNames(Object.keys(attrs));
  if (createCheck.Check(attrs)) return attrs;
  const first = createCheck.Errors(attrs).First();
  const name = (first?.path ?? '').split('/')[1]?.replace(/~1/g, '/').replace(/~0/g, '~') ?? '';
  if (name !== '') checkValue(name, attrs[name]);
  throw new InvalidInputError(`Provided object does not match schema 'image': ${first?.message ?? 'invalid body'}`, 'InvalidObject');
}

/**
 * The changes of `PATCH /v2/images/{id}`: ./wire.ts `parsePatch` reads the document with
 * Glance's rules and messages; the document is then one {@link PATCH_BODIES} admits.
 * @param contentType the request's media type (parameters removed)
 * @throws ImageApiFault 415 for another media type; InvalidInputError (400, Glance's messages)
 */
export function parseImagePatch(contentType: string | undefined, body: unknown): { changes: ImageChange[]; draft4: boolean } {
  const parsed = parsePatch(contentType, body);
  const check = patchChecks.get(contentType ?? '');
  const first = check?.Errors(body).First();
  if (first !== undefined)
    throw new InvalidInputError(`Invalid JSON-patch document at ${first.path || '/'}: ${first.message}.`, 'InvalidInput');
  return parsed;
}
