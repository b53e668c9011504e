import { describe, expect, it } from 'vitest';
import { refusedMessage, ruleInWords, tokenHolder, tokenRefusedMessage } from '../../../src/cli/api-errors.ts';

describe('messages for refused requests', () => {
  it('names the token holder: user, project or system scope, roles', () => {
    expect(tokenHolder({ user: { name: 'lessee' }, project: { name: 'l1' }, roles: [{ name: 'member' }, { name: 'reader' }] })).toBe(
      'user "lessee" in project "l1" (roles: member, reader)',
    );
    expect(tokenHolder({ user: { name: 'admin' }, system: { all: true }, roles: [{ name: 'admin' }] })).toBe(
      'user "admin" with system scope (roles: admin)',
    );
    expect(tokenHolder({})).toBe('the caller (unscoped)');
  });

  it('puts a policy rule in words', () => {
    expect(ruleInWords('baremetal:node:set_power_state')).toBe('baremetal node: set power state');
    expect(ruleInWords('os_compute_api:servers:create')).toBe('compute servers: create');
    expect(ruleInWords('identity:list_services')).toBe('identity: list services');
  });

  it('a 403 names who, what, and the rule the server named', () => {
    const m = refusedMessage(
      403,
      'user "lessee" in project "l1" (roles: member)',
      'PATCH /baremetal/v1/nodes/n1',
      "Policy doesn't allow baremetal:node:update to be performed.",
    );
    expect(m).toBe(
      'user "lessee" in project "l1" (roles: member) may not PATCH /baremetal/v1/nodes/n1; policy rule baremetal:node:update ' +
        "(baremetal node: update) does not allow it: Policy doesn't allow baremetal:node:update to be performed.",
    );
    expect(refusedMessage(403, 'u', 'GET /x', 'Forbidden.')).toBe('u may not GET /x: Forbidden.');
    expect(refusedMessage(401, 'u', 'GET /x', 'No.')).toMatch(/^u: the token was refused for GET \/x \(expired or revoked\?\): No\.$/);
  });

  it('a refused token request says who, for what, where, and what to check', () => {
    expect(tokenRefusedMessage({ who: 'user "o" (domain default)', scope: 'project "p"' }, 'Nope.', 'http://h/identity/v3')).toBe(
      'user "o" (domain default) could not get a token for project "p" from http://h/identity/v3: Nope. ' +
        '(check OS_USERNAME, OS_PASSWORD and OS_USER_DOMAIN_NAME, and that the user has a role on the project (OS_PROJECT_NAME)).',
    );
    expect(tokenRefusedMessage({ who: 'the token in OS_TOKEN', scope: null }, 'x', 'u')).toMatch(/expired or been revoked/);
  });
});
