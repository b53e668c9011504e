/**
 * `KeypairService`: Nova key pairs (`/os-keypairs`). A key pair belongs to a user (not a
 * project) and is found by name; an admin may act on another user's (`user_id`, Nova ≥ 2.10).
 * Policy `os_compute_api:os-keypairs:*` with target `user_id`. Names: 1–255 characters of
 * `[a-zA-Z0-9 _-]` (Nova before 2.92). Only SSH keys (`type` `ssh`); without a public key an RSA
 * pair is generated and its private key returned once (Nova < 2.92).
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { isJsonObject } from '../inventory/masking.ts';
import type { Policy } from '../policy/types.ts';
import type { Keypair } from './model.ts';
import type { ComputeRepository } from './ports.ts';
import { fingerprint, generateKeyPair, parsePublicKey } from './ssh-keys.ts';

const NAME_RE = /^[a-zA-Z0-9 _-]{1,255}$/;
const CREATE_KEYS = new Set(['name', 'public_key', 'type', 'user_id']);

/** What a create returns: the key pair, and the private key when one was generated. */
export interface CreatedKeypair {
  readonly keypair: Keypair;
  readonly privateKey: string | null;
}

/** A checked key pair create request. */
export interface KeypairRequest {
  readonly name: string;
  readonly public_key?: unknown;
  readonly user_id?: string;
}

/**
 * Check a key pair create body (`{"keypair": {name, public_key?, type?, user_id?}}`) with
 * Nova's messages.
 * @param version the request's minor microversion (type ≥ 2.2, user_id ≥ 2.10)
 * @throws InvalidInputError naming the problem
 */
export function parseKeypairBody(body: unknown, version: number): KeypairRequest {
  if (!isJsonObject(body) || Object.keys(body).length !== 1 || !isJsonObject(body.keypair))
    throw new InvalidInputError("Invalid input for field/attribute keypair. 'keypair' is a required property and the only one.");
  const k = body.keypair;
  const allowed = new Set([...CREATE_KEYS].filter((x) => (x === 'type' ? version >= 2 : x === 'user_id' ? version >= 10 : true)));
  const unknown = Object.keys(k).filter((x) => !allowed.has(x));
  if (unknown.length > 0)
    throw new InvalidInputError(
      `Invalid input for field/attribute keypair. Additional properties are not allowed (${unknown.map((x) => `'${x}'`).join(', ')} ${unknown.length === 1 ? 'was' : 'were'} unexpected)`,
    );
  if (typeof k.name !== 'string' || !NAME_RE.test(k.name)) {
    throw new InvalidInputError(
      'Keypair data is invalid: Keypair name contains unsafe characters (1 to 255 of a-z, A-Z, 0-9, space, _ and -).',
      'InvalidKeypair',
    );
  }
  if (k.type !== undefined && k.type !== 'ssh')
    throw new InvalidInputError(`Invalid input for field/attribute type. Value: ${String(k.type)}. esi takes ssh key pairs only.`);
  if (k.user_id !== undefined && (typeof k.user_id !== 'string' || k.user_id === '' || k.user_id.length > 255))
    throw new InvalidInputError('Invalid input for field/attribute user_id.');
  return {
    name: k.name,
    ...(k.public_key !== undefined ? { public_key: k.public_key } : {}),
    ...(typeof k.user_id === 'string' ? { user_id: k.user_id } : {}),
  };
}

/** Key pair operations; see the module documentation. */
export class KeypairService {
  constructor(
    private readonly repo: ComputeRepository,
    private readonly policy: Policy,
    private readonly clock: Clock,
  ) {}

  /** The user a request acts for: the caller, or `user_id` (admins). */
  private userOf(ctx: AuthContext, rule: string, userId: string | undefined): string {
    const user = userId ?? ctx.userId;
    this.policy.authorize(rule, { user_id: user }, ctx, `Policy doesn't allow ${rule} to be performed.`);
    return user;
  }

  /**
   * Create or import a key pair (`{"keypair": {name, public_key?, type?, user_id?}}`).
   * @param version the request's minor microversion (type ≥ 2.2, user_id ≥ 2.10)
   * @throws InvalidInputError; ForbiddenError; ConflictError (name taken)
   */
  async create(ctx: AuthContext, body: unknown, version: number): Promise<CreatedKeypair> {
    const k = parseKeypairBody(body, version);
    const user = this.userOf(ctx, 'os_compute_api:os-keypairs:create', k.user_id);
    let publicKey: string;
    let privateKey: string | null = null;
    if (k.public_key === undefined) {
      const pair = generateKeyPair('Generated-by-esi');
      publicKey = pair.publicKey;
      privateKey = pair.privateKey;
    } else {
      publicKey = parsePublicKey(k.public_key).text;
    }
    const parsed = parsePublicKey(publicKey);
    if ((await this.repo.getKeypair(user, k.name)) !== null)
      throw new ConflictError(`Key pair '${k.name}' already exists.`, 'KeyPairExists');
    const keypair = await this.repo.insertKeypair(
      { user_id: user, name: k.name, type: 'ssh', public_key: parsed.text, fingerprint: fingerprint(parsed) },
      this.clock.now(),
    );
    return { keypair, privateKey };
  }

  /** A key pair of the caller (or of `userId`, for admins). @throws NotFoundError */
  async get(ctx: AuthContext, name: string, userId?: string): Promise<Keypair> {
    const user = this.userOf(ctx, 'os_compute_api:os-keypairs:show', userId);
    const k = await this.repo.getKeypair(user, name);
    if (k === null) throw new NotFoundError('keypair', name, `Keypair ${name} not found for user ${user}`, 'KeypairNotFound');
    return k;
  }

  /**
   * The key pairs of the caller (or of `userId`); `marker` is a name.
   * @throws InvalidInputError for an unknown marker
   */
  async list(ctx: AuthContext, limit: number, marker: string | null, userId?: string): Promise<Keypair[]> {
    const user = this.userOf(ctx, 'os_compute_api:os-keypairs:index', userId);
    if (marker !== null && (await this.repo.getKeypair(user, marker)) === null) throw new InvalidInputError(`marker [${marker}] not found`);
    return this.repo.listKeypairs(user, limit, marker);
  }

  /** Delete a key pair. @throws NotFoundError */
  async delete(ctx: AuthContext, name: string, userId?: string): Promise<void> {
    const user = this.userOf(ctx, 'os_compute_api:os-keypairs:delete', userId);
    if (!(await this.repo.deleteKeypair(user, name)))
      throw new NotFoundError('keypair', name, `Keypair ${name} not found for user ${user}`, 'KeypairNotFound');
  }
}
