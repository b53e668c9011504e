/**
 * Image member routes of the image API (Glance v2 `image_members.py`):
 *
 * | route                                          | answer |
 * |------------------------------------------------|--------|
 * | `GET /images/{id}/members`                     | 200 `{members, schema}` |
 * | `POST /images/{id}/members` `{"member": …}`    | 200 member (Glance answers 200, not 201) |
 * | `GET /images/{id}/members/{member}`            | 200 member |
 * | `PUT /images/{id}/members/{member}` `{"status": …}` | 200 member |
 * | `DELETE /images/{id}/members/{member}`         | 204 |
 *
 * Each handler: parse → one domain call → render.
 */
import type { FastifyInstance } from 'fastify';
import type { ImageApiDeps } from './deps.ts';
import { renderMember, renderMemberList } from './render.ts';
import { jsonBody, rejectBody } from './wire.ts';
import { MemberCreateBody, MemberStatusBody, parseMemberCreate, parseMemberStatus } from './bodies.ts';
import { MemberCollection, MemberResponse } from './response-schemas.ts';
import { routeDoc } from '../common/route-doc.ts';

type IdParams = { Params: { id: string } };
type MemberParams = { Params: { id: string; member: string } };

/** Register the member routes on the `/v2` plugin. */
export function registerMemberRoutes(app: FastifyInstance, services: ImageApiDeps): void {
  const { members } = services.images;

  app.get<IdParams>(
    '/images/:id/members',
    { config: { doc: routeDoc({ response: MemberCollection, noQuery: true }) } },
    async (request) => {
      rejectBody(request);
      return renderMemberList(await members.list(request.auth, request.params.id));
    },
  );

  const createDoc = { config: { doc: routeDoc({ body: MemberCreateBody, response: MemberResponse }) } };
  app.post<IdParams>('/images/:id/members', createDoc, async (request) => {
    const { member } = parseMemberCreate(jsonBody(request));
    return renderMember(await members.add(request.auth, request.params.id, member));
  });

  app.get<MemberParams>(
    '/images/:id/members/:member',
    { config: { doc: routeDoc({ response: MemberResponse, noQuery: true }) } },
    async (request) => {
      rejectBody(request);
      return renderMember(await members.get(request.auth, request.params.id, request.params.member));
    },
  );

  const statusDoc = { config: { doc: routeDoc({ body: MemberStatusBody, response: MemberResponse }) } };
  app.put<MemberParams>('/images/:id/members/:member', statusDoc, async (request) => {
    const { status } = parseMemberStatus(jsonBody(request), request.params.member);
    return renderMember(await members.setStatus(request.auth, request.params.id, request.params.member, status));
  });

  app.delete<MemberParams>('/images/:id/members/:member', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (request, reply) => {
    rejectBody(request);
    await members.remove(request.auth, request.params.id, request.params.member);
    return reply.code(204).send();
  });
}
