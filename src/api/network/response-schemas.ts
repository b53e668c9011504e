/**
 * Response schemas of the network API (TypeBox), for the document (`/openapi/network.json`):
 * the network and the port as Neutron shows them (the Neutron API reference's attributes with
 * the `provider`, `external-net`, `binding` and `trunk-details` extensions; ./render.ts writes
 * them), each in its wrapper (`{"network": {...}}`), and their collections.
 *
 * Attributes the caller may not read are left out, as Neutron's policy engine does (provider
 * attributes and bindings for admins only), so those are optional; every other attribute is
 * required. The wire format is fixed: `additionalProperties: false`
 * (test/api/ops/openapi-responses.test.ts checks real answers against them). `fields` in a query
 * shows a chosen few, which these schemas do not describe.
 */
import { Type, type TObject } from '@sinclair/typebox';

const Str = Type.String();
const StrOrNull = Type.Union([Type.String(), Type.Null()]);
const Dict = Type.Object({}, { additionalProperties: true });
/** Neutron's time: ISO 8601 in seconds with `Z`. */
const Time = Type.String({ description: 'ISO 8601, seconds, Z' });
const strict = { additionalProperties: false } as const;

/** The standard attributes of a Neutron resource. */
const standard = {
  id: Str,
  name: Str,
  tenant_id: Str,
  project_id: Str,
  description: Str,
  tags: Type.Array(Str),
  created_at: Time,
  updated_at: Time,
  revision_number: Type.Integer(),
};

/** A network. */
export const NetworkObject = Type.Object(
  {
    ...standard,
    admin_state_up: Type.Boolean(),
    status: Str,
    mtu: Type.Integer(),
    shared: Type.Boolean(),
    subnets: Type.Array(Str),
    availability_zone_hints: Type.Array(Str),
    availability_zones: Type.Array(Str),
    ipv4_address_scope: StrOrNull,
    ipv6_address_scope: StrOrNull,
    'router:external': Type.Boolean(),
    l2_adjacency: Type.Boolean(),
    'provider:network_type': Type.Optional(Str),
    'provider:physical_network': Type.Optional(StrOrNull),
    'provider:segmentation_id': Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  },
  strict,
);

/** A sub-port of a trunk (`trunk_details.sub_ports`). */
const SubPort = Type.Object({ segmentation_id: Type.Integer(), segmentation_type: Str, port_id: Str, mac_address: Str }, strict);

/** A port. */
export const PortObject = Type.Object(
  {
    ...standard,
    network_id: Str,
    mac_address: Str,
    admin_state_up: Type.Boolean(),
    status: Str,
    device_owner: Str,
    device_id: Str,
    fixed_ips: Type.Array(Type.Object({ subnet_id: Str, ip_address: Str }, strict)),
    allowed_address_pairs: Type.Array(Dict),
    extra_dhcp_opts: Type.Array(Dict),
    security_groups: Type.Array(Str),
    'binding:vnic_type': Str,
    'binding:host_id': Type.Optional(Str),
    'binding:profile': Type.Optional(Dict),
    'binding:vif_type': Type.Optional(Str),
    'binding:vif_details': Type.Optional(Dict),
    trunk_details: Type.Optional(Type.Object({ trunk_id: Str, sub_ports: Type.Array(SubPort) }, strict)),
  },
  strict,
);

/** `{"<resource>": object}`: the answer of show, create and update. */
function wrapped(resource: string, object: TObject): TObject {
  return Type.Object({ [resource]: object }, strict);
}

/** `{"<collection>": [...], "<collection>_links"?: [{rel, href}]}`: the answer of a list. */
function listOf(collection: string, object: TObject): TObject {
  const link = Type.Object({ rel: Str, href: Str }, strict);
  return Type.Object({ [collection]: Type.Array(object), [`${collection}_links`]: Type.Optional(Type.Array(link)) }, strict);
}

/** The answers of the network collection: one network, a list. */
export const NETWORK_RESPONSES = { one: wrapped('network', NetworkObject), list: listOf('networks', NetworkObject) };

/** The answers of the port collection: one port, a list. */
export const PORT_RESPONSES = { one: wrapped('port', PortObject), list: listOf('ports', PortObject) };
