/**
 * The default policy of esi: one flat rule set (oslo.policy language) for all services.
 *
 * Each group cites where its defaults come from. Where esi deviates or fills a gap, the comment
 * says so. Operators override any rule with a YAML file (see `./overrides.ts`).
 *
 * Target keys the services must supply (flat dict, one key per dotted name):
 * - baremetal: `node.owner`, `node.lessee` (nodes, and ports/portgroups via their node),
 *   `allocation.owner`;
 * - lease: `offer.project_id`, `lease.owner_id`, `lease.project_id`, and for console tokens
 *   `node.owner`, `node.lessee`;
 * - identity: `target.project.id`, `target.user.id`, `target.domain.id`, `target.token.user_id`;
 * - network (Neutron names): `project_id`, `network:project_id`, `network:shared`,
 *   `network:router:external`, `port:network_device`, `rbac:wildcard`.
 * - compute: `flavor.is_public`, `flavor.owner`, `user_id` (key pairs), `project_id` (servers).
 */

import { BAREMETAL_RULES } from './defaults-baremetal.ts';
import { LEASING_RULES } from './defaults-leasing.ts';
import { NETWORK_L3_RULES } from './defaults-network-l3.ts';
import { OPENSTACK_RULES } from './defaults-openstack.ts';

/**
 * Default rules: rule name → rule string, from every service's part (`./defaults-*.ts`).
 * Frozen; `PolicyEngine` merges operator overrides on top. `default` (used for rule names that
 * are not defined) is admin-only.
 */
export const DEFAULT_RULES: Readonly<Record<string, string>> = Object.freeze({
  ...BAREMETAL_RULES,
  ...LEASING_RULES,
  ...OPENSTACK_RULES,
  ...NETWORK_L3_RULES,
});
