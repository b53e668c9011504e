/**
 * Who asked for a node's provisioning work, so that the conductor can act *as that caller* when
 * the work later uses objects the caller named (docs/architecture.md "Objects a
 * request names"): a deploy started by a lessee writes only an image that the lessee's project
 * may read at the time of the write, not whatever the conductor's service identity can read.
 *
 * The requester is recorded in `driver_internal_info.esi_requested_by` by every provision
 * request (`PUT /v1/nodes/{id}/states/provision`, and the compute API's deploy of a server) as
 * `{user_id, project_id, system_scope}`; it holds no secret and no token. The conductor turns it
 * back into a caller context with the user's roles *at the time of use* through a
 * {@link RequesterContexts} (src/domain/identity/tokens.ts `contextFor`), so a user removed from
 * the project, disabled or deleted meanwhile no longer grants anything.
 *
 * The node API also checks what the request names before anything is recorded: an
 * `instance_info.image_source` that is an image UUID must be deployable by the caller
 * ({@link DeployImages}).
 */
import type { AuthContext } from '../auth.ts';
import { InvalidInputError, NotFoundError, ForbiddenError } from '../errors.ts';
import { isUuidLike } from '../ids.ts';
import { isJsonObject, type JsonObject } from './masking.ts';

/** The `driver_internal_info` key of the requester. */
export const REQUESTED_BY = 'esi_requested_by';

/** A recorded requester: a user and the scope it acted in (no secrets). */
export interface Requester {
  readonly user_id: string;
  /** The project of a project-scoped caller, else null. */
  readonly project_id: string | null;
  /** `all` for a system-scoped caller, else null. */
  readonly system_scope: 'all' | null;
}

/** The requester record of a caller. */
export function requesterOf(ctx: AuthContext): Requester {
  return { user_id: ctx.userId, project_id: ctx.projectId, system_scope: ctx.systemScope };
}

/** The requester recorded in a node's `driver_internal_info`, or null when none (or malformed). */
export function recordedRequester(driverInternalInfo: Readonly<JsonObject>): Requester | null {
  const r = driverInternalInfo[REQUESTED_BY];
  if (!isJsonObject(r) || typeof r.user_id !== 'string' || r.user_id === '') return null;
  const project = typeof r.project_id === 'string' && r.project_id !== '' ? r.project_id : null;
  const system = r.system_scope === 'all' ? 'all' : null;
  if (project === null && system === null) return null;
  return { user_id: r.user_id, project_id: project, system_scope: system };
}

/** Rebuilds a caller context from a requester record (implemented over the identity service). */
export interface RequesterContexts {
  /**
   * The context a token of this user in this scope would carry now (current roles), or null
   * when the user or project is gone or disabled, or the user holds no role there any more.
   */
  contextOf(requester: Requester): Promise<AuthContext | null>;
}

/** The image service as node operations see it (implemented over `ImageService.deployable`). */
export interface DeployImages {
  /**
   * @throws NotFoundError when the image is unknown or invisible to the caller; ForbiddenError
   *   when the caller may see it but not read its data
   */
  deployable(ctx: AuthContext, imageId: string): Promise<unknown>;
}

/**
 * Require that the caller may deploy the image an `image_source` names, when it names one of
 * esi's images (a UUID); URLs are the agent's to fetch and are not objects of esi.
 * @param what how the message names the field, e.g. `instance_info.image_source of node X`
 * @throws InvalidInputError (400): `ImageNotFound` for an image that does not exist or that the
 *   caller may not see (the same answer, so nothing about another project's image leaks);
 *   `ImageNotAuthorized` for one it sees but may not read
 */
export async function checkImageSource(
  images: DeployImages | undefined,
  ctx: AuthContext,
  imageSource: unknown,
  what: string,
): Promise<void> {
  if (images === undefined || typeof imageSource !== 'string' || !isUuidLike(imageSource)) return;
  try {
    await images.deployable(ctx, imageSource);
  } catch (err) {
    if (err instanceof NotFoundError) throw new InvalidInputError(`Image ${imageSource} (${what}) could not be found.`, 'ImageNotFound');
    if (err instanceof ForbiddenError)
      throw new InvalidInputError(
        `Image ${imageSource} (${what}) may not be deployed by this project: ${err.message}`,
        'ImageNotAuthorized',
      );
    throw err;
  }
}
