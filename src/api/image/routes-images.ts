/**
 * Image metadata routes of the image API (Glance v2, under `/image/v2`):
 *
 * | route                                        | answer |
 * |----------------------------------------------|--------|
 * | `GET /images`                                | 200 list (`first`, `next`, `schema`) |
 * | `POST /images`                               | 201 image, `Location` |
 * | `GET /images/{id}`                           | 200 image |
 * | `PATCH /images/{id}` (JSON-patch media types) | 200 image |
 * | `DELETE /images/{id}`                        | 204 |
 * | `PUT`/`DELETE /images/{id}/tags/{tag}`       | 204 |
 * | `POST /images/{id}/actions/deactivate`, `…/reactivate` | 204 |
 *
 * Each handler: parse → one domain call → render.
 */
import type { FastifyInstance } from 'fastify';
import type { ImageApiDeps } from './deps.ts';
import { renderImage, renderImageList } from './render.ts';
import { queryPairs } from '../common/query.ts';
import { IMAGE_LIST_QUERY, jsonBody, mediaType, parseListQuery, rejectBody } from './wire.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import { ImageCollection, ImageResponse } from './response-schemas.ts';
import { ImageCreateBody, parseImageCreate, parseImagePatch, PATCH_BODIES } from './bodies.ts';

type IdParams = { Params: { id: string } };
type TagParams = { Params: { id: string; tag: string } };

/** Register the image metadata routes on the `/v2` plugin. */
export function registerImageRoutes(app: FastifyInstance, services: ImageApiDeps): void {
  const { images } = services.images;
  const base = `${services.config.publicUrl}/image`;

  app.get(
    '/images',
    {
      config: {
        doc: routeDoc({
          query: queryDoc(IMAGE_LIST_QUERY, 'Any other parameter name filters on the custom image property of that name.'),
          response: ImageCollection,
        }),
      },
    },
    async (request) => {
      rejectBody(request);
      const params = queryPairs(request);
      const page = await images.list(request.auth, parseListQuery(params));
      return renderImageList(page.images, params, page.nextMarker);
    },
  );

  app.post('/images', { config: { doc: routeDoc({ body: ImageCreateBody, response: ImageResponse }) } }, async (request, reply) => {
    const image = await images.create(request.auth, parseImageCreate(jsonBody(request)));
    return reply.code(201).header('location', `${base}/v2/images/${image.id}`).send(renderImage(image));
  });

  app.get<IdParams>('/images/:id', { config: { doc: routeDoc({ response: ImageResponse, noQuery: true }) } }, async (request) => {
    rejectBody(request);
    return renderImage(await images.get(request.auth, request.params.id));
  });

  app.patch<IdParams>(
    '/images/:id',
    { config: { doc: routeDoc({ bodyByMediaType: PATCH_BODIES, response: ImageResponse }) } },
    async (request) => {
      const { changes, draft4 } = parseImagePatch(mediaType(request), request.body);
      return renderImage(await images.update(request.auth, request.params.id, changes, draft4));
    },
  );

  app.delete<IdParams>('/images/:id', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (request, reply) => {
    rejectBody(request);
    await images.delete(request.auth, request.params.id);
    return reply.code(204).send();
  });

  app.put<TagParams>('/images/:id/tags/:tag', { config: { doc: routeDoc({ noBody: true, answer: 'empty' }) } }, async (request, reply) => {
    await images.addTag(request.auth, request.params.id, request.params.tag);
    return reply.code(204).send();
  });

  app.delete<TagParams>('/images/:id/tags/:tag', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (request, reply) => {
    rejectBody(request);
    await images.removeTag(request.auth, request.params.id, request.params.tag);
    return reply.code(204).send();
  });

  for (const action of ['deactivate', 'reactivate'] as const) {
    app.post<IdParams>(
      `/images/:id/actions/${action}`,
      { config: { doc: routeDoc({ noBody: true, answer: 'empty' }) } },
      async (request, reply) => {
        await images.setActivation(request.auth, request.params.id, action);
        return reply.code(204).send();
      },
    );
  }
}
