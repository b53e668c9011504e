/**
 * Response schemas of the image API (TypeBox), for the document (`/openapi/image.json`): the
 * image as Glance v2 shows it (`glance/api/v2/images.py` response serializer; ./render.ts writes
 * it) and the image list. The same facts as the `/v2/schemas/image` document Glance clients read
 * (./schemas.ts), as a JSON schema for OpenAPI.
 *
 * Every named attribute is always there (null when unset); custom properties sit beside them at
 * the top level and are strings, so the image admits additional string properties only
 * (test/api/ops/openapi-responses.test.ts checks real answers against these schemas).
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { CONTAINER_FORMATS, DISK_FORMATS, IMAGE_STATUSES, MEMBER_STATUSES, VISIBILITIES } from '../../domain/images/index.ts';

const Str = Type.String();
const StrOrNull = Type.Union([Type.String(), Type.Null()]);
const IntOrNull = Type.Union([Type.Integer(), Type.Null()]);
/** Glance's time: ISO 8601 to the second, `Z`. */
const Time = Type.String({ description: 'ISO 8601, seconds, Z' });
const oneOf = (values: readonly string[]): TSchema => Type.Union(values.map((v) => Type.Literal(v)));
const oneOfOrNull = (values: readonly string[]): TSchema => Type.Union([...values.map((v) => Type.Literal(v)), Type.Null()]);

/** An image (`GET /v2/images/{id}`, `POST /v2/images`, `PATCH /v2/images/{id}`, an item of the list). */
export const ImageResponse = Type.Object(
  {
    name: StrOrNull,
    disk_format: oneOfOrNull(DISK_FORMATS),
    container_format: oneOfOrNull(CONTAINER_FORMATS),
    visibility: oneOf(VISIBILITIES),
    size: IntOrNull,
    virtual_size: IntOrNull,
    status: oneOf(IMAGE_STATUSES),
    checksum: StrOrNull,
    protected: Type.Boolean(),
    min_ram: Type.Integer(),
    min_disk: Type.Integer(),
    owner: StrOrNull,
    os_hidden: Type.Boolean(),
    os_hash_algo: StrOrNull,
    os_hash_value: StrOrNull,
    id: Str,
    created_at: Time,
    updated_at: Time,
    tags: Type.Array(Str),
    self: Type.String({ description: 'relative link to the image' }),
    file: Type.String({ description: 'relative link to its data' }),
    schema: Type.String({ description: 'relative link to the image schema' }),
  },
  { additionalProperties: Type.String({ description: 'a custom property' }) },
);

/** `GET /v2/images`: a page, with `first` and (when there may be more) `next` relative links. */
export const ImageCollection = Type.Object(
  { images: Type.Array(ImageResponse), first: Str, next: Type.Optional(Str), schema: Str },
  { additionalProperties: false },
);

/** An image member (Glance's image-members api-ref; `glance/api/v2/image_members.py` serializer). */
export const MemberResponse = Type.Object(
  {
    member_id: Type.String({ description: 'the project the image is shared with' }),
    image_id: Str,
    status: oneOf(MEMBER_STATUSES),
    created_at: Time,
    updated_at: Time,
    schema: Type.Literal('/v2/schemas/member'),
  },
  { additionalProperties: false },
);

/** `GET /v2/images/{id}/members`: the image's members. */
export const MemberCollection = Type.Object(
  { members: Type.Array(MemberResponse), schema: Type.Literal('/v2/schemas/members') },
  { additionalProperties: false },
);

/** A link of a schema document (`{"rel": "self", "href": "{self}"}`). */
const SchemaLink = Type.Object({ rel: Str, href: Str }, { additionalProperties: false });

/**
 * `GET /v2/schemas/{image,images,member,members}` (Glance's api-ref, "Image Schemas"): a JSON
 * schema document — its name, the properties of the document it describes (each a JSON
 * schema), and, for some, `additionalProperties` and links (./schemas.ts writes them).
 */
export const SchemaDocumentResponse = Type.Object(
  {
    name: Str,
    properties: Type.Record(Type.String(), Type.Object({}, { additionalProperties: true })),
    additionalProperties: Type.Optional(Type.Object({ type: Str }, { additionalProperties: false })),
    links: Type.Optional(Type.Array(SchemaLink)),
  },
  { additionalProperties: false },
);
