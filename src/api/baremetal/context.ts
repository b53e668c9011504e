/**
 * What every baremetal route module receives, and small request helpers shared by them.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError } from '../../domain/errors.ts';
import type { Inventory } from '../../domain/inventory/index.ts';
import { isUuidLike } from '../../domain/ids.ts';
import type { BaremetalApiDeps } from './deps.ts';
import type { NodeRenderCache } from './render-cache.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Negotiated Ironic minor version of this request (1 … 82). */
    ironicVersion: number;
  }
}

/** Shared state of the baremetal routes. */
export interface BaremetalContext {
  readonly services: BaremetalApiDeps;
  readonly inventory: Inventory;
  /** Public URL of the service, `<publicUrl>/baremetal` (the catalogue endpoint). */
  readonly base: string;
  /** Rendered full-node JSON, reused across requests while nodes do not change. */
  readonly cache: NodeRenderCache;
}

/**
 * The node identifier of a route (`:ident`). Before 1.5 only UUIDs identify nodes; a name
 * then finds nothing (Ironic raises NodeNotFound).
 * @throws NotFoundError for a name before 1.5
 */
export function nodeIdent(request: FastifyRequest, ident: string): string {
  if (request.ironicVersion < 5 && !isUuidLike(ident.replace(/\.json$/, ''))) throw new NotFoundError('node', ident);
  return ident;
}

/** Reply with a status and no body and no content type (Ironic's 202/204). */
export function empty(reply: FastifyReply, status: 202 | 204, location?: string): FastifyReply {
  if (location !== undefined) reply.header('location', location);
  return reply.code(status).send();
}

/** Route parameters of node sub-resources. */
export interface IdentParams {
  ident: string;
}
