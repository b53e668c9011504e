/**
 * esi's default policy, part 4: the Neutron L3 rules — routers and external networks
 * (docs/networking.md "Routers and external networks"). Merged into `DEFAULT_RULES` by
 * `./defaults.ts`; the base rules they use (`admin_only`, `admin_or_owner`, `regular_user`)
 * are Neutron's, in `./defaults-openstack.ts`.
 *
 * Source: Neutron's legacy defaults (neutron/conf/policies/router.py and network.py, the rules
 * before secure RBAC), with Neutron's rule names so an operator's Neutron overrides apply:
 * members manage their project's routers and may set a gateway on an external network; the
 * gateway's SNAT mode and its fixed addresses are the operator's. Targets: `project_id` (the
 * router's project) and, for networks, `network:router:external` (True for an external
 * network; Neutron's `field:networks:router:external=True`).
 */

/** The router and external-network rules. */
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
});
