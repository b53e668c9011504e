/**
 * `ChassisService`: chassis (`/v1/chassis`), a system-level grouping of nodes.
 *
 * Source: Ironic 21.4 `ChassisController` (`ironic/api/controllers/v1/chassis.py`) and
 * https://docs.openstack.org/api-ref/baremetal/#chassis-chassis:
 * - fields `uuid`, `description` (string ≤ 255 or null), `extra` (object); a chassis is named by
 *   UUID only;
 * - create takes exactly those keys (unknown keys → 400; a duplicate uuid → 409
 *   ChassisAlreadyExists); PATCH may touch `description` and `extra` only (Ironic lets the
 *   patch reach `uuid`, then refuses to change it; here any other path is a 400 naming the
 *   patchable fields);
 * - a chassis that nodes name cannot be deleted (400 ChassisNotEmpty);
 * - policy: `baremetal:chassis:get` (reads, lists), `…:create`, `…:update`, `…:delete`, all
 *   system-level (no owner or lessee target: project members see no chassis, 403).
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import type { Policy } from '../policy/types.ts';
import type { Clock } from '../clock.ts';
import { isJsonObject, type JsonObject } from './masking.ts';
import { applyPatch, parsePatch, rootOf } from './patch.ts';
import { CHASSIS_SORT_KEYS, type Chassis } from './resource-model.ts';
import type { ChassisRepository } from './resource-ports.ts';
import { canonicalUuid, requireUuid } from './validation.ts';

const CREATE_KEYS = new Set(['uuid', 'description', 'extra']);
const PATCHABLE = ['description', 'extra'];
/** Longest description (Ironic `CHASSIS_SCHEMA`). */
export const MAX_CHASSIS_DESCRIPTION = 255;

/** A chassis list request (after the API's checks). */
export interface ChassisListRequest {
  readonly limit: number;
  readonly marker: string | null;
  readonly sortKey: string;
  readonly sortDir: 'asc' | 'desc';
}

/** The UUID of a chassis route parameter. @throws InvalidInputError (Ironic: "Expected UUID for chassis_uuid") */
export function chassisUuid(ident: string): string {
  const uuid = canonicalUuid(ident.replace(/\.json$/, ''));
  if (uuid === null) throw new InvalidInputError(`Expected UUID for chassis_uuid: ${ident}`, 'InvalidUUID');
  return uuid;
}

function description(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new InvalidInputError(`Invalid chassis: description: ${JSON.stringify(v)} is not a string.`);
  if (v.length > MAX_CHASSIS_DESCRIPTION)
    throw new InvalidInputError(`Invalid chassis: description is longer than ${MAX_CHASSIS_DESCRIPTION} characters.`);
  return v;
}

function extra(v: unknown): JsonObject {
  if (v === undefined || v === null) return {};
  if (!isJsonObject(v)) throw new InvalidInputError('Invalid chassis: extra must be an object.');
  return v;
}

/** Chassis operations; see the module documentation. */
export class ChassisService {
  constructor(
    private readonly repo: ChassisRepository,
    private readonly policy: Policy,
    private readonly clock: Clock,
  ) {}

  private authorize(ctx: AuthContext, rule: string): void {
    this.policy.authorize(rule, {}, ctx, `Access was denied to the following resource: ${rule}`);
  }

  /** One chassis (`baremetal:chassis:get`). @throws NotFoundError; ForbiddenError */
  async get(ctx: AuthContext, uuid: string): Promise<Chassis> {
    this.authorize(ctx, 'baremetal:chassis:get');
    const c = await this.repo.get(uuid);
    if (!c) throw new NotFoundError('chassis', uuid);
    return c;
  }

  /**
   * One page of chassis (`baremetal:chassis:get`).
   * @throws InvalidInputError for a bad sort key; NotFoundError for an unknown marker
   */
  async list(ctx: AuthContext, req: ChassisListRequest): Promise<Chassis[]> {
    this.authorize(ctx, 'baremetal:chassis:get');
    if (!CHASSIS_SORT_KEYS.has(req.sortKey))
      throw new InvalidInputError(`The sort_key value "${req.sortKey}" is an invalid field for sorting`);
    let marker: Chassis | null = null;
    if (req.marker !== null) {
      marker = await this.repo.get(requireUuid('marker', req.marker));
      if (!marker) throw new NotFoundError('chassis', req.marker);
    }
    return this.repo.list({ filters: {}, limit: req.limit, marker, sortKey: req.sortKey, sortDir: req.sortDir });
  }

  /**
   * Create a chassis (`baremetal:chassis:create`).
   * @throws InvalidInputError; ConflictError (duplicate uuid); ForbiddenError
   */
  async create(ctx: AuthContext, body: unknown): Promise<Chassis> {
    this.authorize(ctx, 'baremetal:chassis:create');
    if (!isJsonObject(body)) throw new InvalidInputError('The chassis must be a JSON object.');
    const unknown = Object.keys(body).filter((k) => !CREATE_KEYS.has(k));
    if (unknown.length > 0) throw new InvalidInputError(`Invalid chassis: unexpected field "${unknown[0]}".`);
    const uuid = body.uuid === undefined || body.uuid === null ? newUuid() : requireUuid('uuid', body.uuid);
    if (await this.repo.get(uuid)) throw new ConflictError(`A chassis with UUID ${uuid} already exists.`, 'ChassisAlreadyExists');
    return this.repo.insert({ uuid, description: description(body.description), extra: extra(body.extra) }, this.clock.now());
  }

  /**
   * Update a chassis with a JSON-PATCH (`baremetal:chassis:update`).
   * @throws InvalidInputError (bad patch or result); NotFoundError; ForbiddenError
   */
  async update(ctx: AuthContext, uuid: string, body: unknown): Promise<Chassis> {
    this.authorize(ctx, 'baremetal:chassis:update');
    const ops = parsePatch(body);
    for (const op of ops) {
      if (!PATCHABLE.includes(rootOf(op.path)))
        throw new InvalidInputError(`Cannot patch ${op.path}. Only the following can be updated: ${PATCHABLE.join(', ')}`);
    }
    const current = await this.repo.get(uuid);
    if (!current) throw new NotFoundError('chassis', uuid);
    const patched = applyPatch({ description: current.description, extra: current.extra }, ops);
    const changes = { description: description(patched.description), extra: extra(patched.extra) };
    if (changes.description === current.description && JSON.stringify(changes.extra) === JSON.stringify(current.extra)) return current;
    const written = await this.repo.update(uuid, changes, this.clock.now());
    if (!written) throw new NotFoundError('chassis', uuid);
    return written;
  }

  /**
   * Delete a chassis (`baremetal:chassis:delete`).
   * @throws InvalidInputError (ChassisNotEmpty) while nodes name it; NotFoundError; ForbiddenError
   */
  async delete(ctx: AuthContext, uuid: string): Promise<void> {
    this.authorize(ctx, 'baremetal:chassis:delete');
    const r = await this.repo.delete(uuid);
    if (r === 'missing') throw new NotFoundError('chassis', uuid);
    if (r === 'not-empty')
      throw new InvalidInputError(`Cannot complete the requested action because chassis ${uuid} contains nodes.`, 'ChassisNotEmpty');
  }
}
