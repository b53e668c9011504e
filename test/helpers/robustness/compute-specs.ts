/**
 * Body specs of the compute API's write routes (Nova v2.1 subset, docs/scheduling.md) for the
 * robustness test, after Nova's schemas (nova/api/openstack/compute/schemas: flavor_manage,
 * flavors_extraspecs, flavor_access, keypairs, servers, server actions) at microversion 2.90:
 * a valid body for the fixtures and the JSON kinds each attribute accepts; the paths and methods
 * the API serves (others answer 405 and read no body).
 */
import type { JsonKind } from './generators.ts';
import type { BodySpec } from './specs.ts';

const S: readonly JsonKind[] = ['string'];
const SN: readonly JsonKind[] = ['string', 'null'];
const BOOL_LIKE: readonly JsonKind[] = ['boolean', 'string', 'null'];
const ON: readonly JsonKind[] = ['object', 'null'];
const O: readonly JsonKind[] = ['object'];
const none: BodySpec = { kind: 'none' };

const SIZE: readonly JsonKind[] = ['integer', 'string'];
/** The compute API's paths and the methods each serves; the others answer 405 and read no body. */
const COMPUTE_PATHS: ReadonlyArray<[string, string[]]> = [
  ['/flavors', ['GET', 'POST']],
  ['/flavors/detail', ['GET']],
  ['/flavors/{}', ['GET', 'PUT', 'DELETE']],
  ['/flavors/{}/os-extra_specs', ['GET', 'POST']],
  ['/flavors/{}/os-extra_specs/{}', ['GET', 'PUT', 'DELETE']],
  ['/flavors/{}/os-flavor-access', ['GET']],
  ['/flavors/{}/action', ['POST']],
  ['/os-keypairs', ['GET', 'POST']],
  ['/os-keypairs/{}', ['GET', 'DELETE']],
  ['/servers', ['GET', 'POST']],
  ['/servers/detail', ['GET']],
  ['/servers/{}', ['GET', 'DELETE']],
  ['/servers/{}/action', ['POST']],
];
const COMPUTE_REFUSED: Record<string, BodySpec> = Object.fromEntries(
  COMPUTE_PATHS.flatMap(([path, served]) =>
    ['POST', 'PUT', 'PATCH'].filter((m) => !served.includes(m)).map((m) => [`${m} /compute/v2.1${path}`, none]),
  ),
);
/** Every compute body spec, keyed `METHOD /compute/v2.1/path/{}`. */
export const COMPUTE_SPECS: Readonly<Record<string, BodySpec>> = {
  ...COMPUTE_REFUSED,
  'POST /compute/v2.1/flavors': {
    kind: 'json',
    valid: () => ({ flavor: { name: 'rb-new-flavor', ram: 1, vcpus: 1, disk: 0 } }),
    fields: {
      flavor: O,
      'flavor.name': S,
      'flavor.ram': SIZE,
      'flavor.vcpus': SIZE,
      'flavor.disk': SIZE,
      'flavor.id': ['string', 'integer', 'null'],
      'flavor.swap': SIZE,
      'flavor.rxtx_factor': ['number', 'integer', 'string', 'null'],
      'flavor.os-flavor-access:is_public': BOOL_LIKE,
      'flavor.description': SN,
    },
    strict: ['', 'flavor'],
    alsoKnown: ['OS-FLV-EXT-DATA:ephemeral', 'OS-FLV-DISABLED:disabled'],
  },
  'PUT /compute/v2.1/flavors/{}': {
    kind: 'json',
    valid: () => ({ flavor: { description: 'rb' } }),
    fields: { flavor: O, 'flavor.description': SN },
    strict: ['', 'flavor'],
  },
  'POST /compute/v2.1/flavors/{}/os-extra_specs': {
    kind: 'json',
    valid: () => ({ extra_specs: { 'hw:rb': 'y' } }),
    fields: { extra_specs: O },
    strict: [''],
  },
  'PUT /compute/v2.1/flavors/{}/os-extra_specs/{}': {
    kind: 'json',
    valid: () => ({ 'hw:rb': 'y' }),
    fields: { 'hw:rb': ['string', 'number', 'boolean'] },
    strict: [''],
  },
  'POST /compute/v2.1/flavors/{}/action': {
    kind: 'json',
    valid: (f) => ({ addTenantAccess: { tenant: f.personas.other.projectId } }),
    fields: { addTenantAccess: O, 'addTenantAccess.tenant': S },
    strict: ['', 'addTenantAccess'],
    alsoKnown: ['removeTenantAccess'],
  },
  'POST /compute/v2.1/os-keypairs': {
    kind: 'json',
    valid: () => ({
      keypair: { name: 'rb-new-key', public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDvC3hT0l2fJ5kq3n7ZlVxq8YVw3pX6m8A0bq4b8wD1u rb' },
    }),
    fields: { keypair: O, 'keypair.name': S, 'keypair.public_key': S, 'keypair.type': S, 'keypair.user_id': S },
    strict: ['', 'keypair'],
  },
  'POST /compute/v2.1/servers': {
    kind: 'json',
    valid: (f) => ({ server: { name: 'rb-new-server', flavorRef: f.flavor, imageRef: f.image, networks: 'none' } }),
    fields: {
      server: O,
      'server.name': S,
      'server.flavorRef': ['string', 'integer'],
      'server.imageRef': S,
      'server.networks': ['string', 'array'],
      'server.key_name': SN,
      'server.user_data': SN,
      'server.min_count': SIZE,
      'server.max_count': SIZE,
      'server.metadata': ON,
      'server.description': SN,
      'server.hostname': SN,
    },
    strict: ['', 'server'],
    alsoKnown: [
      'os:scheduler_hints',
      'OS-SCH-HNT:scheduler_hints',
      'return_reservation_id',
      'availability_zone',
      'config_drive',
      'security_groups',
      'adminPass',
      'OS-DCF:diskConfig',
      'personality',
      'block_device_mapping',
      'block_device_mapping_v2',
      'accessIPv4',
      'accessIPv6',
      'tags',
    ],
  },
  // One body per action; the rebuild (the action with the most attributes) is the one mutated.
  'POST /compute/v2.1/servers/{}/action': {
    kind: 'json',
    valid: (f) => ({
      rebuild: {
        imageRef: f.image,
        name: 'rb-rebuilt',
        metadata: { rb: 'x' },
        description: 'rb',
        key_name: f.keypair,
        user_data: 'I2Nsb3VkLWNvbmZpZwo=',
        hostname: 'rb-host',
        adminPass: 'rb-pass',
        preserve_ephemeral: false,
      },
    }),
    fields: {
      rebuild: O,
      'rebuild.imageRef': S,
      'rebuild.name': S,
      'rebuild.metadata': O,
      'rebuild.description': SN,
      'rebuild.key_name': SN,
      'rebuild.user_data': SN,
      'rebuild.hostname': S,
      'rebuild.adminPass': S,
      'rebuild.preserve_ephemeral': ['boolean', 'string'],
    },
    strict: ['', 'rebuild'],
    alsoKnown: ['OS-DCF:diskConfig', 'accessIPv4', 'accessIPv6', 'trusted_image_certificates'],
  },
};
