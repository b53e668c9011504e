/**
 * Rebuilding a server = re-deploying its node with a (new) image, as Nova's ironic driver does
 * (`nova/virt/ironic/driver.py` `rebuild`): the node's `instance_info` gets the new
 * `image_source`, then Ironic's `rebuild` provision verb runs with a fresh config drive.
 *
 * 1. **check** — the image is one the caller may deploy, `active`, within the server's flavor
 *    (`checkedImage`: 400 `Image … could not be found.` otherwise, as Nova); a `key_name` is a
 *    key pair of the caller (400 `Invalid key_name provided.`). Nothing is written before;
 * 2. the server is marked `task_state` rebuilding (its status is `REBUILD` while the node
 *    deploys, ./server-status.ts);
 * 3. the node's `instance_info` gets `image_source` (and `display_name`, `preserve_ephemeral`) —
 *    a write made for the server, like the create's claim, with no node policy (the server's
 *    `os_compute_api:servers:rebuild` was checked) — only while the node holds the server and
 *    its state takes the verb;
 * 4. the `rebuild` verb is requested **as the caller** through the node API's provision path
 *    (`requestProvision`, src/domain/inventory/node-actions.ts): node policy
 *    (`baremetal:node:set_provision_state`), the image source deployable by the caller again,
 *    deploy readiness, and the caller recorded as the requester, so that the conductor writes the
 *    image as the caller. The config drive is the node's previous one with `meta_data` updated
 *    (`name`, `hostname`, `meta`, keys, `admin_pass`) and `user_data` replaced when given;
 * 5. the server row gets the new image, name, metadata, description, key name and host name.
 *
 * A failure in 3–4 restores the node's previous `instance_info` values and clears the mark, so
 * a refused rebuild leaves the server and its node as they were.
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError } from '../errors.ts';
import { isJsonObject, type JsonObject } from '../inventory/masking.ts';
import type { Node } from '../inventory/model.ts';
import type { NodeAccess } from '../inventory/node-access.ts';
import { requestProvision } from '../inventory/node-actions.ts';
import { canApply } from '../inventory/states.ts';
import type { Keypair, Server } from './model.ts';
import { whileLocked } from './node-ops.ts';
import type { ComputeRepository, ImageLookup, ServerChanges } from './ports.ts';
import type { RebuildRequest } from './server-action-input.ts';
import { checkedImage } from './server-create.ts';

/** What a rebuild needs. */
export interface RebuildDeps {
  readonly repo: ComputeRepository;
  readonly images: ImageLookup;
  readonly access: NodeAccess;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

/** The `instance_info` keys a rebuild sets (and restores when it is refused). */
const REBUILD_KEYS = ['image_source', 'display_name', 'preserve_ephemeral'] as const;

/** The config drive of the rebuilt server (see the module documentation). */
function rebuiltConfigDrive(
  server: Server,
  previous: unknown,
  req: RebuildRequest,
  name: string,
  hostname: string,
  keypair: Keypair | null | undefined,
): JsonObject {
  const old = isJsonObject(previous) ? previous : {};
  const oldMeta = isJsonObject(old.meta_data) ? old.meta_data : {};
  const meta: JsonObject = {
    uuid: server.uuid,
    launch_index: server.launch_index,
    availability_zone: 'nova',
    project_id: server.project_id,
    devices: [],
    ...oldMeta,
    name,
    hostname,
    meta: { ...(req.metadata ?? server.metadata) },
  };
  if (keypair === null) {
    delete meta.public_keys;
    delete meta.keys;
  } else if (keypair !== undefined) {
    meta.public_keys = { [keypair.name]: keypair.public_key };
    meta.keys = [{ name: keypair.name, type: keypair.type, data: keypair.public_key }];
  }
  delete meta.admin_pass;
  if (req.adminPass !== undefined) meta.admin_pass = req.adminPass;
  const out: JsonObject = { meta_data: meta };
  const userData = req.userData !== undefined ? req.userData : old.user_data;
  if (userData !== undefined && userData !== null) out.user_data = userData;
  if (isJsonObject(old.network_data)) out.network_data = old.network_data;
  return out;
}

/** The key pair a rebuild names: undefined (unchanged), null (removed) or the caller's. @throws InvalidInputError */
async function keypairOf(deps: RebuildDeps, ctx: AuthContext, server: Server, req: RebuildRequest): Promise<Keypair | null | undefined> {
  if (req.keyName === undefined) {
    // A config drive written before esi kept it is rebuilt with the server's key.
    return server.key_name === null ? null : ((await deps.repo.getKeypair(server.user_id, server.key_name)) ?? undefined);
  }
  if (req.keyName === null) return null;
  const k = await deps.repo.getKeypair(ctx.userId, req.keyName);
  if (k === null) throw new InvalidInputError('Invalid key_name provided.', 'KeypairNotFound');
  return k;
}

/**
 * Rebuild a server on its node (see the module documentation).
 * @param node the server's node as read for the state checks
 * @returns the server as updated
 * @throws InvalidInputError (400: image, key pair; the node API's own 400s such as maintenance or
 *   a node the agent cannot boot); ConflictError (the node no longer takes the verb);
 *   LockedError (a conductor kept holding the node); NotFoundError/ForbiddenError from the node
 *   policy of the caller
 */
export async function rebuildServer(deps: RebuildDeps, ctx: AuthContext, server: Server, node: Node, req: RebuildRequest): Promise<Server> {
  const image = await checkedImage(deps.images, ctx, req.imageRef, server.flavor);
  const explicitKey = req.keyName !== undefined;
  const keypair = await keypairOf(deps, ctx, server, req);
  const name = req.name ?? server.name;
  const hostname = req.hostname ?? server.hostname;
  const configdrive = rebuiltConfigDrive(server, node.instance_info.configdrive, req, name, hostname, keypair);
  await deps.repo.updateServer(server.uuid, { task_state: 'rebuilding' }, deps.now());
  const saved: { previous: Partial<Record<string, unknown>> | null } = { previous: null };
  try {
    await whileLocked(
      () =>
        deps.access.write(node, (n) => {
          if (n.instance_uuid !== server.uuid) throw new ConflictError(`Node ${n.uuid} no longer holds server ${server.uuid}.`);
          if (!canApply(n.provision_state, 'rebuild'))
            throw new ConflictError(`Cannot 'rebuild' instance ${server.uuid} while its node is in provision state ${n.provision_state}.`);
          saved.previous = Object.fromEntries(REBUILD_KEYS.map((k) => [k, n.instance_info[k]]));
          const ii: JsonObject = { ...n.instance_info, image_source: image.id, display_name: name };
          if (req.preserveEphemeral !== undefined) ii.preserve_ephemeral = req.preserveEphemeral;
          return { instance_info: ii };
        }),
      deps.sleep,
    );
    await whileLocked(() => requestProvision(deps.access, ctx, node.uuid, 'rebuild', { configdrive }), deps.sleep);
  } catch (err) {
    if (saved.previous !== null) await restore(deps, node.uuid, server.uuid, image.id, saved.previous).catch(() => undefined);
    await deps.repo.updateServer(server.uuid, { task_state: null }, deps.now());
    throw err;
  }
  const changes: ServerChanges = {
    image_id: image.id,
    name,
    hostname,
    ...(req.metadata !== undefined ? { metadata: req.metadata } : {}),
    ...(req.description !== undefined ? { description: req.description } : {}),
    ...(explicitKey ? { key_name: keypair?.name ?? null } : {}),
  };
  return (await deps.repo.updateServer(server.uuid, changes, deps.now())) ?? server;
}

/** Put back the `instance_info` values a refused rebuild replaced (only if still its own). */
async function restore(
  deps: RebuildDeps,
  nodeUuid: string,
  serverUuid: string,
  imageId: string,
  previous: Partial<Record<string, unknown>>,
): Promise<void> {
  const node = await deps.access.deps.nodes.get(nodeUuid);
  if (node === null) return;
  await whileLocked(
    () =>
      deps.access.write(node, (n) => {
        if (n.instance_uuid !== serverUuid || n.instance_info.image_source !== imageId || n.provision_state === 'deploying') return null;
        const ii: JsonObject = { ...n.instance_info };
        for (const [k, v] of Object.entries(previous)) {
          if (v === undefined) delete ii[k];
          else ii[k] = v;
        }
        return { instance_info: ii };
      }),
    deps.sleep,
  );
}
