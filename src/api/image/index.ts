/**
 * The image API plugin: a Glance v2 subset at `/image` (registered by `src/server/app.ts` with
 * prefix `/image`; the catalogue announces `<public>/image` as service type `image`, and
 * clients discover `/image/v2` from the version document there). Wire-compatible with
 * openstacksdk (Debian's `openstack image …`) and python-glanceclient.
 *
 * | file               | routes |
 * |--------------------|--------|
 * | routes-root.ts     | `GET /image/`, `GET /image/versions` (public), `/v2/schemas/*`, 405s |
 * | routes-images.ts   | `/v2/images`, `/v2/images/{id}`, tags, deactivate/reactivate |
 * | routes-data.ts     | `/v2/images/{id}/file` (streamed upload and download) |
 * | routes-members.ts  | `/v2/images/{id}/members`, `/v2/images/{id}/members/{member}` |
 *
 * Bodies: `application/json` and the JSON-patch media types are parsed (within the global body
 * limit); any other media type reaches the handler as the unread request stream: the upload
 * route streams it to the image store (no global body limit, nothing buffered), the others
 * refuse it with 415. On the data routes every body stays unread. Errors of every kind are
 * rendered by `./errors.ts` in WebOb's format. The token check of `src/api/common/auth.ts`
 * guards `/v2`.
 */
import type { FastifyPluginAsync, HTTPMethods } from 'fastify';
import type { ImageApiDeps } from './deps.ts';
import { registerTokenAuth } from '../common/auth.ts';
import { imageErrorHandler, imageNotFoundHandler } from './errors.ts';
import { registerDataRoutes } from './routes-data.ts';
import { registerImageRoutes } from './routes-images.ts';
import { registerMemberRoutes } from './routes-members.ts';
import { refuseOtherMethods, registerSchemaRoutes, registerVersionRoutes } from './routes-root.ts';
import { PATCH_MEDIA_TYPES } from './wire.ts';

/** Paths of `/v2` and the methods each serves (the rest answer 405). */
const V2_PATHS: ReadonlyArray<[string, HTTPMethods[], boolean?]> = [
  ['/images', ['GET', 'POST']],
  ['/images/:id', ['GET', 'PATCH', 'DELETE']],
  ['/images/:id/file', ['GET', 'PUT'], false],
  ['/images/:id/tags/:tag', ['PUT', 'DELETE']],
  ['/images/:id/members', ['GET', 'POST']],
  ['/images/:id/members/:member', ['GET', 'PUT', 'DELETE']],
  ['/images/:id/actions/deactivate', ['POST']],
  ['/images/:id/actions/reactivate', ['POST']],
  ['/schemas/image', ['GET']],
  ['/schemas/images', ['GET']],
  ['/schemas/member', ['GET']],
  ['/schemas/members', ['GET']],
];

/** Registers the image API routes under the prefix given at registration (`/image`). */
export const imageApi: FastifyPluginAsync<{ services: ImageApiDeps }> = async (app, { services }) => {
  app.setErrorHandler(imageErrorHandler(`${services.config.publicUrl}/identity`));
  app.setNotFoundHandler(imageNotFoundHandler);
  app.removeContentTypeParser(['text/plain']);
  app.addContentTypeParser(Object.keys(PATCH_MEDIA_TYPES), { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'));
  // Any other media type reaches the handler unread, which refuses it with Glance's 415
  // (and, for PATCH, the `Accept-Patch` header).
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  registerVersionRoutes(app, services);
  await app.register(
    async (v2) => {
      registerTokenAuth(v2, services.identity.tokens);
      registerImageRoutes(v2, services);
      await v2.register(async (data) => {
        // Data routes: any body is the request stream itself, unread, so the upload route
        // judges the media type (415) and the image store reads the data as it arrives.
        data.removeAllContentTypeParsers();
        data.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
        registerDataRoutes(data, services);
      });
      registerMemberRoutes(v2, services);
      registerSchemaRoutes(v2);
      for (const [url, methods, headServed] of V2_PATHS) refuseOtherMethods(v2, url, methods, headServed ?? true);
    },
    { prefix: '/v2' },
  );
};
