/**
 * Body specs of the identity API's group, domain and application credential write routes, for
 * the robustness test (merged into `BODY_SPECS` by ./specs.ts), after Keystone's JSON schemas
 * (keystone/identity/schema.py `group_create`/`group_update`, keystone/resource/schema.py
 * `domain_create`/`domain_update`, keystone/application_credential/schema.py
 * `application_credential_create_request_body`): a valid body for the fixtures and the JSON
 * kinds each attribute accepts. Groups keep unknown attributes (Keystone's `extra`); domains and
 * application credentials refuse them.
 */
import type { JsonKind } from './generators.ts';
import type { BodySpec, Fixtures } from './specs.ts';

/** The identity resources created before the bad requests (test/api/robustness.test.ts). */
export interface IdentityFixtures {
  /** A group of the admin. */
  readonly group: string;
  /** An application credential of owner1 on project o1. */
  readonly appCredential: string;
}

const S: readonly JsonKind[] = ['string'];
const SN: readonly JsonKind[] = ['string', 'null'];
const B: readonly JsonKind[] = ['boolean'];
const BN: readonly JsonKind[] = ['boolean', 'null'];
const A: readonly JsonKind[] = ['array'];
const O: readonly JsonKind[] = ['object'];
const none: BodySpec = { kind: 'none' };

const groupFields = { group: O, 'group.name': S, 'group.description': SN, 'group.domain_id': S };
const domainFields = { domain: O, 'domain.name': S, 'domain.description': SN, 'domain.enabled': B, 'domain.options': O, 'domain.tags': A };

/** The identity specs of this file, keyed `METHOD /path/{}`. */
export const IDENTITY_SPECS: Readonly<Record<string, BodySpec>> = {
  'POST /identity/v3/groups': { kind: 'json', valid: () => ({ group: { name: 'rb-new-group' } }), fields: groupFields, strict: [''] },
  'PATCH /identity/v3/groups/{}': { kind: 'json', valid: () => ({ group: { description: 'rb' } }), fields: groupFields, strict: [''] },
  'PUT /identity/v3/groups/{}/users/{}': none,
  'PUT /identity/v3/projects/{}/groups/{}/roles/{}': none,
  'PUT /identity/v3/domains/{}/groups/{}/roles/{}': none,
  'POST /identity/v3/domains': {
    kind: 'json',
    valid: () => ({ domain: { name: 'rb-new-domain' } }),
    fields: { ...domainFields, 'domain.explicit_domain_id': S },
    strict: ['', 'domain'],
  },
  'PATCH /identity/v3/domains/{}': {
    kind: 'json',
    valid: () => ({ domain: { description: 'rb' } }),
    fields: domainFields,
    strict: ['', 'domain'],
  },
  'POST /identity/v3/users/{}/application_credentials': {
    kind: 'json',
    valid: (f: Fixtures) => ({ application_credential: { name: `rb-new-ac-${f.personas.owner.userId!.slice(0, 4)}` } }),
    fields: {
      application_credential: O,
      'application_credential.name': S,
      'application_credential.description': SN,
      'application_credential.secret': SN,
      'application_credential.expires_at': SN,
      'application_credential.roles': A,
      'application_credential.unrestricted': BN,
      'application_credential.access_rules': A,
      'application_credential.system': SN,
    },
    strict: ['', 'application_credential'],
    alsoKnown: ['id', 'project_id'],
  },
};
