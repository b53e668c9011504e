/**
 * The identity area (Keystone v3 subset): tokens, directory (domains, projects, users), domain
 * management, groups, role grants and application credentials, assembled over one repository.
 */
import type { Clock } from '../clock.ts';
import type { Policy } from '../policy/types.ts';
import { ApplicationCredentials } from './app-credentials.ts';
import { IdentityDirectory } from './directory.ts';
import { DomainAdmin } from './domains.ts';
import { RoleGrants } from './grants.ts';
import { IdentityGroups } from './groups.ts';
import type { IdentityRepository } from './ports.ts';
import { SubjectTokens } from './subject-tokens.ts';
import { TokenService } from './tokens.ts';

export * from './model.ts';
export type { IdentityRepository } from './ports.ts';
export { IdentityDirectory, type ProjectInput, type UserInput } from './directory.ts';
export { RoleGrants, type AssignmentQuery } from './grants.ts';
export { IdentityGroups, type GroupInput, type GroupPatch } from './groups.ts';
export { DomainAdmin, type DomainInput, type DomainPatch } from './domains.ts';
export { ApplicationCredentials, type AppCredentialAuth, type AppCredentialInput, type CreatedAppCredential } from './app-credentials.ts';
export { TokenService, tokenId, type IssuedToken, type TokenInfo, type PasswordCredentials, type ScopeRequest } from './tokens.ts';
export { SubjectTokens, type SubjectAction } from './subject-tokens.ts';
export { bootstrapIdentity, resetAdminPassword, type BootstrapResult } from './bootstrap.ts';

/** The identity services other areas and the identity API use. */
export interface Identity {
  readonly tokens: TokenService;
  /** What callers may do with tokens they name in `X-Subject-Token`. */
  readonly subjects: SubjectTokens;
  readonly directory: IdentityDirectory;
  readonly grants: RoleGrants;
  /** Creating, updating and deleting domains. */
  readonly domains: DomainAdmin;
  readonly groups: IdentityGroups;
  readonly appCredentials: ApplicationCredentials;
}

/**
 * Assemble the identity services.
 * @param tokenTtlS token lifetime, seconds
 */
export function createIdentity(repo: IdentityRepository, policy: Policy, clock: Clock, tokenTtlS: number): Identity {
  const tokens = new TokenService(repo, clock, tokenTtlS);
  const directory = new IdentityDirectory(repo, policy, tokens, clock);
  return {
    tokens,
    subjects: new SubjectTokens(tokens, policy),
    directory,
    grants: new RoleGrants(repo, policy, tokens, clock),
    domains: new DomainAdmin(repo, policy, tokens, directory, clock),
    groups: new IdentityGroups(repo, policy, tokens, clock),
    appCredentials: new ApplicationCredentials(repo, policy, tokens, clock),
  };
}
