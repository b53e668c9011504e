/**
 * The ramdisk (deploy agent) endpoints (https://docs.openstack.org/api-ref/baremetal/#utility),
 * public — the agent has no Keystone token:
 *
 * - `GET /v1/lookup?addresses=<mac,…>&node_uuid=<uuid>` (≥ 1.22; older versions: 404 as the
 *   route did not exist): `{node: {uuid, properties, instance_info, driver_internal_info,
 *   links}, config: {heartbeat_timeout, agent_token, agent_token_required, …}}`.
 * - `POST /v1/heartbeat/{node_ident}` (≥ 1.22) with `{callback_url, agent_token,
 *   agent_version?, agent_status?, agent_status_message?, agent_verify_ca?}` → 202, no body.
 *
 * The rules (tokens, lookup states, resuming the conductor) are in src/domain/deploy/ramdisk.ts.
 */
import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../../domain/errors.ts';
import { empty, type BaremetalContext } from './context.ts';
import { readQuery } from './query.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import { HeartbeatBody, parseHeartbeat } from './resource-body-schemas.ts';
import { LookupResponse } from './response-schemas-services.ts';

const LOOKUP_PARAMS = new Set(['addresses', 'node_uuid']);
const NO_PARAMS = new Set<string>();
/** The first API version with the ramdisk endpoints in this form. */
const MIN_RAMDISK_MINOR = 22;

/** Register the ramdisk routes. */
export function ramdiskRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const ramdisk = ctx.services.ramdisk;

  app.get(
    '/lookup',
    { config: { public: true, doc: routeDoc({ query: queryDoc(LOOKUP_PARAMS), response: LookupResponse }) } },
    async (req) => {
      if (req.ironicVersion < MIN_RAMDISK_MINOR) throw new NotFoundError('resource', 'lookup', 'The resource could not be found.');
      const q = readQuery(req.query, LOOKUP_PARAMS);
      const found = await ramdisk.lookup(q.addresses, q.node_uuid);
      const links = [
        { href: `${ctx.base}/v1/nodes/${found.node.uuid}`, rel: 'self' },
        { href: `${ctx.base}/nodes/${found.node.uuid}`, rel: 'bookmark' },
      ];
      return { node: { ...found.node, links }, config: found.config };
    },
  );

  const heartbeatDoc = routeDoc({ body: HeartbeatBody, answer: 'empty' });
  app.post<{ Params: { ident: string } }>('/heartbeat/:ident', { config: { public: true, doc: heartbeatDoc } }, async (req, reply) => {
    if (req.ironicVersion < MIN_RAMDISK_MINOR) throw new NotFoundError('resource', 'heartbeat', 'The resource could not be found.');
    readQuery(req.query, NO_PARAMS);
    const body = parseHeartbeat(req.body);
    await ramdisk.heartbeat(req.params.ident, {
      callbackUrl: body.callback_url,
      agentToken: body.agent_token,
      agentVersion: body.agent_version,
      agentStatus: body.agent_status,
      agentStatusMessage: body.agent_status_message,
    });
    return empty(reply, 202);
  });
}
