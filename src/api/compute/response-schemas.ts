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

const Time = Type.String({ description: 'ISO 8601, Z' });
const TimeOrNull = Type.Union([Time, Type.Null()]);
const Opt = Type.Optional;

/**
 * A server in full (`GET /servers/{id}`, items of `/servers/detail`): the `OS-EXT-SRV-ATTR:*`
 * attributes and `host_status` for admins only; `progress` while building or active; `fault`
 * when in error; `esi:node` (esi's) when the caller may see the node.
 */
export const ServerObject = Type.Object(
  {
    id: Str,
    name: Str,
    status: Str,
    tenant_id: Str,
    user_id: Str,
    metadata: Type.Record(Type.String(), Type.String()),
    hostId: Str,
    image: Type.Union([Type.Literal(''), Type.Object({ id: Str, links: Links }, strict)]),
    flavor: Type.Object(
      {
        vcpus: Type.Integer(),
        ram: Type.Integer(),
        disk: Type.Integer(),
        ephemeral: Type.Integer(),
        swap: Type.Integer(),
        original_name: Str,
        extra_specs: Type.Record(Type.String(), Type.String()),
      },
      strict,
    ),
    created: Time,
    updated: Time,
    addresses: Type.Object({}, { additionalProperties: true }),
    accessIPv4: Str,
    accessIPv6: Str,
    links: Links,
    'OS-DCF:diskConfig': Str,
    'OS-EXT-AZ:availability_zone': Str,
    config_drive: Str,
    key_name: StrOrNull,
    'OS-SRV-USG:launched_at': TimeOrNull,
    'OS-SRV-USG:terminated_at': TimeOrNull,
    'OS-EXT-STS:task_state': StrOrNull,
    'OS-EXT-STS:vm_state': Str,
    'OS-EXT-STS:power_state': Type.Integer(),
    'os-extended-volumes:volumes_attached': Type.Array(Type.Object({}, { additionalProperties: true })),
    security_groups: Type.Array(Type.Object({ name: Str }, strict)),
    progress: Opt(Type.Integer()),
    fault: Opt(Type.Object({ code: Type.Integer(), created: TimeOrNull, message: Str, details: Opt(Str) }, strict)),
    'OS-EXT-SRV-ATTR:host': Opt(StrOrNull),
    'OS-EXT-SRV-ATTR:instance_name': Opt(Str),
    'OS-EXT-SRV-ATTR:hypervisor_hostname': Opt(StrOrNull),
    'OS-EXT-SRV-ATTR:reservation_id': Opt(Str),
    'OS-EXT-SRV-ATTR:launch_index': Opt(Type.Integer()),
    'OS-EXT-SRV-ATTR:hostname': Opt(StrOrNull),
    'OS-EXT-SRV-ATTR:kernel_id': Opt(Str),
    'OS-EXT-SRV-ATTR:ramdisk_id': Opt(Str),
    'OS-EXT-SRV-ATTR:root_device_name': Opt(Type.Null()),
    'OS-EXT-SRV-ATTR:user_data': Opt(Type.Null()),
    host_status: Opt(Str),
    locked: Type.Boolean(),
    description: StrOrNull,
    tags: Type.Array(Str),
    trusted_image_certificates: Type.Null(),
    server_groups: Type.Array(Str),
    locked_reason: Type.Null(),
    'esi:node': Opt(Str),
  },
  strict,
);

/** `GET /servers/{id}`. */
export const ServerResponse = Type.Object({ server: ServerObject }, strict);

/** `GET /servers`: id, name and links of each. */
export const ServerCollection = Type.Object(
  { servers: Type.Array(Type.Object({ id: Str, name: Str, links: Links }, strict)), servers_links: PageLinks },
  strict,
);

/** `GET /servers/detail`. */
export const ServerDetailCollection = Type.Object({ servers: Type.Array(ServerObject), servers_links: PageLinks }, strict);

/** `POST /servers` (202): the new server's id and links, or `{reservation_id}` when asked for. */
export const ServerCreateResponse = Type.Union([
  Type.Object(
    {
      server: Type.Object(
        { id: Str, links: Links, 'OS-DCF:diskConfig': Str, security_groups: Type.Array(Type.Object({ name: Str }, strict)) },
        strict,
      ),
    },
    strict,
  ),
  Type.Object({ reservation_id: Str }, strict),
]);
