/**
 * Neutron JSON of each resource (the attributes of the Neutron API reference for networks with
 * `provider` and `external-net`, subnets, ports with `binding`, trunks, routers and RBAC
 * policies; `tenant_id` is echoed beside `project_id` as Neutron does). Attributes the caller
 * may not read are left out, as Neutron's policy engine does; attributes esi does not
 * implement have their neutral values (`availability_zones: []`, `security_groups: []`,
 * `routes: []`…).
 */
import {
  rangeText,
  type NetworkView,
  type NodeNetworkRow,
  type PortView,
  type RbacPolicy,
  type Subnet,
  type Switch,
  type SwitchPortView,
  type Trunk,
  type TrunkRow,
} from '../../domain/networking/index.ts';
import type { RowForward } from '../../domain/networking/node-network-rows.ts';
import { neutronTime } from './wire.ts';

/** The standard attributes of a Neutron resource (name, project, description, tags, timestamps, revision). */
export function standard(r: {
  id: string;
  name: string;
  description: string;
  project_id: string;
  created_at: number;
  updated_at: number;
  revision_number: number;
}) {
  return {
    id: r.id,
    name: r.name,
    tenant_id: r.project_id,
    project_id: r.project_id,
    description: r.description,
    tags: [] as string[],
    created_at: neutronTime(r.created_at),
    updated_at: neutronTime(r.updated_at),
    revision_number: r.revision_number,
  };
}

/** A network. */
export function renderNetwork(v: NetworkView): Record<string, unknown> {
  const n = v.network;
  return {
    ...standard(n),
    admin_state_up: n.admin_state_up,
    status: n.status,
    mtu: n.mtu,
    shared: v.shared,
    subnets: [...v.subnets],
    availability_zone_hints: [],
    availability_zones: [],
    ipv4_address_scope: null,
    ipv6_address_scope: null,
    'router:external': n.router_external,
    l2_adjacency: true,
    ...(v.showProvider
      ? {
          'provider:network_type': n.network_type,
          'provider:physical_network': n.physical_network,
          'provider:segmentation_id': n.segmentation_id,
        }
      : {}),
  };
}

/** A subnet. */
export function renderSubnet(s: Subnet): Record<string, unknown> {
  return {
    ...standard(s),
    network_id: s.network_id,
    ip_version: s.ip_version,
    cidr: s.cidr,
    gateway_ip: s.gateway_ip,
    allocation_pools: s.allocation_pools,
    enable_dhcp: s.enable_dhcp,
    dns_nameservers: s.dns_nameservers,
    host_routes: s.host_routes,
    ipv6_address_mode: null,
    ipv6_ra_mode: null,
    subnetpool_id: null,
    segment_id: null,
    service_types: [],
  };
}

/** A port. */
export function renderPort(v: PortView): Record<string, unknown> {
  const p = v.port;
  const out: Record<string, unknown> = {
    ...standard(p),
    network_id: p.network_id,
    mac_address: p.mac_address,
    admin_state_up: p.admin_state_up,
    status: p.status,
    device_owner: p.device_owner,
    device_id: p.device_id,
    fixed_ips: p.fixed_ips,
    allowed_address_pairs: [],
    extra_dhcp_opts: [],
    security_groups: [],
    'binding:vnic_type': p.binding_vnic_type,
    'binding:host_id': p.binding_host_id,
    'binding:profile': p.binding_profile,
    'binding:vif_type': p.binding_vif_type,
    'binding:vif_details': p.binding_vif_details,
  };
  for (const h of v.hidden) delete out[h];
  if (v.trunkDetails) out.trunk_details = v.trunkDetails;
  return out;
}

/** A trunk. */
export function renderTrunk(t: Trunk): Record<string, unknown> {
  return { ...standard(t), port_id: t.port_id, admin_state_up: t.admin_state_up, status: t.status, sub_ports: t.sub_ports };
}

/** An RBAC policy. */
export function renderRbac(r: RbacPolicy): Record<string, unknown> {
  return {
    id: r.id,
    tenant_id: r.project_id,
    project_id: r.project_id,
    object_type: r.object_type,
    object_id: r.object_id,
    action: r.action,
    target_tenant: r.target_tenant,
    target_project: r.target_tenant,
  };
}

/** A switch (secrets already masked by the domain). */
export function renderSwitch(s: Switch): Record<string, unknown> {
  return {
    id: s.id,
    name: s.name,
    switch_id: s.switch_id,
    description: s.description,
    driver: s.driver,
    driver_info: s.driver_info,
    flat_vlan: s.flat_vlan,
    created_at: neutronTime(s.created_at),
    updated_at: neutronTime(s.updated_at),
  };
}

/** A port of a switch with its reconciliation state. */
export function renderSwitchPort(p: SwitchPortView): Record<string, unknown> {
  return {
    port_id: p.port_id,
    baremetal_port_uuid: p.baremetal_port,
    node_uuid: p.node_uuid,
    registered_node_uuid: p.registered_node_uuid,
    vif: p.vif,
    desired: p.desired,
    status: p.state?.status ?? null,
    applied: p.state?.applied ?? null,
    last_error: p.state?.last_error ?? null,
    updated_at: p.state ? neutronTime(p.state.updated_at) : null,
  };
}

/**
 * A row of `esi node network list` (src/domain/networking/node-network-rows.ts): the row's fields
 * as they are, its floating IP's forwards with Neutron's port forwarding keys —
 * `internal_port`/`external_port` only for one port, `internal_port_range`/`external_port_range`
 * (`"first:last"`) always.
 */
export function renderNodeNetwork(r: NodeNetworkRow): Record<string, unknown> {
  const f = r.floating_ip;
  // The row's fields in the row's order, built without a spread: the listing renders 2,000 rows.
  return {
    node: r.node,
    node_uuid: r.node_uuid,
    baremetal_port_uuid: r.baremetal_port_uuid,
    mac_address: r.mac_address,
    network_port: r.network_port,
    trunk: r.trunk,
    networks: r.networks,
    floating_ip: f && {
      id: f.id,
      floating_ip_address: f.floating_ip_address,
      port_forwardings: f.port_forwardings.length === 0 ? [] : f.port_forwardings.map(renderRowForward),
    },
    floating_network: r.floating_network,
  };
}

/** A forward of a row's floating IP with Neutron's port forwarding keys (see {@link renderNodeNetwork}). */
function renderRowForward(pf: RowForward): Record<string, unknown> {
  return {
    id: pf.id,
    protocol: pf.protocol,
    internal_ip_address: pf.internal_ip_address,
    ...(pf.internal_port[0] === pf.internal_port[1] ? { internal_port: pf.internal_port[0] } : {}),
    ...(pf.external_port[0] === pf.external_port[1] ? { external_port: pf.external_port[0] } : {}),
    internal_port_range: rangeText(pf.internal_port),
    external_port_range: rangeText(pf.external_port),
  };
}

/** A row of `esi trunk list`. */
export function renderTrunkRow(r: TrunkRow): Record<string, unknown> {
  return { ...r };
}
