/**
 * First-start bootstrap of the identity store, like `keystone-manage bootstrap`: the
 * `Default` domain, roles `admin`, `member`, `reader`, `manager` and `service` with the
 * implied-role chain admin ⇒ manager ⇒ member ⇒ reader, project `admin`, and user `admin`
 * holding `admin` on project `admin` and on the system.
 *
 * Idempotent: a second run creates nothing and changes no password.
 */
import { randomSecret } from '../secrets.ts';
import type { Clock } from '../clock.ts';
import { DEFAULT_DOMAIN_ID, DEFAULT_DOMAIN_NAME, type Role } from './model.ts';
import type { IdentityRepository } from './ports.ts';
import { hashPassword, verifyPassword } from './passwords.ts';
import { newHexId as newId } from '../ids.ts';

/** Result of a bootstrap: whether the admin user was created now, and its password if generated. */
export interface BootstrapResult {
  readonly createdAdmin: boolean;
  /** The admin password, only when the admin user was created by this run. */
  readonly adminPassword: string | null;
  /** True when that password was generated (not given by the operator). */
  readonly generated: boolean;
  readonly adminProjectId: string;
  readonly adminUserId: string;
  /**
   * True when a password was given but the admin user already existed with another one: the
   * given password is not applied (it is used on the first start only); the caller reports it.
   */
  readonly givenPasswordDiffers: boolean;
}

const ROLE_NAMES = ['admin', 'manager', 'member', 'reader', 'service'] as const;
const IMPLIES: Array<[string, string]> = [
  ['admin', 'manager'],
  ['manager', 'member'],
  ['member', 'reader'],
];

/**
 * Create the built-in identity objects that are missing.
 * @param adminPassword the operator's choice, or null to generate one (24 random bytes, base64url)
 */
export async function bootstrapIdentity(repo: IdentityRepository, clock: Clock, adminPassword: string | null): Promise<BootstrapResult> {
  const now = clock.now();
  if (!(await repo.getDomain(DEFAULT_DOMAIN_ID))) {
    await repo.createDomain({ id: DEFAULT_DOMAIN_ID, name: DEFAULT_DOMAIN_NAME, description: 'The default domain', enabled: true }, now);
  }
  const roles = new Map<string, Role>();
  for (const name of ROLE_NAMES) {
    let [role] = await repo.findRoles({ name });
    if (!role) {
      role = { id: newId(), name, domain_id: null, description: '' };
      await repo.createRole(role, now);
    }
    roles.set(name, role);
  }
  for (const [prior, implied] of IMPLIES) await repo.addImplication(roles.get(prior)!.id, roles.get(implied)!.id);

  let [project] = await repo.findProjects({ name: 'admin', domainId: DEFAULT_DOMAIN_ID });
  if (!project) {
    project = {
      id: newId(),
      name: 'admin',
      domain_id: DEFAULT_DOMAIN_ID,
      parent_id: null,
      description: 'Bootstrap project for the cloud administrator',
      enabled: true,
      extra: {},
    };
    await repo.createProject(project, now);
  }
  let [user] = await repo.findUsers({ name: 'admin', domainId: DEFAULT_DOMAIN_ID });
  let password: string | null = null;
  let generated = false;
  let givenPasswordDiffers = false;
  if (user && adminPassword !== null) {
    const stored = await repo.getPasswordHash(user.id);
    givenPasswordDiffers = stored === null || !(await verifyPassword(adminPassword, stored));
  }
  if (!user) {
    password = adminPassword ?? randomSecret(18);
    generated = adminPassword === null;
    user = { id: newId(), name: 'admin', domain_id: DEFAULT_DOMAIN_ID, default_project_id: project.id, enabled: true, extra: {} };
    await repo.createUser(user, await hashPassword(password), now);
  }
  const adminRole = roles.get('admin')!;
  await repo.grant({ user_id: user.id, role_id: adminRole.id, target: { type: 'project', id: project.id } });
  await repo.grant({ user_id: user.id, role_id: adminRole.id, target: { type: 'system', id: 'all' } });
  return {
    createdAdmin: password !== null,
    adminPassword: password,
    generated,
    adminProjectId: project.id,
    adminUserId: user.id,
    givenPasswordDiffers,
  };
}

/**
 * Set the password of the bootstrap user `admin` (`esi admin reset-password`, for an operator
 * who lost it or changed `ESI_ADMIN_PASSWORD` after the first start): the user is enabled again
 * and every token it holds is revoked, as a Keystone password change does.
 * @param password the new password, or null to generate one (24 random bytes, base64url)
 * @returns the password set, and whether it was generated
 * @throws Error when there is no admin user (the server has never started on this database)
 */
export async function resetAdminPassword(
  repo: IdentityRepository,
  clock: Clock,
  password: string | null,
): Promise<{ password: string; generated: boolean }> {
  const [user] = await repo.findUsers({ name: 'admin', domainId: DEFAULT_DOMAIN_ID });
  if (!user) throw new Error('there is no user "admin" in this database: start esi once to create it');
  const chosen = password ?? randomSecret(18);
  const now = clock.now();
  await repo.updateUser({ ...user, enabled: true }, await hashPassword(chosen), now);
  await repo.revokeTokensFor({ userId: user.id }, now);
  return { password: chosen, generated: password === null };
}
