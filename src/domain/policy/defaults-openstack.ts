/**
 * esi's default policy, part 3: the rules of the other OpenStack services esi speaks —
 * Keystone (identity), Glance (images), Neutron (networks, esi's switch rules) and Nova
 * (compute). Merged into `DEFAULT_RULES` by `./defaults.ts`.
 */

/** Keystone check strings. */
const K_ADMIN = 'rule:admin_required';
const K_ADMIN_OR_SELF = 'rule:admin_required or user_id:%(target.user.id)s';
const K_TOKEN = 'rule:service_or_admin or rule:token_subject';

/** The identity, image, network and compute rules. */
export const OPENSTACK_RULES: Readonly<Record<string, string>> = Object.freeze({
  // --- Keystone base rules. Source: Keystone's legacy policy (admin_required, service_role,
  // service_or_admin, token_subject); `is_admin:1` is dropped (no such credential in esi).
  admin_required: 'role:admin',
  service_role: 'role:service',
  service_or_admin: 'rule:admin_required or rule:service_role',
  token_subject: 'user_id:%(target.token.user_id)s',

  // --- Keystone identity API. Source: Keystone legacy defaults: admin for management, plus
  // the caller's own project, user, domain and token. /auth/* listings are open (they list
  // only what the token already grants).
  'identity:get_project': 'rule:admin_required or project_id:%(target.project.id)s',
  'identity:list_projects': K_ADMIN,
  'identity:create_project': K_ADMIN,
  'identity:update_project': K_ADMIN,
  'identity:delete_project': K_ADMIN,
  'identity:list_user_projects': K_ADMIN_OR_SELF,
  'identity:get_user': K_ADMIN_OR_SELF,
  'identity:list_users': K_ADMIN,
  'identity:create_user': K_ADMIN,
  'identity:update_user': K_ADMIN,
  'identity:delete_user': K_ADMIN,
  'identity:get_role': K_ADMIN,
  'identity:list_roles': K_ADMIN,
  'identity:create_role': K_ADMIN,
  'identity:delete_role': K_ADMIN,
  'identity:check_grant': K_ADMIN,
  'identity:list_grants': K_ADMIN,
  'identity:create_grant': K_ADMIN,
  'identity:revoke_grant': K_ADMIN,
  'identity:check_system_grant_for_user': K_ADMIN,
  'identity:list_system_grants_for_user': K_ADMIN,
  'identity:create_system_grant_for_user': K_ADMIN,
  'identity:revoke_system_grant_for_user': K_ADMIN,
  'identity:list_role_assignments': K_ADMIN,
  'identity:get_domain': 'rule:admin_required or domain_id:%(target.domain.id)s',
  'identity:list_domains': K_ADMIN,
  'identity:check_token': K_TOKEN,
  'identity:validate_token': K_TOKEN,
  'identity:revoke_token': K_TOKEN,
  'identity:revocation_list': K_TOKEN,
  'identity:get_auth_catalog': '',
  'identity:get_auth_projects': '',
  'identity:get_auth_domains': '',
  'identity:get_auth_system': '',
  // The catalogue esi announces, read-only (Keystone: admin or system reader).
  'identity:list_services': K_ADMIN,
  'identity:get_service': K_ADMIN,
  'identity:list_endpoints': K_ADMIN,
  'identity:get_endpoint': K_ADMIN,
  'identity:get_application_credential': K_ADMIN_OR_SELF,
  'identity:list_application_credentials': K_ADMIN_OR_SELF,
  'identity:create_application_credential': K_ADMIN_OR_SELF,
  'identity:delete_application_credential': K_ADMIN_OR_SELF,
  // Groups and domain management (Keystone's legacy defaults: admin; a user lists its own
  // groups). Group grants use the grant rules above.
  'identity:get_group': K_ADMIN,
  'identity:list_groups': K_ADMIN,
  'identity:list_groups_for_user': K_ADMIN_OR_SELF,
  'identity:create_group': K_ADMIN,
  'identity:update_group': K_ADMIN,
  'identity:delete_group': K_ADMIN,
  'identity:list_users_in_group': K_ADMIN,
  'identity:check_user_in_group': K_ADMIN,
  'identity:add_user_to_group': K_ADMIN,
  'identity:remove_user_from_group': K_ADMIN,
  'identity:create_domain': K_ADMIN,
  'identity:update_domain': K_ADMIN,
  'identity:delete_domain': K_ADMIN,

  // --- Glance image API (added by the image work). Source: Glance's secure-RBAC defaults
  // (glance/policies/image.py, base.py). Targets: image.owner, image.visibility, image.member_id
  // (the caller's project when it is a member of the shared image, else null; see
  // src/domain/images/access.ts) and, for get_images, project_id (the caller's project).
  // esi deviation: Glance's project member is role:member; esi also accepts its owner and lessee
  // roles (which do not imply member), and a project reader is any role on the project.
  'image:context_is_admin': 'role:admin',
  'image:member_role': 'role:member or rule:is_owner or rule:is_lessee',
  'image:owner_member': 'rule:image:member_role and project_id:%(image.owner)s',
  'image:shared_member': 'project_id:%(image.member_id)s',
  'image:get_image':
    "rule:image:context_is_admin or project_id:%(image.owner)s or rule:image:shared_member or 'public':%(image.visibility)s or 'community':%(image.visibility)s",
  'image:get_images': 'rule:image:context_is_admin or project_id:%(project_id)s',
  'image:add_image': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:modify_image': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:delete_image': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:upload_image': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:publicize_image': 'rule:image:context_is_admin',
  'image:communitize_image': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:download_image':
    "rule:image:context_is_admin or (rule:image:member_role and (project_id:%(image.owner)s or rule:image:shared_member or 'public':%(image.visibility)s or 'community':%(image.visibility)s))",
  'image:deactivate': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:reactivate': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:get_members': 'rule:image:context_is_admin or project_id:%(image.owner)s or rule:image:shared_member',
  'image:get_member': 'rule:image:context_is_admin or project_id:%(image.owner)s or rule:image:shared_member',
  'image:add_member': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:delete_member': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:modify_member': 'rule:image:context_is_admin or (rule:image:member_role and rule:image:shared_member)',

  // --- Neutron network API (added by the networking work; docs/networking.md "Policy").
  // Source: Neutron's legacy defaults (neutron/conf/policies/{base,network,subnet,port,trunk,
  // rbac_policy}.py, the rules before secure RBAC), with Neutron's rule names so an operator's
  // Neutron overrides apply. Targets are flat: `project_id` (the resource's project),
  // `network:project_id` (its network's project), `network:shared` (True when the network is
  // shared with the caller, by `shared` or an RBAC entry), `port:network_device` (True for a
  // `network:*` device_owner) and `rbac:wildcard` (True for target `*`). Neutron's `field:`
  // checks are written as literal checks on those keys.
  context_is_admin: 'role:admin',
  context_is_advsvc: 'role:advsvc',
  owner: 'project_id:%(project_id)s',
  admin_or_owner: 'rule:context_is_admin or rule:owner',
  network_owner: 'project_id:%(network:project_id)s',
  admin_or_network_owner: 'rule:context_is_admin or rule:network_owner',
  admin_owner_or_network_owner: 'rule:owner or rule:admin_or_network_owner',
  admin_only: 'rule:context_is_admin',
  regular_user: '',
  shared: "'True':%(network:shared)s",
  network_device: "'True':%(port:network_device)s",
  restrict_wildcard: "(not 'True':%(rbac:wildcard)s) or rule:admin_only",
  create_network: 'rule:regular_user',
  'create_network:shared': 'rule:admin_only',
  'create_network:router:external': 'rule:admin_only',
  'create_network:provider:network_type': 'rule:admin_only',
  'create_network:provider:physical_network': 'rule:admin_only',
  'create_network:provider:segmentation_id': 'rule:admin_only',
  // `rule:external` (./defaults-network-l3.ts): every project sees external networks (Neutron).
  get_network: 'rule:admin_or_owner or rule:shared or rule:external or rule:context_is_advsvc',
  'get_network:provider:network_type': 'rule:admin_only',
  'get_network:provider:physical_network': 'rule:admin_only',
  'get_network:provider:segmentation_id': 'rule:admin_only',
  update_network: 'rule:admin_or_owner',
  'update_network:shared': 'rule:admin_only',
  delete_network: 'rule:admin_or_owner',
  create_subnet: 'rule:admin_or_network_owner',
  // esi: the subnets of external networks are visible too, as they are in Neutron's lists.
  get_subnet: 'rule:admin_or_owner or rule:shared or rule:external',
  update_subnet: 'rule:admin_or_network_owner',
  delete_subnet: 'rule:admin_or_network_owner',
  create_port: 'rule:regular_user',
  'create_port:device_owner': 'not rule:network_device or rule:context_is_advsvc or rule:admin_or_network_owner',
  'create_port:mac_address': 'rule:context_is_advsvc or rule:admin_or_network_owner',
  'create_port:fixed_ips:ip_address': 'rule:context_is_advsvc or rule:admin_or_network_owner',
  'create_port:fixed_ips:subnet_id': 'rule:context_is_advsvc or rule:admin_or_network_owner or rule:shared',
  'create_port:binding:host_id': 'rule:admin_only',
  'create_port:binding:profile': 'rule:admin_only',
  get_port: 'rule:context_is_advsvc or rule:admin_owner_or_network_owner',
  'get_port:binding:vif_type': 'rule:admin_only',
  'get_port:binding:vif_details': 'rule:admin_only',
  'get_port:binding:host_id': 'rule:admin_only',
  'get_port:binding:profile': 'rule:admin_only',
  update_port: 'rule:admin_or_owner or rule:context_is_advsvc',
  'update_port:device_owner': 'not rule:network_device or rule:context_is_advsvc or rule:admin_or_network_owner',
  'update_port:mac_address': 'rule:admin_only or rule:context_is_advsvc',
  'update_port:fixed_ips:ip_address': 'rule:context_is_advsvc or rule:admin_or_network_owner',
  'update_port:fixed_ips:subnet_id': 'rule:context_is_advsvc or rule:admin_or_network_owner or rule:shared',
  'update_port:binding:host_id': 'rule:admin_only',
  'update_port:binding:profile': 'rule:admin_only',
  delete_port: 'rule:context_is_advsvc or rule:admin_owner_or_network_owner',
  create_trunk: 'rule:regular_user',
  get_trunk: 'rule:admin_or_owner',
  update_trunk: 'rule:admin_or_owner',
  delete_trunk: 'rule:admin_or_owner',
  add_subports: 'rule:admin_or_owner',
  remove_subports: 'rule:admin_or_owner',
  get_subports: 'rule:admin_or_owner',
  create_rbac_policy: 'rule:regular_user',
  'create_rbac_policy:target_tenant': 'rule:restrict_wildcard',
  update_rbac_policy: 'rule:admin_or_owner',
  'update_rbac_policy:target_tenant': 'rule:restrict_wildcard and rule:admin_or_owner',
  get_rbac_policy: 'rule:admin_or_owner',
  delete_rbac_policy: 'rule:admin_or_owner',
  // esi additions (no Neutron rule exists; docs/networking.md). Attaching a port to a node
  // (as a VIF, on top of baremetal:node:vif:attach): the port must be the caller's, on a
  // network the caller owns or that is shared with it — RBAC-shared networks are attachable.
  attach_port: 'rule:context_is_admin or (rule:owner and (rule:network_owner or rule:shared))',
  // Who may register a switch port to a node — say which node's NIC a cable reaches — by
  // cabling a bare-metal port to it or explicitly (src/domain/networking/cabling.ts). Others
  // may only name switch ports registered to the node whose port names them.
  'esi:switch_port:register': 'rule:admin_only',
  // Switches (driver settings, credentials) are the operator's; resync re-applies a switch.
  get_switch: 'rule:admin_only',
  create_switch: 'rule:admin_only',
  update_switch: 'rule:admin_only',
  delete_switch: 'rule:admin_only',
  resync_switch: 'rule:admin_only',
  // --- Compute API (Nova v2.1 subset, added by the scheduling work). Source: Nova's defaults
  // (nova/policies: flavor_manage, flavor_extra_specs, flavor_access, keypairs, servers,
  // extended_server_attributes) with esi's roles: a project "member" is a user with member,
  // owner or lessee on the project (as for images). Targets: flavor.is_public, flavor.owner,
  // user_id (key pairs), project_id (servers).
  // esi deviation: Nova lets only admins create flavors; esi also lets a project member create
  // PRIVATE flavors for its own project (it becomes their owner) and manage them.
  'compute:context_is_admin': 'role:admin',
  'compute:member_role': 'role:member or rule:is_owner or rule:is_lessee',
  'compute:flavor_owner': 'rule:compute:member_role and project_id:%(flavor.owner)s',
  'os_compute_api:os-flavor-manage:create': "rule:compute:context_is_admin or (rule:compute:member_role and 'False':%(flavor.is_public)s)",
  'os_compute_api:os-flavor-manage:update': 'rule:compute:context_is_admin or rule:compute:flavor_owner',
  'os_compute_api:os-flavor-manage:delete': 'rule:compute:context_is_admin or rule:compute:flavor_owner',
  'os_compute_api:os-flavor-extra-specs:index': '',
  'os_compute_api:os-flavor-extra-specs:show': '',
  'os_compute_api:os-flavor-extra-specs:create': 'rule:compute:context_is_admin or rule:compute:flavor_owner',
  'os_compute_api:os-flavor-extra-specs:update': 'rule:compute:context_is_admin or rule:compute:flavor_owner',
  'os_compute_api:os-flavor-extra-specs:delete': 'rule:compute:context_is_admin or rule:compute:flavor_owner',
  'os_compute_api:os-flavor-access': 'rule:compute:context_is_admin or rule:compute:flavor_owner',
  'os_compute_api:os-flavor-access:add_tenant_access': 'rule:compute:context_is_admin or rule:compute:flavor_owner',
  'os_compute_api:os-flavor-access:remove_tenant_access': 'rule:compute:context_is_admin or rule:compute:flavor_owner',
  'os_compute_api:os-keypairs:index': 'rule:compute:context_is_admin or user_id:%(user_id)s',
  'os_compute_api:os-keypairs:show': 'rule:compute:context_is_admin or user_id:%(user_id)s',
  'os_compute_api:os-keypairs:create': 'rule:compute:context_is_admin or user_id:%(user_id)s',
  'os_compute_api:os-keypairs:delete': 'rule:compute:context_is_admin or user_id:%(user_id)s',
  'os_compute_api:servers:index': 'rule:compute:context_is_admin or project_id:%(project_id)s',
  'os_compute_api:servers:detail': 'rule:compute:context_is_admin or project_id:%(project_id)s',
  'os_compute_api:servers:show': 'rule:compute:context_is_admin or project_id:%(project_id)s',
  'os_compute_api:servers:index:get_all_tenants': 'rule:compute:context_is_admin',
  'os_compute_api:servers:detail:get_all_tenants': 'rule:compute:context_is_admin',
  'os_compute_api:servers:create': 'rule:compute:context_is_admin or (rule:compute:member_role and project_id:%(project_id)s)',
  'os_compute_api:servers:delete': 'rule:compute:context_is_admin or (rule:compute:member_role and project_id:%(project_id)s)',
  // Server actions (nova/policies/servers.py, console_output.py: PROJECT_MEMBER_OR_ADMIN).
  'os_compute_api:servers:start': 'rule:compute:context_is_admin or (rule:compute:member_role and project_id:%(project_id)s)',
  'os_compute_api:servers:stop': 'rule:compute:context_is_admin or (rule:compute:member_role and project_id:%(project_id)s)',
  'os_compute_api:servers:reboot': 'rule:compute:context_is_admin or (rule:compute:member_role and project_id:%(project_id)s)',
  'os_compute_api:servers:rebuild': 'rule:compute:context_is_admin or (rule:compute:member_role and project_id:%(project_id)s)',
  'os_compute_api:os-console-output': 'rule:compute:context_is_admin or (rule:compute:member_role and project_id:%(project_id)s)',
  'os_compute_api:os-extended-server-attributes': 'rule:compute:context_is_admin',
});
