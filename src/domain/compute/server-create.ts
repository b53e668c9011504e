/**
 * Creating servers — reservation and deployment in one step, as Nova does it (docs/scheduling.md)
 * and as metalsmith (https://opendev.org/openstack/metalsmith) and Nova's ironic driver
 * (`nova/virt/ironic/driver.py` in https://opendev.org/openstack/nova) do it on Ironic, in one
 * request:
 *
 * 1. **check** — flavor (visible to the caller; its extra specs make a placement request,
 *    `flavorPlacement`), image (visible, `active`, within the flavor's disk and RAM), key pair
 *    (the caller's), networks (see `ServerNetworks`; without networking only `none`/`auto`);
 * 2. **schedule and claim** — `Placer.place` ranks the nodes the project may use (leased to it,
 *    or owned and not leased) and claims one per server: in ONE transaction the node gets
 *    `instance_uuid` = `allocation_uuid` = the server's UUID and its `instance_info`
 *    (`image_source`, `root_gb`, `display_name`, `vcpus`/`memory_mb`/`local_gb`,
 *    `capabilities`, `traits`, as Nova writes them), the allocation is stored `active` on it and
 *    the server row is inserted. A node another request claimed first is skipped, so concurrent
 *    requests never share a node;
 * 3. fewer than `min_count` placed → every claim is undone and the request fails with 409 and
 *    an explanation of the closest nodes (Nova answers 202 and puts the server in ERROR with
 *    "No valid host was found"; esi places synchronously and says why at once);
 * 4. **networks** — attached to each node (when networking is present);
 * 5. **deploy** — each node is asked to deploy (`active`) with a config drive: `meta_data`
 *    (`uuid`, `name`, `hostname`, `launch_index`, `availability_zone`, `project_id`,
 *    `public_keys` {key name: key}, `keys`, `meta`) and the decoded `user_data`; the conductor
 *    then deploys through the deploy agent as for any provision request.
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import type { JsonObject } from '../inventory/masking.ts';
import type { Node } from '../inventory/model.ts';
import type { NodeChanges } from '../inventory/ports.ts';
import { requesterOf } from '../inventory/requester.ts';
import { flavorPlacement } from '../scheduling/flavor-request.ts';
import type { PlacementRequest, SchedNode } from '../scheduling/model.ts';
import type { Placer } from '../scheduling/placement.ts';
import { describeExplanation } from '../scheduling/scheduler.ts';
import type { FlavorService } from './flavors.ts';
import type { Flavor, FlavorSnapshot, Keypair, Server } from './model.ts';
import { requestDeploy } from './node-ops.ts';
import type { ImageFacts, ImageLookup, NewServer } from './ports.ts';
import { beginDelete, type DeleteDeps } from './server-delete.ts';
import { hostnameOf, type ServerRequest } from './server-input.ts';

/** What server creation needs (deleting too: a create that cannot finish undoes itself). */
export interface CreateDeps extends DeleteDeps {
  readonly flavors: FlavorService;
  readonly images: ImageLookup;
  readonly placer: Placer;
}

/** One server of a request, planned before placement. */
interface Planned {
  readonly uuid: string;
  readonly name: string;
  readonly hostname: string;
  readonly index: number;
}

/** What a create made. */
export interface Created {
  readonly servers: readonly Server[];
  readonly reservationId: string;
}

/** The message of an unplaceable request. */
export const NO_VALID_HOST = 'No valid host was found.';

/** A reservation id: `r-` and 8 random characters of [a-z0-9] (Nova's form). */
function reservationId(): string {
  return `r-${newUuid().replace(/-/g, '').slice(0, 8)}`;
}

function snapshot(f: Flavor): FlavorSnapshot {
  return {
    id: f.flavorid,
    name: f.name,
    vcpus: f.vcpus,
    ram: f.ram,
    disk: f.disk,
    ephemeral: f.ephemeral,
    swap: f.swap,
    extra_specs: { ...f.extra_specs },
  };
}

/**
 * The image a server boots (create and rebuild, Nova's `_check_requested_image`): one the caller
 * may deploy, `active`, within the flavor's disk (GiB, when it has one) and RAM (MiB).
 * @throws InvalidInputError (400): `ImageNotFound` for an image that does not exist or that the
 *   caller may not see or read (one answer, so nothing leaks), `ImageNotActive`,
 *   `FlavorDiskSmallerThanMinDisk`, `FlavorMemoryTooSmall`
 */
export async function checkedImage(
  images: ImageLookup,
  ctx: AuthContext,
  ref: string,
  flavor: { readonly disk: number; readonly ram: number },
): Promise<ImageFacts> {
  let image: ImageFacts;
  try {
    image = await images.get(ctx, ref);
  } catch (err) {
    if (err instanceof NotFoundError || err instanceof InvalidInputError || err instanceof ForbiddenError) {
      throw new InvalidInputError(`Image ${ref} could not be found.`, 'ImageNotFound');
    }
    throw err;
  }
  if (image.status !== 'active') throw new InvalidInputError(`Image ${image.id} is not active (${image.status}).`, 'ImageNotActive');
  if (flavor.disk > 0 && image.min_disk > flavor.disk)
    throw new InvalidInputError("Flavor's disk is too small for requested image.", 'FlavorDiskSmallerThanMinDisk');
  if (image.min_ram > flavor.ram) throw new InvalidInputError("Flavor's memory is too small for requested image.", 'FlavorMemoryTooSmall');
  return image;
}

/** Resolve and check the flavor, the image and the key pair (400 for anything unusable). */
async function resolve(
  deps: CreateDeps,
  ctx: AuthContext,
  req: ServerRequest,
): Promise<{ flavor: Flavor; image: ImageFacts; keypair: Keypair | null }> {
  let flavor: Flavor;
  try {
    flavor = await deps.flavors.get(ctx, req.flavorRef);
  } catch (err) {
    if (err instanceof NotFoundError) throw new InvalidInputError(`Flavor ${req.flavorRef} could not be found.`, 'FlavorNotFound');
    throw err;
  }
  const image = await checkedImage(deps.images, ctx, req.imageRef, flavor);
  let keypair: Keypair | null = null;
  if (req.keyName !== null) {
    keypair = await deps.repo.getKeypair(ctx.userId, req.keyName);
    if (keypair === null) throw new InvalidInputError('Invalid key_name provided.', 'KeypairNotFound');
  }
  return { flavor, image, keypair };
}

/** `instance_info` of a server's node (Nova's deploy patch, `nova/virt/ironic/patcher.py`). */
function instanceInfo(
  flavor: Flavor,
  image: ImageFacts,
  name: string,
  caps: Readonly<Record<string, string>>,
  traits: readonly string[],
): JsonObject {
  const ii: JsonObject = {
    image_source: image.id,
    display_name: name,
    vcpus: String(flavor.vcpus),
    memory_mb: String(flavor.ram),
    local_gb: String(flavor.disk),
  };
  if (flavor.disk > 0) ii.root_gb = String(flavor.disk);
  if (flavor.swap > 0) ii.swap_mb = String(flavor.swap);
  if (Object.keys(caps).length > 0) ii.capabilities = JSON.stringify(caps);
  if (traits.length > 0) ii.traits = [...traits];
  return ii;
}

/** The config drive of one server (Nova's `meta_data.json` keys, and the user data). */
function configDrive(ctx: AuthContext, req: ServerRequest, p: Planned, keypair: Keypair | null): JsonObject {
  const meta: JsonObject = {
    uuid: p.uuid,
    name: p.name,
    hostname: p.hostname,
    launch_index: p.index,
    availability_zone: 'nova',
    project_id: ctx.projectId,
    meta: { ...req.metadata },
    devices: [],
  };
  if (keypair !== null) {
    meta.public_keys = { [keypair.name]: keypair.public_key };
    meta.keys = [{ name: keypair.name, type: keypair.type, data: keypair.public_key }];
  }
  return { meta_data: meta, ...(req.userData !== null ? { user_data: req.userData } : {}) };
}

/**
 * Create the servers of one request (see the module documentation).
 * @throws InvalidInputError (400); ConflictError (409, nothing placeable, with the
 *   explanation); LockedError / InvalidStateError when a node cannot be made to deploy
 */
export async function createServers(deps: CreateDeps, ctx: AuthContext, req: ServerRequest): Promise<Created> {
  const project = ctx.projectId;
  if (project === null) throw new InvalidInputError('A server belongs to a project: use a project-scoped token.');
  const { flavor, image, keypair } = await resolve(deps, ctx, req);
  const placement = flavorPlacement(flavor);
  const requested = Array.isArray(req.networks) ? req.networks : [];
  if (requested.length > 0) {
    if (deps.networks === null) {
      throw new InvalidInputError(
        'networking is not available: this esi has no network service yet; create the server with networks "none" (or "auto").',
        'NetworkingNotAvailable',
      );
    }
    await deps.networks.check(ctx, requested);
  }
  const rid = reservationId();
  const planned: Planned[] = Array.from({ length: req.maxCount }, (_, i) => {
    const uuid = newUuid();
    const name = req.maxCount > 1 ? `${req.name}-${i + 1}` : req.name;
    return { uuid, name, hostname: req.hostname !== null && req.maxCount === 1 ? req.hostname : hostnameOf(name, uuid), index: i };
  });
  const request: PlacementRequest = {
    ...placement,
    candidates: null,
    tenancy: { kind: 'project', projectId: project },
    preferName: null,
    seed: planned[0]!.uuid,
  };
  const fsnap = snapshot(flavor);
  let next = 0;
  const outcome = await deps.placer.place(request, req.maxCount, async (node: SchedNode) => {
    const p = planned[next]!;
    const server: NewServer = {
      uuid: p.uuid,
      name: p.name,
      project_id: project,
      user_id: ctx.userId,
      flavor: fsnap,
      image_id: image.id,
      key_name: keypair?.name ?? null,
      node_uuid: node.uuid,
      reservation_id: rid,
      launch_index: p.index,
      metadata: req.metadata,
      networks: requested,
      description: req.description,
      hostname: p.hostname,
      task_state: null,
      fault: null,
    };
    const changes: NodeChanges = {
      instance_info: instanceInfo(flavor, image, p.name, placement.instanceCapabilities, placement.requiredTraits),
    };
    const allocation = {
      uuid: p.uuid,
      name: null,
      state: 'active' as const,
      last_error: null,
      resource_class: node.resourceClass,
      traits: placement.requiredTraits,
      candidate_nodes: [],
      extra: { server_name: p.name },
      owner: project,
    };
    const r = await deps.repo.insertServerClaim(server, allocation, { nodeUuid: node.uuid, version: node.version, changes }, deps.now());
    if (r.ok) next++;
    return r;
  });
  const placed = outcome.placed;
  if (placed.length < req.minCount) {
    await undo(
      deps,
      placed.map((x, i) => ({ server: planned[i]!.uuid, node: x.written })),
    );
    const explanation = describeExplanation(await deps.placer.explain(request));
    const got = placed.length > 0 ? ` Only ${placed.length} of the ${req.minCount} servers asked for could be placed.` : '';
    throw new ConflictError(
      `${NO_VALID_HOST} There are not enough bare-metal nodes available for flavor ${flavor.name}:${got} ${explanation}`,
      'NoValidHost',
    );
  }
  // Attach networks and start each deploy; a node that cannot start (it went into maintenance,
  // a conductor kept holding it) loses its claim.
  const started: Server[] = [];
  let failure: Error | null = null;
  for (let i = 0; i < placed.length; i++) {
    const p = planned[i]!;
    const node = placed[i]!.written;
    try {
      if (requested.length > 0 && deps.networks !== null) await deps.networks.attach(ctx, node.uuid, p.uuid, requested);
      await requestDeploy(deps.access, requesterOf(ctx), node.uuid, p.uuid, configDrive(ctx, req, p, keypair), deps.sleep);
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
      if (requested.length > 0 && deps.networks !== null)
        await deps.networks.release(node.uuid, { uuid: p.uuid, project_id: project, networks: requested }).catch(() => undefined);
      await undo(deps, [{ server: p.uuid, node }]);
      continue;
    }
    const s = await deps.repo.getServer(p.uuid);
    if (s !== null) started.push(s);
  }
  if (started.length < req.minCount) {
    for (const s of started) await beginDelete(deps, s);
    throw failure ?? new ConflictError(`${NO_VALID_HOST} The servers could not be started.`, 'NoValidHost');
  }
  return { servers: started, reservationId: rid };
}

/** Undo claims that never deployed (see `ComputeRepository.discardServerClaim`). */
async function undo(deps: CreateDeps, claims: ReadonlyArray<{ server: string; node: Node }>): Promise<void> {
  for (const c of claims) {
    let version = c.node.version;
    for (let attempt = 0; attempt < 20; attempt++) {
      const r = await deps.repo.discardServerClaim(c.server, c.node.uuid, version, deps.now());
      if (r.ok || r.reason === 'missing') break;
      if (r.reason === 'locked') await deps.sleep(100);
      const fresh = await deps.access.deps.nodes.get(c.node.uuid);
      if (fresh === null || fresh.instance_uuid !== c.server) break;
      version = fresh.version;
    }
  }
}
