/**
 * Ports of the leasing area: what leasing needs from the inventory (nodes) and from identity
 * (projects). The composition root (`src/server/container.ts`) plugs in implementations:
 * the node gateway comes from the inventory area, the project directory from identity.
 *
 * Compared with esi-leap, which calls Ironic and Keystone over HTTP per request, these calls
 * stay in process and are batched (`findMany`, `namesOf`), so list endpoints never make one
 * query per row.
 */
import type { AuthContext } from '../auth.ts';

/** What leasing reads of a node (an Ironic node as esi-leap's `ironic_node` resource). */
export interface LeasableNode {
  readonly uuid: string;
  readonly name: string | null;
  /** Owner project id, or null. */
  readonly owner: string | null;
  /** Current lessee project id, or null. */
  readonly lessee: string | null;
  readonly resource_class: string | null;
  /** Traits of the node (sorted), matched by lease requests. */
  readonly traits: readonly string[];
  /** Node properties, including `lease_uuid` while a lease is applied. */
  readonly properties: Readonly<Record<string, unknown>>;
  readonly provision_state: string;
  readonly target_provision_state: string | null;
  readonly power_state: string | null;
  readonly target_power_state: string | null;
  readonly maintenance: boolean;
}

/**
 * Thrown by {@link NodeGateway} when the node's current state refuses the change for now
 * (e.g. it is locked by a running task, or still being torn down or cleaned after the previous
 * tenant); the lease goes to a `wait …` status and is retried.
 */
export class NodeBusyError extends Error {}

/** Access to nodes for leasing. No policy checks except in `listVisible`. */
export interface NodeGateway {
  /** A node by UUID or name, or null when there is none. */
  find(ident: string): Promise<LeasableNode | null>;
  /** Nodes by UUID, in one query; missing ones are absent from the map. */
  findMany(uuids: readonly string[]): Promise<Map<string, LeasableNode>>;
  /**
   * Nodes the caller may see under the baremetal policy (`baremetal:node:list` filtering:
   * admins see all, projects see nodes they own or lease), optionally filtered by owner,
   * lessee (project ids) and resource class.
   */
  listVisible(ctx: AuthContext, filter: { owner?: string; lessee?: string; resourceClass?: string }): Promise<LeasableNode[]>;
  /**
   * Every node of a resource class, read narrowly (the leasing fields only), with no visibility
   * filter: lease requests match offered nodes by hardware, whoever may see them.
   */
  listByResourceClass(resourceClass: string): Promise<LeasableNode[]>;
  /**
   * Apply a lease: set the node's `lessee` to the lessee project and
   * `properties.lease_uuid` to the lease (esi-leap "fulfill") — the hand-over of the node to a
   * tenant. Unlike esi-leap, only a node that is settled and owes no wipe is handed over: in a
   * stable state with nothing pending (no teardown, cleaning or deploy in progress or failed),
   * and carrying no lease but this one or `replaces`. Otherwise the node is busy and the lease
   * manager retries (docs/architecture.md: the node is undeployed and cleaned before it is leased
   * again).
   * @param replaces the lease the node may carry now and that this one takes over from (the
   *   parent of a sub-lease), or null
   * @throws NodeBusyError when the node cannot be handed over right now
   */
  applyLease(nodeUuid: string, leaseUuid: string, lesseeProjectId: string, replaces?: string | null): Promise<void>;
  /**
   * Remove a lease from the node, only if `properties.lease_uuid` names it: clear `lessee`,
   * `lease_uuid`, `instance_info` and `extra`, disable the console, and undeploy the node
   * when it is deployed (active, deploy failed, wait call-back, deploying…) so it is cleaned,
   * else detach its VIFs (esi-leap `remove_lease`, `esi_leap/resource_objects/ironic_node.py`).
   * @returns false when the node does not carry this lease (nothing was changed)
   * @throws NodeBusyError when the node cannot be changed right now; the lessee's access
   *   (`lessee`, console) has then already been ended, and the lease stays recorded on the node
   *   so that a retry finishes the removal
   */
  removeLease(nodeUuid: string, leaseUuid: string): Promise<boolean>;
}

/** Access to projects for leasing (names, subtree rules). */
export interface ProjectDirectory {
  /**
   * A project by id or name.
   * @throws NotFoundError when there is none; ConflictError when a name is ambiguous
   */
  resolve(ident: string): Promise<{ id: string; name: string }>;
  /** Names of projects by id, in one query; unknown ids are absent. */
  namesOf(ids: Iterable<string>): Promise<Map<string, string>>;
  /** Ancestor ids of a project, nearest first. */
  ancestors(projectId: string): Promise<string[]>;
}
