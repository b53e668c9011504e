/**
 * The compute API plugin: a Nova v2.1 subset at `/compute` (the catalogue announces
 * `<public>/compute/v2.1` as service type `compute`, name `nova`, as devstack does), for
 * bare-metal servers: flavors, key pairs and servers. Wire-compatible with openstacksdk and
 * python-novaclient (Debian's `openstack flavor|keypair|server …`).
 *
 * | path (below the prefix)            | module               |
 * |------------------------------------|----------------------|
 * | `/`, `/v2.1` (version documents, public) | this file      |
 * | `/v2.1/flavors…`                   | `routes-flavors.ts`  |
 * | `/v2.1/os-keypairs…`               | `routes-keypairs.ts` |
 * | `/v2.1/servers…`                   | `routes-servers.ts`  |
 * | `/v2.1/servers/{id}/action`        | `routes-server-actions.ts` |
 *
 * Cross-cutting: Keystone token auth (`src/api/common/auth.ts`), microversion negotiation and
 * headers (`microversion.ts`), JSON bodies whatever the content type (an empty body counts as
 * none), Nova's error format (`errors.ts`), 405 for other methods on known paths.
 */
import type { FastifyInstance, FastifyPluginAsync, HTTPMethods } from 'fastify';
import type { Compute } from '../../domain/compute/index.ts';
import type { ComputeApiDeps } from './deps.ts';
import { registerTokenAuth } from '../common/auth.ts';
import { MethodNotAllowed, novaErrorHandler, sendNovaError } from './errors.ts';
import { MIN_MINOR, negotiateNovaVersion, setVersionHeaders } from './microversion.ts';
import { versionObject } from './render.ts';
import { flavorRoutes } from './routes-flavors.ts';
import { keypairRoutes } from './routes-keypairs.ts';
import { serverActionRoutes } from './routes-server-actions.ts';
import { serverRoutes } from './routes-servers.ts';
import { REFUSAL, routeDoc } from '../common/route-doc.ts';
import { ComputeVersionResponse, ComputeVersionsResponse } from '../common/version-schemas.ts';

/** Paths of `/v2.1` and the methods each serves (others answer 405). */
const PATHS: ReadonlyArray<[string, HTTPMethods[]]> = [
  ['/flavors', ['GET', 'POST']],
  ['/flavors/detail', ['GET']],
  ['/flavors/:id', ['GET', 'PUT', 'DELETE']],
  ['/flavors/:id/os-extra_specs', ['GET', 'POST']],
  ['/flavors/:id/os-extra_specs/:key', ['GET', 'PUT', 'DELETE']],
  ['/flavors/:id/os-flavor-access', ['GET']],
  ['/flavors/:id/action', ['POST']],
  ['/os-keypairs', ['GET', 'POST']],
  ['/os-keypairs/:name', ['GET', 'DELETE']],
  ['/servers', ['GET', 'POST']],
  ['/servers/detail', ['GET']],
  ['/servers/:id', ['GET', 'DELETE']],
  ['/servers/:id/action', ['POST']],
];
const ALL_METHODS: readonly HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Bodies are JSON whatever the declared content type; an empty body counts as none. */
function registerJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    // Fastify's JSON parser answers through `done`; the promise it may return carries nothing.
    void parseJson(req, text, done);
  });
}

/** Registers the compute API under the prefix given at registration (`/compute`). */
export const computeApi: FastifyPluginAsync<{ services: ComputeApiDeps; compute: Compute }> = async (app, { services, compute }) => {
  const base = `${services.config.publicUrl}${app.prefix}`;
  app.setErrorHandler(novaErrorHandler(`${services.config.publicUrl}/identity`));
  app.setNotFoundHandler((_req, reply) => sendNovaError(reply, 404, 'The resource could not be found.'));
  registerJsonParser(app);
  app.get('/', { config: { public: true, doc: routeDoc({ response: ComputeVersionsResponse, noQuery: true }) } }, async () => ({
    versions: [{ ...versionObject(base), links: [{ rel: 'self', href: `${base}/v2.1/` }] }],
  }));
  await app.register(
    async (v21) => {
      v21.decorateRequest('novaVersion', MIN_MINOR);
      v21.addHook('onRequest', async (req, reply) => {
        req.novaVersion = MIN_MINOR;
        req.novaVersion = negotiateNovaVersion(req);
        setVersionHeaders(reply, req.novaVersion);
      });
      registerTokenAuth(v21, services.identity.tokens);
      v21.get('/', { config: { public: true, doc: routeDoc({ response: ComputeVersionResponse, noQuery: true }) } }, async () => ({
        version: versionObject(base),
      }));
      flavorRoutes(v21, compute, base);
      keypairRoutes(v21, compute, base);
      serverRoutes(v21, compute, base);
      serverActionRoutes(v21, compute.actions, base);
      for (const [url, methods] of PATHS) {
        const served = new Set<HTTPMethods>([...methods, ...(methods.includes('GET') ? (['HEAD'] as HTTPMethods[]) : [])]);
        v21.route({
          method: ALL_METHODS.filter((m) => !served.has(m)),
          url,
          config: { doc: REFUSAL },
          handler: async (req) => {
            throw new MethodNotAllowed(`The method ${req.method} is not allowed for this resource.`);
          },
        });
      }
    },
    { prefix: '/v2.1' },
  );
};
