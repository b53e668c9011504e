/**
 * The default rule set: it compiles, and the persona matrix of docs/architecture.md (admin,
 * owner, lessee, another project, anonymous) gets the access ESI's defaults give.
 */
import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/domain/auth.ts';
import { DEFAULT_RULES } from '../../../src/domain/policy/defaults.ts';
import { PolicyEngine } from '../../../src/domain/policy/engine.ts';
import { ADMIN, ANONYMOUS, LESSEE, OTHER, OWNER, projectContext, systemContext } from './personas.ts';

const policy = new PolicyEngine(DEFAULT_RULES);

const PERSONAS: Record<string, AuthContext> = { admin: ADMIN, owner: OWNER, lessee: LESSEE, other: OTHER, anonymous: ANONYMOUS };

/** The node (owner o1, lessee l1), the offer of o1, and the lease of o1's node held by l1. */
const NODE = { 'node.owner': 'o1', 'node.lessee': 'l1' };
const OFFER = { 'offer.project_id': 'o1' };
const LEASE = { 'lease.owner_id': 'o1', 'lease.project_id': 'l1' };

/** rule, target, then expected result for admin, owner, lessee, other, anonymous. */
const MATRIX: [string, Record<string, unknown>, [boolean, boolean, boolean, boolean, boolean]][] = [
  ['baremetal:node:get', NODE, [true, true, true, false, false]],
  ['baremetal:node:update', NODE, [true, true, false, false, false]],
  ['baremetal:node:set_power_state', NODE, [true, true, true, false, false]],
  ['baremetal:node:update_instance_info', NODE, [true, true, true, false, false]],
  ['esi_leap:offer:create', OFFER, [true, true, false, true, false]],
  ['esi_leap:offer:claim', OFFER, [true, true, true, true, false]],
  ['esi_leap:lease:get', LEASE, [true, true, true, false, false]],
  ['esi_leap:lease:update', LEASE, [true, false, false, false, false]],
  // Beyond the required matrix: more of the rules the APIs use.
  ['baremetal:node:list', {}, [true, true, true, true, true]],
  ['baremetal:node:list_all', {}, [true, false, false, false, false]],
  ['baremetal:node:create', {}, [true, false, false, false, false]],
  ['baremetal:node:delete', NODE, [true, false, false, false, false]],
  ['baremetal:node:update:owner', NODE, [true, false, false, false, false]],
  ['baremetal:node:update:lessee', NODE, [true, true, false, false, false]],
  ['baremetal:node:update_extra', NODE, [true, true, true, false, false]],
  ['baremetal:node:set_provision_state', NODE, [true, true, true, false, false]],
  ['baremetal:node:set_boot_device', NODE, [true, true, true, false, false]],
  ['baremetal:node:get_console', NODE, [true, true, true, false, false]],
  ['baremetal:node:vif:attach', NODE, [true, true, true, false, false]],
  ['baremetal:node:get:last_error', NODE, [true, true, false, false, false]],
  ['baremetal:node:get:filter_threshold', NODE, [true, false, false, false, false]],
  ['baremetal:port:get', NODE, [true, true, true, false, false]],
  ['baremetal:port:create', NODE, [true, true, false, false, false]],
  ['baremetal:port:update', NODE, [true, true, true, false, false]],
  ['baremetal:allocation:get', { 'allocation.owner': 'o1' }, [true, true, false, false, false]],
  ['baremetal:allocation:create', {}, [true, true, true, true, false]],
  ['show_password', NODE, [false, false, false, false, false]],
  ['esi_leap:offer:delete', OFFER, [true, true, false, false, false]],
  ['esi_leap:lease:create', LEASE, [true, true, false, true, false]],
  ['esi_leap:lease:get_all', {}, [true, true, true, true, false]],
  ['esi_leap:lease:lease_admin', {}, [true, false, false, false, false]],
  ['esi_leap:console_auth_token:create', NODE, [true, true, true, false, false]],
  ['no:such:rule', NODE, [true, false, false, false, false]],
  // Scheduling and compute (docs/scheduling.md).
  ['baremetal:allocation:list_all', {}, [true, false, false, false, false]],
  ['baremetal:allocation:create_restricted', {}, [true, false, false, false, false]],
  ['baremetal:allocation:delete', { 'allocation.owner': 'l1' }, [true, false, true, false, false]],
  ['os_compute_api:os-flavor-manage:create', { 'flavor.is_public': true, 'flavor.owner': null }, [true, false, false, false, false]],
  ['os_compute_api:os-flavor-manage:create', { 'flavor.is_public': false, 'flavor.owner': 'o1' }, [true, true, true, true, false]],
  ['os_compute_api:os-flavor-manage:delete', { 'flavor.is_public': false, 'flavor.owner': 'o1' }, [true, true, false, false, false]],
  [
    'os_compute_api:os-flavor-access:add_tenant_access',
    { 'flavor.is_public': false, 'flavor.owner': 'l1' },
    [true, false, true, false, false],
  ],
  ['os_compute_api:os-keypairs:show', { user_id: 'u-l1' }, [true, false, true, false, false]],
  ['os_compute_api:servers:show', { project_id: 'l1' }, [true, false, true, false, false]],
  ['os_compute_api:servers:create', { project_id: 'o2' }, [true, false, false, true, false]],
  ['os_compute_api:servers:index:get_all_tenants', {}, [true, false, false, false, false]],
  ['os_compute_api:os-extended-server-attributes', {}, [true, false, false, false, false]],
];

describe('default rules', () => {
  it('all parse, link and compile', () => {
    expect(() => new PolicyEngine(DEFAULT_RULES)).not.toThrow();
    expect(policy.ruleText('default')).toBe('rule:is_admin');
  });

  describe.each(MATRIX)('%s', (rule, target, expected) => {
    it.each(Object.keys(PERSONAS).map((name, i) => [name, expected[i]!] as const))('%s → %s', (name, allowed) => {
      expect(policy.check(rule, target, PERSONAS[name]!)).toBe(allowed);
    });
  });

  it('a node without a lessee is not visible to callers without a project', () => {
    const unleased = { 'node.owner': 'o1', 'node.lessee': null };
    expect(policy.check('baremetal:node:get', unleased, ANONYMOUS)).toBe(false);
    expect(policy.check('baremetal:node:get', unleased, systemContext(['member']))).toBe(false);
    expect(policy.check('baremetal:node:get', unleased, LESSEE)).toBe(false);
    expect(policy.check('baremetal:node:get', unleased, OWNER)).toBe(true);
  });

  it('observers: baremetal_observer in a project, or reader in system scope', () => {
    const observer = projectContext('ops', ['baremetal_observer']);
    const sysReader = systemContext(['reader']);
    for (const ctx of [observer, sysReader]) {
      expect(policy.check('baremetal:node:get', NODE, ctx)).toBe(true);
      expect(policy.check('baremetal:node:list_all', {}, ctx)).toBe(true);
      expect(policy.check('baremetal:node:get:filter_threshold', NODE, ctx)).toBe(true);
      expect(policy.check('baremetal:node:update', NODE, ctx)).toBe(false);
    }
    expect(policy.check('baremetal:node:list_all', {}, projectContext('p', ['reader']))).toBe(false);
  });

  it('esi-leap accepts the esi_leap_* role names too', () => {
    expect(policy.check('esi_leap:lease:update', LEASE, projectContext('x', ['esi_leap_admin']))).toBe(true);
    expect(policy.check('esi_leap:offer:create', OFFER, projectContext('x', ['esi_leap_owner']))).toBe(true);
    expect(policy.check('esi_leap:offer:claim', OFFER, projectContext('x', ['esi_leap_lessee']))).toBe(true);
    // esi_leap_admin is not an Ironic admin.
    expect(policy.check('baremetal:node:create', {}, projectContext('x', ['esi_leap_admin']))).toBe(false);
  });

  it('identity: admin manages, users see themselves, their project and their tokens', () => {
    const user = projectContext('p1', ['member'], 'u1');
    expect(policy.check('identity:list_users', {}, ADMIN)).toBe(true);
    expect(policy.check('identity:list_users', {}, user)).toBe(false);
    expect(policy.check('identity:get_user', { 'target.user.id': 'u1' }, user)).toBe(true);
    expect(policy.check('identity:get_user', { 'target.user.id': 'u2' }, user)).toBe(false);
    expect(policy.check('identity:get_project', { 'target.project.id': 'p1' }, user)).toBe(true);
    expect(policy.check('identity:get_project', { 'target.project.id': 'p2' }, user)).toBe(false);
    expect(policy.check('identity:validate_token', { 'target.token.user_id': 'u1' }, user)).toBe(true);
    expect(policy.check('identity:validate_token', { 'target.token.user_id': 'u2' }, user)).toBe(false);
    expect(policy.check('identity:validate_token', { 'target.token.user_id': 'u2' }, projectContext('s', ['service']))).toBe(true);
    expect(policy.check('identity:get_domain', { 'target.domain.id': 'default' }, user)).toBe(true);
    expect(policy.check('identity:create_grant', {}, user)).toBe(false);
    expect(policy.check('identity:get_auth_projects', {}, user)).toBe(true);
  });
});
