/**
 * More response schemas of the network API (TypeBox; ./response-schemas.ts has the core
 * collections): RBAC policies, port forwardings, trunk sub-ports, router interfaces, extensions
 * and quotas as the Neutron networking API reference shows them, and esi's additive endpoints
 * (node networks, esi trunks, switches and their ports; docs/networking.md), as
 * ./render.ts, routes-floatingips.ts, routes-quotas.ts and routes-esi.ts write them.
 *
 * Strict where the wire format is fixed (`additionalProperties: false`, every attribute
 * required unless the renderer leaves it out); test/api/ops/openapi-responses-network.test.ts
 * checks real answers against them. `fields` in a query shows a chosen few, which these schemas
 * do not describe.
 */
import { Type, type TObject } from '@sinclair/typebox';
import { QUOTA_RESOURCES } from '../../domain/networking/index.ts';
import { TrunkObject } from './response-schemas.ts';

const Str = Type.String();
const StrOrNull = Type.Union([Type.String(), Type.Null()]);
const IntOrNull = Type.Union([Type.Integer(), Type.Null()]);
const Dict = Type.Object({}, { additionalProperties: true });
/** Neutron's time: ISO 8601 in seconds with `Z`. */
const Time = Type.String({ description: 'ISO 8601, seconds, Z' });
const strict = { additionalProperties: false } as const;
const link = Type.Object({ rel: Str, href: Str }, strict);

/** `{"<collection>": [...], "<collection>_links"?: [...]}`: a Neutron list. */
function listOf(collection: string, object: TObject): TObject {
  return Type.Object({ [collection]: Type.Array(object), [`${collection}_links`]: Type.Optional(Type.Array(link)) }, strict);
}

/** An RBAC policy (Neutron `rbac-policies`: esi shares networks only). */
export const RbacPolicyObject = Type.Object(
  {
    id: Str,
    tenant_id: Str,
    project_id: Str,
    object_type: Type.Literal('network'),
    object_id: Str,
    action: Type.Union([Type.Literal('access_as_shared'), Type.Literal('access_as_external')]),
    target_tenant: Type.String({ description: 'a project id, or * for every project' }),
    target_project: Str,
  },
  strict,
);

/** The answers of the RBAC policy collection (Neutron's networking api-ref, "RBAC Policies"): one policy, a list. */
export const RBAC_RESPONSES = {
  one: Type.Object({ rbac_policy: RbacPolicyObject }, strict),
  list: listOf('rbac_policies', RbacPolicyObject),
};

/**
 * A port forwarding of a floating IP (Neutron `floating-ip-port-forwarding`, `-port-ranges`,
 * `-description`): `internal_port`/`external_port` only for one port, the ranges always.
 */
export const PortForwardingObject = Type.Object(
  {
    id: Str,
    protocol: Str,
    internal_ip_address: Str,
    internal_port_id: Str,
    internal_port: Type.Optional(Type.Integer()),
    external_port: Type.Optional(Type.Integer()),
    internal_port_range: Type.String({ description: 'first:last' }),
    external_port_range: Type.String({ description: 'first:last' }),
    description: Str,
  },
  strict,
);

/** The answers of `/floatingips/{id}/port_forwardings` (Neutron's api-ref, "Floating IPs port forwarding"). */
export const PORT_FORWARDING_RESPONSES = {
  one: Type.Object({ port_forwarding: PortForwardingObject }, strict),
  list: listOf('port_forwardings', PortForwardingObject),
};

/** A sub-port of a trunk, as `get_subports` lists it. */
const SubPort = Type.Object({ port_id: Str, segmentation_type: Type.Literal('vlan'), segmentation_id: Type.Integer() }, strict);

/** `GET /trunks/{id}/get_subports` (Neutron's api-ref, "List subports for trunk"). */
export const SubPortsResponse = Type.Object({ sub_ports: Type.Array(SubPort) }, strict);

/** `PUT /trunks/{id}/add_subports` and `remove_subports`: the trunk, unwrapped (Neutron's api-ref, "Trunk networking"). */
export const TrunkUnwrapped = TrunkObject;

/**
 * `PUT /routers/{id}/add_router_interface` and `remove_router_interface`: the interface info
 * (Neutron's api-ref, "Add interface to router"); `id` is the router's.
 */
export const RouterInterfaceInfo = Type.Object(
  {
    id: Str,
    tenant_id: Str,
    project_id: Str,
    port_id: Str,
    subnet_id: Str,
    subnet_ids: Type.Array(Str),
    network_id: Str,
  },
  strict,
);

/** An API extension (Neutron's api-ref, "Extensions"). */
const Extension = Type.Object({ alias: Str, name: Str, description: Str, updated: Str, links: Type.Array(Dict) }, strict);

/** `GET /v2.0/extensions`: the extensions esi implements. */
export const ExtensionCollection = Type.Object({ extensions: Type.Array(Extension) }, strict);

/** `GET /v2.0/extensions/{alias}`: one extension. */
export const ExtensionResponse = Type.Object({ extension: Extension }, strict);

/** A limit per quota resource esi enforces (`floatingip`, `router`; -1 for no limit). */
const limits = Object.fromEntries(QUOTA_RESOURCES.map((r) => [r, Type.Integer()]));

/** `GET /v2.0/quotas`: projects with limits set (Neutron's api-ref, "Quotas extension"). */
export const QuotaCollection = Type.Object(
  { quotas: Type.Array(Type.Object({ project_id: Str, tenant_id: Str, ...limits }, strict)) },
  strict,
);

/** `GET|PUT /v2.0/quotas/{project_id}` and `/default`: the limits. */
export const QuotaResponse = Type.Object({ quota: Type.Object(limits, strict) }, strict);

/** `GET /v2.0/quotas/{project_id}/details` (`quota_details`; `reserved` always 0 in esi). */
export const QuotaDetailsResponse = Type.Object(
  {
    quota: Type.Object(
      Object.fromEntries(
        QUOTA_RESOURCES.map((r) => [r, Type.Object({ limit: Type.Integer(), used: Type.Integer(), reserved: Type.Integer() }, strict)]),
      ),
      strict,
    ),
  },
  strict,
);

/** `GET /v2.0/quotas/project`: the caller's project. */
export const QuotaProjectResponse = Type.Object({ project: Type.Object({ project_id: Str }, strict) }, strict);

/** `GET /v2.0/quotas/tenant`: the caller's project, by its old name. */
export const QuotaTenantResponse = Type.Object({ tenant: Type.Object({ tenant_id: Str }, strict) }, strict);

/** A network on a node network row or an esi trunk: VLAN null when hidden from the caller. */
const RowNetwork = Type.Object(
  { id: Str, name: Str, vlan: IntOrNull, role: Type.Union([Type.Literal('native'), Type.Literal('tagged')]) },
  strict,
);

/** A forward of a row's floating IP (Neutron's port forwarding keys, without the internal port). */
const RowForward = Type.Object(
  {
    id: Str,
    protocol: Str,
    internal_ip_address: Str,
    internal_port: Type.Optional(Type.Integer()),
    external_port: Type.Optional(Type.Integer()),
    internal_port_range: Str,
    external_port_range: Str,
  },
  strict,
);

/**
 * A row of `esi node network list` (esi, docs/networking.md): a bare-metal port and what it
 * carries; `network_port` all null when the NIC is used by a port the caller may not see.
 */
export const NodeNetworkRow = Type.Object(
  {
    node: Str,
    node_uuid: Str,
    baremetal_port_uuid: Str,
    mac_address: Str,
    network_port: Type.Union([
      Type.Object(
        {
          id: StrOrNull,
          name: StrOrNull,
          status: StrOrNull,
          fixed_ips: Type.Array(Type.Object({ subnet_id: Str, ip_address: Str }, strict)),
          error: StrOrNull,
        },
        strict,
      ),
      Type.Null(),
    ]),
    trunk: Type.Union([Type.Object({ id: Str, name: Str }, strict), Type.Null()]),
    networks: Type.Array(RowNetwork),
    floating_ip: Type.Union([
      Type.Object({ id: Str, floating_ip_address: Str, port_forwardings: Type.Array(RowForward) }, strict),
      Type.Null(),
    ]),
    floating_network: Type.Union([Type.Object({ id: Str, name: Str, vlan: IntOrNull }, strict), Type.Null()]),
  },
  strict,
);

/** `GET /v2.0/esi/node-networks`: the rows; with `?node=` also the node (`esi node network show`). */
export const NodeNetworkCollection = Type.Object(
  { node: Type.Optional(Type.Object({ uuid: Str, name: StrOrNull }, strict)), node_networks: Type.Array(NodeNetworkRow) },
  strict,
);

/** `POST /v2.0/esi/node-networks`: the row of the attached port (`esi node network attach`). */
export const NodeNetworkResponse = Type.Object({ node_network: NodeNetworkRow }, strict);

/** `POST /v2.0/esi/node-networks/detach`: the ids of the ports detached. */
export const NodeNetworkDetachResponse = Type.Object({ detached: Type.Array(Str) }, strict);

/** `GET /v2.0/esi/switch-ports?switch=`: the rows of a switch's ports, each with its switch port name. */
export const SwitchPortRowCollection = Type.Object(
  { switch_ports: Type.Array(Type.Composite([Type.Object({ port: Str }), NodeNetworkRow], strict)) },
  strict,
);

/** A row of `esi trunk list`: the parent port, its sub-ports and networks (native first). */
export const EsiTrunkRow = Type.Object(
  {
    id: Str,
    name: Str,
    status: Str,
    port: Type.Object({ id: Str, name: StrOrNull }, strict),
    sub_ports: Type.Array(Type.Object({ id: Str, name: StrOrNull, segmentation_id: Type.Integer() }, strict)),
    networks: Type.Array(RowNetwork),
  },
  strict,
);

/** `GET /v2.0/esi/trunks`. */
export const EsiTrunkCollection = Type.Object({ trunks: Type.Array(EsiTrunkRow) }, strict);

/** `POST /v2.0/esi/trunks` and `…/add-networks`, `…/remove-networks`: the trunk's row. */
export const EsiTrunkResponse = Type.Object({ trunk: EsiTrunkRow }, strict);

/** A switch (esi; secret `driver_info` values shown as `******`). */
export const SwitchObject = Type.Object(
  {
    id: Str,
    name: Str,
    switch_id: Str,
    description: Str,
    driver: Type.Union([Type.Literal('linux-bridge'), Type.Literal('ssh-cli'), Type.Literal('fake')]),
    driver_info: Dict,
    flat_vlan: Type.Integer(),
    created_at: Time,
    updated_at: Time,
  },
  strict,
);

/** `GET /v2.0/switches`. */
export const SwitchCollection = Type.Object({ switches: Type.Array(SwitchObject) }, strict);

/** `POST /v2.0/switches`, `GET|PUT /v2.0/switches/{switch}`. */
export const SwitchResponse = Type.Object({ switch: SwitchObject }, strict);

/** `POST /v2.0/switches/{switch}/resync`: how many ports were re-applied. */
export const SwitchResyncResponse = Type.Object({ resynced: Type.Integer() }, strict);

/** A switch port's configuration: quarantine, an access VLAN or a trunk. */
const SwitchPortConfig = Type.Union([
  Type.Object({ mode: Type.Literal('quarantine') }, strict),
  Type.Object({ mode: Type.Literal('access'), vlan: Type.Integer() }, strict),
  Type.Object({ mode: Type.Literal('trunk'), native_vlan: IntOrNull, allowed_vlans: Type.Array(Type.Integer()) }, strict),
]);

/** A port of a switch with its reconciliation state (null fields before the first reconcile). */
export const SwitchPortObject = Type.Object(
  {
    port_id: Str,
    baremetal_port_uuid: StrOrNull,
    node_uuid: StrOrNull,
    registered_node_uuid: StrOrNull,
    vif: StrOrNull,
    desired: SwitchPortConfig,
    status: Type.Union([Type.Literal('pending'), Type.Literal('applied'), Type.Literal('failed'), Type.Null()]),
    applied: Type.Union([SwitchPortConfig, Type.Null()]),
    last_error: StrOrNull,
    updated_at: Type.Union([Time, Type.Null()]),
  },
  strict,
);

/** `GET /v2.0/switches/{switch}/ports`. */
export const SwitchPortCollection = Type.Object({ switch_ports: Type.Array(SwitchPortObject) }, strict);

/** `POST /v2.0/switches/{switch}/ports`: the registered port. */
export const SwitchPortResponse = Type.Object({ switch_port: SwitchPortObject }, strict);
