/**
 * The identity area (Keystone v3 subset): tokens, directory (domains, projects, users) and
 * role grants, assembled over one repository.
 */
import type { Clock } from '../clock.ts';
import type { Policy } from '../policy/types.ts';
import { IdentityDirectory } from './directory.ts';
import { RoleGrants } from './grants.ts';
import type { IdentityRepository } from './ports.ts';
import { SubjectTokens } from './subject-tokens.ts';
import { TokenService } from './tokens.ts';

export * from './model.ts';
export type { IdentityRepository } from './ports.ts';
export { IdentityDirectory, type ProjectInput, type UserInput } from './directory.ts';
export { RoleGrants, type AssignmentQuery } from './grants.ts';
export { TokenService, tokenId, type IssuedToken, type TokenInfo, type PasswordCredentials, type ScopeRequest } from './tokens.ts';
export { SubjectTokens, type SubjectAction } from './subject-tokens.ts';
export { bootstrapIdentity, type BootstrapResult } from './bootstrap.ts';

/** The identity services other areas and the identity API use. */
export interface Identity {
  readonly tokens: TokenService;
  /** What callers may do with tokens they name in `X-Subject-Token`. */
  readonly subjects: SubjectTokens;
  readonly directory: IdentityDirectory;
  readonly grants: RoleGrants;
}

/**
 * Assemble the identity services.
 * @param tokenTtlS token lifetime, seconds
 */
export function createIdentity(repo: IdentityRepository, policy: Policy, clock: Clock, tokenTtlS: number): Identity {
  const tokens = new TokenService(repo, clock, tokenTtlS);
  return {
    tokens,
    subjects: new SubjectTokens(tokens, policy),
    directory: new IdentityDirectory(repo, policy, tokens, clock),
    grants: new RoleGrants(repo, policy, tokens, clock),
  };
}
