/**
 * What an authentication request names, resolved against the identity store for
 * `TokenService` (./tokens.ts) and `ApplicationCredentials` (./app-credentials.ts): the user (by
 * id, or by name within a domain given by id or name), the scope (a project by id, or by name
 * within a domain), and the domains a token touches (Keystone v3 "Authentication and token
 * management").
 */
import { InvalidInputError, UnauthorizedError } from '../errors.ts';
import { DEFAULT_DOMAIN_ID, DEFAULT_DOMAIN_NAME, type Domain, type TokenScope, type User } from './model.ts';
import type { IdentityRepository } from './ports.ts';

/** Who is authenticating: a user by id, or by name within a domain (id or name). */
export interface PasswordCredentials {
  readonly userId?: string;
  readonly userName?: string;
  readonly domainId?: string;
  readonly domainName?: string;
  readonly password: string;
}

/**
 * What a scope request names: a project by id, or by name within a domain; or the system;
 * `unscoped` when the client asked for an unscoped token explicitly (Keystone's `"scope":
 * "unscoped"`); `default` when it named no scope at all — then a password login is scoped to the
 * user's default project where the user holds a role there, as Keystone does
 * (keystone/auth/core.py, default scoping), and is unscoped otherwise.
 */
export type ScopeRequest =
  | { readonly kind: 'unscoped' }
  | { readonly kind: 'default' }
  | { readonly kind: 'system' }
  | {
      readonly kind: 'project';
      readonly projectId?: string;
      readonly projectName?: string;
      readonly domainId?: string;
      readonly domainName?: string;
    };

/** A user named by id, or by name within a domain. */
export type UserRef = Omit<PasswordCredentials, 'password'>;

/**
 * The scope a request names, with a project named by name resolved to its id.
 * @throws InvalidInputError when a project is named neither by id nor by name
 * @throws UnauthorizedError when the named project or domain does not exist (Keystone: 401)
 */
export async function resolveScope(repo: IdentityRepository, scope: ScopeRequest): Promise<TokenScope> {
  if (scope.kind !== 'project') return scope.kind === 'system' ? { kind: 'system' } : { kind: 'unscoped' };
  if (scope.projectId) return { kind: 'project', projectId: scope.projectId };
  if (!scope.projectName)
    throw new InvalidInputError(
      'Expecting to find id or name in project - the server could not comply with the request since it is either malformed or otherwise incorrect.',
    );
  const domainId = await resolveDomainId(repo, scope.domainId, scope.domainName);
  const [project] = await repo.findProjects({ name: scope.projectName, domainId });
  if (!project) throw new UnauthorizedError(`Could not find project: ${scope.projectName}.`);
  return { kind: 'project', projectId: project.id };
}

/**
 * The user a request names, or null when there is none of that id or name.
 * @throws InvalidInputError when the user is named neither by id nor by name, or a name comes
 *   without a domain
 * @throws UnauthorizedError when the named domain does not exist
 */
export async function findUser(repo: IdentityRepository, ref: UserRef): Promise<User | null> {
  if (ref.userId) return repo.getUser(ref.userId);
  if (!ref.userName)
    throw new InvalidInputError(
      'Expecting to find id or name in user - the server could not comply with the request since it is either malformed or otherwise incorrect.',
    );
  const domainId = await resolveDomainId(repo, ref.domainId, ref.domainName);
  const [user] = await repo.findUsers({ name: ref.userName, domainId });
  return user ?? null;
}

async function resolveDomainId(repo: IdentityRepository, domainId?: string, domainName?: string): Promise<string> {
  if (domainId) return domainId;
  if (domainName) {
    const [d] = await repo.findDomains({ name: domainName });
    if (!d) throw new UnauthorizedError(`Could not find domain: ${domainName}.`);
    return d.id;
  }
  throw new InvalidInputError(
    'Expecting to find domain in user/project - the server could not comply with the request since it is either malformed or otherwise incorrect.',
  );
}

/**
 * The domains of these ids (undefined ones skipped; an unknown id is reported disabled). The
 * default domain is not read: it is immutable (./domains.ts), so always enabled and named
 * `Default`.
 */
export async function domainsOf(repo: IdentityRepository, ids: ReadonlyArray<string | undefined>): Promise<Map<string, Domain>> {
  const out = new Map<string, Domain>();
  for (const id of new Set(ids)) {
    if (id === undefined) continue;
    if (id === DEFAULT_DOMAIN_ID) {
      out.set(id, { id, name: DEFAULT_DOMAIN_NAME, description: '', enabled: true });
      continue;
    }
    const d = await repo.getDomain(id);
    out.set(id, d ?? { id, name: id, description: '', enabled: false });
  }
  return out;
}
