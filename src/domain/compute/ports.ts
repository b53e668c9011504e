/**
 * Ports of the compute area: its storage (flavors, access lists, key pairs, servers), and
 * what it needs from other areas — images (by the caller's view), projects (existence), and
 * networks (the seam for the networking work: VIFs attached through the standard route).
 * Implemented by `src/store/compute/` and the composition root.
 */
import type { AuthContext } from '../auth.ts';
import type { NewAllocation, ClaimResult, ClaimTarget, NodeGuardedResult } from '../scheduling/ports.ts';
import type { Flavor, Keypair, RequestedNetwork, Server, ServerFault } from './model.ts';

/** A new flavor row. */
export type NewFlavor = Omit<Flavor, 'id' | 'created_at' | 'updated_at'>;
/** Flavor columns an update may change. */
export type FlavorChanges = Partial<Pick<Flavor, 'description' | 'extra_specs'>>;

/** One page of a flavor list. */
export interface FlavorListQuery {
  /** Only public flavors and private ones this project may use; null: every flavor. */
  readonly project: string | null;
  /** true: public only; false: private only; null: both. */
  readonly isPublic: boolean | null;
  /** At least this much RAM (MiB) / disk (GiB). */
  readonly minRam?: number;
  readonly minDisk?: number;
  /** `flavorid`, `name`, `memory_mb`/`ram`, `vcpus`, `root_gb`/`disk`, `created_at`… (see the store). */
  readonly sortKey: string;
  readonly sortDir: 'asc' | 'desc';
  readonly limit: number;
  readonly marker: Flavor | null;
}

/** A new key pair row. */
export type NewKeypair = Omit<Keypair, 'id' | 'created_at'>;

/** A new server row. */
export type NewServer = Omit<Server, 'id' | 'created_at' | 'updated_at' | 'deleted_at'>;
/** Server columns an update may change. */
export type ServerChanges = Partial<
  Pick<Server, 'task_state' | 'fault' | 'deleted_at' | 'name' | 'description' | 'metadata' | 'image_id' | 'key_name' | 'hostname'>
>;

/** Server list query (status filters apply after the node is read, in the domain). */
export interface ServerListQuery {
  /** Only this project's servers; null: every project. */
  readonly project: string | null;
  /** Include deleted servers. */
  readonly includeDeleted: boolean;
  /** Only servers changed (or deleted) at or after this time (epoch ms). */
  readonly changedSince?: number;
  readonly imageId?: string;
  readonly flavorId?: string;
  readonly reservationId?: string;
  /** Only deleted (true) or only live (false) servers. */
  readonly deleted?: boolean;
  readonly limit: number;
  readonly marker: Server | null;
  /** `created_at` (default), `updated_at`, `display_name`, `uuid`. */
  readonly sortKey: string;
  readonly sortDir: 'asc' | 'desc';
}

/** Storage of the compute area. Unique clashes throw `ConflictError`. */
export interface ComputeRepository {
  getFlavor(flavorid: string): Promise<Flavor | null>;
  getFlavorByName(name: string): Promise<Flavor | null>;
  listFlavors(query: FlavorListQuery): Promise<Flavor[]>;
  /** Insert a flavor and its initial access list. @throws ConflictError on a duplicate id or name */
  insertFlavor(flavor: NewFlavor, projects: readonly string[], now: number): Promise<Flavor>;
  /** @returns the flavor, or null when gone */
  updateFlavor(flavorid: string, changes: FlavorChanges, now: number): Promise<Flavor | null>;
  /** @returns false when gone */
  deleteFlavor(flavorid: string): Promise<boolean>;
  /** Projects of a flavor's access list, sorted. */
  flavorProjects(flavorId: number): Promise<string[]>;
  /** Whether a project is on a flavor's access list. */
  hasFlavorAccess(flavorId: number, project: string): Promise<boolean>;
  /** @returns false when the project was already there */
  addFlavorProject(flavorId: number, project: string): Promise<boolean>;
  /** @returns false when the project was not there */
  removeFlavorProject(flavorId: number, project: string): Promise<boolean>;

  getKeypair(userId: string, name: string): Promise<Keypair | null>;
  /** A user's key pairs by name, after `marker` (a name), at most `limit`. */
  listKeypairs(userId: string | null, limit: number, marker: string | null): Promise<Keypair[]>;
  /** @throws ConflictError when the user has a key pair of that name */
  insertKeypair(keypair: NewKeypair, now: number): Promise<Keypair>;
  /** @returns false when gone */
  deleteKeypair(userId: string, name: string): Promise<boolean>;

  /** A server by UUID (deleted ones too), or null. */
  getServer(uuid: string): Promise<Server | null>;
  listServers(query: ServerListQuery): Promise<Server[]>;
  /**
   * Create a server on a node in one transaction: claim the node (`ClaimTarget`, as for
   * allocations), insert its allocation (`active` on the node) and the server.
   * @returns the claim's outcome (nothing is written unless it is ok)
   */
  insertServerClaim(server: NewServer, allocation: NewAllocation, target: ClaimTarget, now: number): Promise<ClaimResult>;
  /**
   * Undo a server claim that never deployed (a create that could not place enough servers):
   * in one transaction the node loses the instance (`instance_uuid`, `allocation_uuid`,
   * `instance_info` cleared) if it still has `nodeVersion` and no conductor holds it, and the
   * allocation and the server rows are deleted.
   */
  discardServerClaim(serverUuid: string, nodeUuid: string, nodeVersion: number, now: number): Promise<NodeGuardedResult<null>>;
  /** @returns the server, or null when gone */
  updateServer(uuid: string, changes: ServerChanges, now: number): Promise<Server | null>;
  /** Servers that wait for their delete to reach the node (`task_state` deleting, not deleted). */
  listDeleting(limit: number): Promise<Server[]>;
  /**
   * Mark a server deleted whose allocation is already gone (the release rule normally does it).
   * @returns false when it was already deleted
   */
  markDeleted(uuid: string, fault: ServerFault | null, now: number): Promise<boolean>;
}

/** An image as the compute area needs it. */
export interface ImageFacts {
  readonly id: string;
  readonly name: string | null;
  readonly status: string;
  /** GiB. */
  readonly min_disk: number;
  /** MiB. */
  readonly min_ram: number;
}

/** Images as the caller sees them. */
export interface ImageLookup {
  /** An image whose data the caller may deploy. @throws NotFoundError (unknown or invisible), ForbiddenError (visible, not readable) */
  get(ctx: AuthContext, id: string): Promise<ImageFacts>;
}

/** Projects, for access lists. */
export interface ProjectLookup {
  /** True when a project with this id exists. */
  exists(projectId: string): Promise<boolean>;
}

/**
 * Networks for servers — the seam for the networking work. When a process has it, a server's
 * `networks` are checked before placement and attached to the node (a network port per
 * network, bound as a VIF through the baremetal VIF route) before the deploy starts; without
 * it, the compute API refuses `networks` other than `none`/`auto` with 400 "networking is not
 * available".
 */
export interface ServerNetworks {
  /** Check that the caller may use these networks. @throws InvalidInputError, NotFoundError */
  check(ctx: AuthContext, networks: readonly RequestedNetwork[]): Promise<void>;
  /**
   * Attach the networks to the node of a server (called after the claim, before the deploy).
   * @returns the ids of the network ports made (VIFs), for the server's delete
   */
  attach(ctx: AuthContext, nodeUuid: string, serverUuid: string, networks: readonly RequestedNetwork[]): Promise<string[]>;
  /**
   * Detach and remove what {@link attach} made (server delete, failed create): only ports of
   * the server's own project are touched, and the ports the request named (`networks[].port`)
   * are detached but kept.
   */
  release(nodeUuid: string, server: ServerNetworksOwner): Promise<void>;
}

/** The server whose networks {@link ServerNetworks.release} releases: its id, project and request. */
export type ServerNetworksOwner = Pick<Server, 'uuid' | 'project_id' | 'networks'>;
