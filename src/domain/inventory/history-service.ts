/**
 * The API side of node history (Ironic API 1.78 `GET /v1/nodes/{node}/history[/{uuid}]`): a
 * node's entries under `baremetal:node:history:get` (./history.ts describes the journal).
 */
import type { AuthContext } from '../auth.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import type { NodeHistoryEntry, NodeHistoryRepository } from './history.ts';
import type { NodeAccess } from './node-access.ts';
import { canonicalUuid } from './validation.ts';

/** The API side: listing and reading a node's history. */
export class NodeHistoryService {
  constructor(
    private readonly access: NodeAccess,
    private readonly repository: NodeHistoryRepository,
  ) {}

  /**
   * A page of the node's history, oldest first (`GET /v1/nodes/{node}/history`).
   * @throws NotFoundError when the node is missing or hidden, or the marker is unknown;
   *   ForbiddenError without `baremetal:node:history:get`; InvalidInputError for a bad marker
   */
  async list(
    ctx: AuthContext,
    ident: string,
    marker: string | null,
    limit: number,
  ): Promise<{ nodeUuid: string; entries: NodeHistoryEntry[] }> {
    const node = await this.access.visible(ctx, ident, 'baremetal:node:history:get');
    let m: string | null = null;
    if (marker !== null) {
      m = canonicalUuid(marker);
      if (m === null) throw new InvalidInputError(`Expected a UUID for marker: ${marker}`);
      if ((await this.repository.get(node.id, m)) === null) throw historyNotFound(marker);
    }
    return { nodeUuid: node.uuid, entries: await this.repository.list({ nodeId: node.id, marker: m, limit }) };
  }

  /**
   * One entry (`GET /v1/nodes/{node}/history/{uuid}`); an entry of another node is not found.
   * @throws NotFoundError (NodeHistoryNotFound), as for {@link list}
   */
  async get(ctx: AuthContext, ident: string, eventUuid: string): Promise<{ nodeUuid: string; entry: NodeHistoryEntry }> {
    const node = await this.access.visible(ctx, ident, 'baremetal:node:history:get');
    const uuid = canonicalUuid(eventUuid);
    const entry = uuid === null ? null : await this.repository.get(node.id, uuid);
    if (entry === null) throw historyNotFound(eventUuid);
    return { nodeUuid: node.uuid, entry };
  }
}

/** Ironic's `NodeHistoryNotFound` (404). */
function historyNotFound(id: string): NotFoundError {
  return new NotFoundError('history', id, `Node history record ${id} could not be found.`, 'NodeHistoryNotFound');
}
