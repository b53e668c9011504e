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
import { jsonObject, parsePatch, readMemberBody, readMemberStatusBody, type PATCH_MEDIA_TYPES } from './wire.ts';

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

/**
 * The attributes of the member document a member body may echo (openstacksdk sends them back
 * with the status); ./wire.ts refuses any other.
 */
const memberEcho = {
  member_id: Type.Optional(Type.Unknown()),
  image_id: Type.Optional(Type.Unknown()),
  created_at: Type.Optional(Type.Unknown()),
  updated_at: Type.Optional(Type.Unknown()),
  schema: Type.Optional(Type.Unknown()),
};

/** `POST /v2/images/{id}/members` (Glance's image-members api-ref, "Create image member"): the project to share with. */
export const MemberCreateBody = Type.Object(
  {
    member: Type.String({ minLength: 1, maxLength: 255, description: 'the project id' }),
    status: Type.Optional(Type.Unknown()),
    ...memberEcho,
  },
  { additionalProperties: false },
);

/** `PUT /v2/images/{id}/members/{member}` (Glance's api-ref, "Update image member"): the member's answer. */
export const MemberStatusBody = Type.Object(
  {
    status: Type.String({ description: 'pending, accepted or rejected' }),
    member: Type.Optional(Type.String({ description: 'the member of the URL, if given' })),
    ...memberEcho,
  },
  { additionalProperties: false },
);

const memberCreateCheck = TypeCompiler.Compile(MemberCreateBody);
const memberStatusCheck = TypeCompiler.Compile(MemberStatusBody);

/**
 * The body of `POST /v2/images/{id}/members`, checked against {@link MemberCreateBody}; a
 * refusal is ./wire.ts `readMemberBody`'s (Glance's words).
 * @throws InvalidInputError (400)
 */
export function parseMemberCreate(body: unknown): Static<typeof MemberCreateBody> {
  readMemberBody(body);
  if (memberCreateCheck.Check(body)) return body;
  throw new InvalidInputError('Expected a member in the form: {"member": "image_id"}', 'InvalidInput');
}

/**
 * The body of `PUT /v2/images/{id}/members/{member}`, checked against {@link MemberStatusBody};
 * a refusal is ./wire.ts `readMemberStatusBody`'s (Glance's words).
 * @param memberId the member of the URL (a `member` in the body must name it)
 * @throws InvalidInputError (400)
 */
export function parseMemberStatus(body: unknown, memberId: string): Static<typeof MemberStatusBody> {
  readMemberStatusBody(body, memberId);
  if (memberStatusCheck.Check(body)) return body;
  throw new InvalidInputError('Expected a status in the form: {"status": "status"}', 'InvalidInput');
}

/**
 * `PUT /v2/images/{id}/file` (Glance's api-ref, "Upload binary image data"): the image's bytes
 * as `application/octet-stream`, streamed to the store unread (./routes-data.ts).
 */
export const ImageData = Type.String({ format: 'binary', description: 'the image data' });
