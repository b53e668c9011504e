/**
 * Response schemas of the compute API (TypeBox), for the document (`/openapi/compute.json`): the
 * flavor and the key pair as Nova shows them at the newest microversion esi serves
 * (`OpenStack-API-Version: compute 2.90`; ./render.ts writes them), and their lists (Nova API
 * reference, https://docs.openstack.org/api-ref/compute/). Older microversions show fewer
 * fields (no `description` before 2.55, `swap` as `""` for none before 2.75, no `extra_specs`
 * before 2.61, no key pair `type` before 2.2).
 *
 * The wire format is fixed: `additionalProperties: false`, every field required
 * (test/api/ops/openapi-responses.test.ts checks real answers against them).
 */
import { Type, type TObject } from '@sinclair/typebox';

const Str = Type.String();
const StrOrNull = Type.Union([Type.String(), Type.Null()]);
const strict = { additionalProperties: false } as const;
/** `self` and `bookmark` links. */
const Links = Type.Array(Type.Object({ rel: Str, href: Str }, strict));
/** A `next` link of a full page. */
const PageLinks = Type.Optional(Type.Array(Type.Object({ rel: Str, href: Str }, strict)));

/** A flavor in full (`GET /flavors/{id}`, `POST /flavors`, items of `/flavors/detail`). */
export const FlavorObject = Type.Object(
  {
    id: Str,
    name: Str,
    ram: Type.Integer(),
    disk: Type.Integer(),
    vcpus: Type.Integer(),
    'OS-FLV-EXT-DATA:ephemeral': Type.Integer(),
    'OS-FLV-DISABLED:disabled': Type.Boolean(),
    swap: Type.Integer(),
    rxtx_factor: Type.Number(),
    'os-flavor-access:is_public': Type.Boolean(),
    links: Links,
    description: StrOrNull,
    extra_specs: Type.Record(Type.String(), Type.String()),
  },
  strict,
);

/** A flavor as `GET /flavors` lists it. */
export const FlavorSummary = Type.Object({ id: Str, name: Str, links: Links, description: StrOrNull }, strict);

/** `{"flavor": …}`: show, create, update. */
export const FlavorResponse = Type.Object({ flavor: FlavorObject }, strict);

/** A flavor list of `item`s, with a `next` link when the page is full. */
function flavorList(item: TObject): TObject {
  return Type.Object({ flavors: Type.Array(item), flavors_links: PageLinks }, strict);
}
/** `GET /flavors`. */
export const FlavorCollection = flavorList(FlavorSummary);
/** `GET /flavors/detail`. */
export const FlavorDetailCollection = flavorList(FlavorObject);

const keypairBase = { name: Str, public_key: Str, fingerprint: Str, type: Type.Literal('ssh') };

/** `POST /os-keypairs`: the private key only when esi generated the pair. */
export const KeypairCreateResponse = Type.Object(
  { keypair: Type.Object({ ...keypairBase, user_id: Str, private_key: Type.Optional(Str) }, strict) },
  strict,
);

/** `GET /os-keypairs/{name}`. */
export const KeypairResponse = Type.Object(
  {
    keypair: Type.Object(
      {
        ...keypairBase,
        user_id: Str,
        id: Type.Integer(),
        created_at: Type.String({ description: 'ISO 8601, Z' }),
        updated_at: Type.Null(),
        deleted_at: Type.Null(),
        deleted: Type.Literal(false),
      },
      strict,
    ),
  },
  strict,
);

/** `GET /os-keypairs`: each item wrapped in `keypair`. */
export const KeypairCollection = Type.Object(
  { keypairs: Type.Array(Type.Object({ keypair: Type.Object(keypairBase, strict) }, strict)), keypairs_links: PageLinks },
  strict,
);
