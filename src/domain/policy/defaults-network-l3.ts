/**
 * esi's default policy, part 4: the Neutron L3 rules — routers, external networks, floating IPs
 * and their port forwardings (docs/networking.md "Routers and external networks", "Floating IPs
 * and port forwarding"), and the network quotas (src/domain/networking/quotas.ts). Merged into
 * `DEFAULT_RULES` by
 * `./defaults.ts`; the base rules they use (`admin_only`, `admin_or_owner`, `regular_user`)
 * are Neutron's, in `./defaults-openstack.ts`.
 *
 * Source: Neutron's legacy defaults (neutron/conf/policies/router.py, network.py, floatingip.py,
 * floatingip_port_forwarding.py and base.py, the rules before secure RBAC), with Neutron's rule
 * names so an operator's Neutron overrides apply: members manage their project's routers and
 * floating IPs and may set a gateway on an external network; the gateway's SNAT mode and its
 * fixed addresses, and a chosen floating address, are the operator's; a floating IP's port
 * forwardings belong to the floating IP's project. Targets: `project_id` (the router's or
 * floating IP's project), `ext_parent:project_id` (a port forwarding's floating IP's project)
 * and, for networks, `network:router:external` (True for an external network; Neutron's
 * `field:networks:router:external=True`).
 */

/** The router, external-network, floating IP and port forwarding rules. */
export const NETWORK_L3_RULES: Readonly<Record<string, string>> = Object.freeze({
  external: "'True':%(network:router:external)s",
  'update_network:router:external': 'rule:admin_only',
  create_router: 'rule:regular_user',
  'create_router:external_gateway_info': 'rule:admin_or_owner',
  'create_router:external_gateway_info:network_id': 'rule:admin_or_owner',
  'create_router:external_gateway_info:enable_snat': 'rule:admin_only',
  'create_router:external_gateway_info:external_fixed_ips': 'rule:admin_only',
  get_router: 'rule:admin_or_owner',
  update_router: 'rule:admin_or_owner',
  'update_router:external_gateway_info': 'rule:admin_or_owner',
  'update_router:external_gateway_info:network_id': 'rule:admin_or_owner',
  'update_router:external_gateway_info:enable_snat': 'rule:admin_only',
  'update_router:external_gateway_info:external_fixed_ips': 'rule:admin_only',
  delete_router: 'rule:admin_or_owner',
  add_router_interface: 'rule:admin_or_owner',
  remove_router_interface: 'rule:admin_or_owner',
  ext_parent_owner: 'project_id:%(ext_parent:project_id)s',
  admin_or_ext_parent_owner: 'rule:context_is_admin or rule:ext_parent_owner',
  create_floatingip: 'rule:regular_user',
  'create_floatingip:floating_ip_address': 'rule:admin_only',
  get_floatingip: 'rule:admin_or_owner',
  update_floatingip: 'rule:admin_or_owner',
  delete_floatingip: 'rule:admin_or_owner',
  create_floatingip_port_forwarding: 'rule:admin_or_ext_parent_owner',
  get_floatingip_port_forwarding: 'rule:admin_or_ext_parent_owner',
  update_floatingip_port_forwarding: 'rule:admin_or_ext_parent_owner',
  delete_floatingip_port_forwarding: 'rule:admin_or_ext_parent_owner',
  // Quotas (neutron/conf/policies/quotas.py, legacy): a project reads its own without a check.
  get_quota: 'rule:admin_only',
  update_quota: 'rule:admin_only',
  delete_quota: 'rule:admin_only',
});
