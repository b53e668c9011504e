/**
 * The network API plugin: a Neutron v2.0 subset at `/network` (registered by
 * `src/server/app.ts` with prefix `/network`; the catalogue announces `<public>/network` as
 * service type `network`, and clients discover `/network/v2.0` from the version document
 * there, as with devstack's `…/networking`). Wire-compatible with openstacksdk (Debian's
 * `openstack network|subnet|port|network rbac …`) and python-neutronclient (`openstack
 * network trunk …`).
 *
 * | file               | routes |
 * |--------------------|--------|
 * | (here)             | `GET /network/` (versions, public), `GET /v2.0/` (resources), `GET /v2.0/extensions[/{alias}]` |
 * | routes-neutron.ts  | networks, subnets, ports, trunks (+ sub-ports), rbac-policies |
 * | routes-routers.ts  | routers (+ add/remove_router_interface) |
 * | routes-floatingips.ts | floating IPs (+ port_forwardings) |
 * | routes-quotas.ts   | quotas of routers and floating IPs per project (+ default, details) |
 * | routes-esi.ts      | esi's one-call endpoints (`/v2.0/esi/…`) and switch administration (`/v2.0/switches`) |
 *
 * The token check of `src/api/common/auth.ts` guards `/v2.0`; errors are rendered by
 * `./errors.ts` in Neutron's format.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { NetworkApiDeps } from './deps.ts';
import { registerTokenAuth } from '../common/auth.ts';
import { NetworkResourcesResponse, NetworkVersionsResponse } from '../common/version-schemas.ts';
import type { RouteDoc } from '../common/route-doc.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { networkErrorHandler, networkNotFoundHandler } from './errors.ts';
import { registerEsiRoutes } from './routes-esi.ts';
import { refuseOthers, registerNeutronRoutes } from './routes-neutron.ts';
import { registerRouterRoutes } from './routes-routers.ts';
import { registerFloatingIpRoutes } from './routes-floatingips.ts';
import { registerQuotaRoutes } from './routes-quotas.ts';
import { routeDoc } from '../common/route-doc.ts';
import { ExtensionCollection, ExtensionResponse } from './response-schemas-extra.ts';

/** The API extensions esi implements (Neutron aliases). */
const EXTENSIONS: ReadonlyArray<{ alias: string; name: string; description: string }> = [
  { alias: 'provider', name: 'Provider Network', description: 'Expose mapping of virtual networks to physical networks' },
  { alias: 'binding', name: 'Port Binding', description: 'Expose port bindings of a virtual port to external application' },
  { alias: 'trunk', name: 'Trunk Extension', description: 'Provides support for trunk ports' },
  { alias: 'trunk-details', name: 'Trunk port details', description: 'Expose trunk port details' },
  {
    alias: 'rbac-policies',
    name: 'RBAC Policies',
    description: 'Allows creation and modification of policies that control tenant access to resources.',
  },
  { alias: 'network-mtu', name: 'Network MTU', description: 'Provides MTU attribute for a network resource.' },
  { alias: 'project-id', name: 'project_id field enabled', description: 'Extension that indicates that project_id field is enabled.' },
  {
    alias: 'standard-attr-description',
    name: 'standard-attr-description',
    description: 'Extension to add descriptions to standard attributes',
  },
  {
    alias: 'standard-attr-revisions',
    name: 'Resource revision numbers',
    description: 'This extension will display the revision number of neutron resources.',
  },
  {
    alias: 'standard-attr-timestamp',
    name: 'Resource timestamps',
    description: 'Adds created_at and updated_at fields to all Neutron resources that have Neutron standard attributes.',
  },
  {
    alias: 'router',
    name: 'Neutron L3 Router',
    description:
      'Router abstraction for basic L3 forwarding between L2 Neutron networks and access to external networks via a NAT gateway.',
  },
  { alias: 'external-net', name: 'Neutron external network', description: 'Adds external network attribute to network resource.' },
  {
    alias: 'ext-gw-mode',
    name: 'Neutron L3 Configurable external gateway mode',
    description: 'Extension of the router abstraction for specifying whether SNAT should occur on the external gateway',
  },
  {
    alias: 'fip-port-details',
    name: 'Floating IP Port Details Extension',
    description: 'Add port_details attribute to Floating IP resource',
  },
  {
    alias: 'floating-ip-port-forwarding',
    name: 'Floating IP Port Forwarding',
    description: 'Allow port forwarding from floating IP port to an internal port',
  },
  {
    alias: 'floating-ip-port-forwarding-description',
    name: 'Floating IP Port Forwarding new attribute description',
    description: 'Add a description field to Port Forwarding rules',
  },
  {
    alias: 'floating-ip-port-forwarding-port-ranges',
    name: 'Floating IP Port Forwarding support port ranges',
    description: 'Add support to port ranges',
  },
  {
    alias: 'expose-port-forwarding-in-fip',
    name: 'Expose port forwardings in floating IPs',
    description: 'Expose the port forwarding rules of a floating IP in its representation',
  },
  { alias: 'quotas', name: 'Quota management support', description: 'Expose functions for quotas management per project' },
  {
    alias: 'quota_details',
    name: 'Quota details management support',
    description: 'Expose functions for quotas usage statistics per project',
  },
  {
    alias: 'quota-check-limit',
    name: 'Quota engine limit check',
    description: 'Support for checking the resource usage before applying a new quota limit',
  },
  { alias: 'pagination', name: 'Pagination support', description: 'Extension that indicates that pagination is enabled.' },
  { alias: 'sorting', name: 'Sorting support', description: 'Extension that indicates that sorting is enabled.' },
];

const RESOURCES = [
  ['network', 'networks'],
  ['subnet', 'subnets'],
  ['port', 'ports'],
  ['trunk', 'trunks'],
  ['rbac_policy', 'rbac-policies'],
  ['router', 'routers'],
  ['floatingip', 'floatingips'],
] as const;

function extension(e: (typeof EXTENSIONS)[number]) {
  return { ...e, updated: '2013-01-20T10:00:00-00:00', links: [] };
}

/** Registers the network API routes under the prefix given at registration (`/network`). */
export const networkApi: FastifyPluginAsync<{ services: NetworkApiDeps }> = async (app, { services }) => {
  const root = `${services.config.publicUrl}/network`;
  app.setErrorHandler(networkErrorHandler(`${services.config.publicUrl}/identity`));
  app.setNotFoundHandler(networkNotFoundHandler);
  const versions = { versions: [{ status: 'CURRENT', id: 'v2.0', links: [{ href: `${root}/v2.0/`, rel: 'self' }] }] };
  const versionsDoc: RouteDoc = { response: NetworkVersionsResponse, noQuery: true };
  app.get('/', { config: { public: true, doc: versionsDoc } }, async () => versions);
  refuseOthers(app, '/', ['GET']);
  await app.register(
    async (v2) => {
      registerTokenAuth(v2, services.identity.tokens);
      const resourcesDoc: RouteDoc = { response: NetworkResourcesResponse, noQuery: true };
      v2.get('/', { config: { doc: resourcesDoc } }, async () => ({
        resources: RESOURCES.map(([name, coll]) => ({ name, collection: coll, links: [{ href: `${root}/v2.0/${coll}`, rel: 'self' }] })),
      }));
      v2.get('/extensions', { config: { doc: routeDoc({ response: ExtensionCollection, noQuery: true }) } }, async () => ({
        extensions: EXTENSIONS.map(extension),
      }));
      v2.get<{ Params: { alias: string } }>(
        '/extensions/:alias',
        { config: { doc: routeDoc({ response: ExtensionResponse, noQuery: true }) } },
        async (req) => {
          const e = EXTENSIONS.find((x) => x.alias === req.params.alias);
          if (!e)
            throw new NotFoundError(
              'extension',
              req.params.alias,
              `Extension with alias ${req.params.alias} does not exist`,
              'ExtensionNotFound',
            );
          return { extension: extension(e) };
        },
      );
      registerNeutronRoutes(v2, services);
      registerRouterRoutes(v2, services);
      registerFloatingIpRoutes(v2, services);
      registerQuotaRoutes(v2, services);
      registerEsiRoutes(v2, services);
    },
    { prefix: '/v2.0' },
  );
};
