/**
 * The identities of the policy matrix: roles, projects and users, created through the identity
 * services as the admin, and the twelve persona tokens — including the ones that must not work
 * (forged, revoked, expired, of a disabled project).
 *
 * The expired token is issued first, at the manual clock's start; `issueLiveTokens` is called
 * after the clock moved past the token TTL and gives every other persona a fresh token.
 */
import type { AuthContext } from '../../../src/domain/auth.ts';
import { ADMIN_PASSWORD, type Persona } from '../../helpers/harness.ts';
import type { PersonaKey } from './matrix.ts';
import { forgedToken, must, type World } from './world.ts';

/** Who each token-bearing persona logs in as: user, project, role. */
const LOGINS: Readonly<
  Record<Exclude<PersonaKey, 'admin' | 'anon' | 'forged' | 'revoked' | 'expired'>, { user: string; project: string; role: string }>
> = {
  o1: { user: 'owner1', project: 'o1', role: 'owner' },
  o2: { user: 'owner2', project: 'o2', role: 'owner' },
  l1: { user: 'lessee1', project: 'l1', role: 'lessee' },
  l2: { user: 'lessee2', project: 'l2', role: 'lessee' },
  l3: { user: 'lessee3', project: 'l3', role: 'lessee' },
  x: { user: 'member1', project: 'x', role: 'member' },
  disabled: { user: 'disabled1', project: 'dis', role: 'owner' },
};

/** Ids of the users and projects created (placeholders `{user.o1}`, `{project.o1}`…). */
interface Ids {
  readonly users: Map<string, string>;
  readonly projects: Map<string, string>;
}

/** A new admin token (project `admin`) with its context, project and user ids. */
async function adminContext(w: World): Promise<{ secret: string; ctx: AuthContext; projectId: string; userId: string }> {
  const { tokens } = w.ts.server.services.identity;
  const issued = await tokens.authenticatePassword(
    { userName: 'admin', domainId: 'default', password: ADMIN_PASSWORD },
    { kind: 'project', projectName: 'admin', domainId: 'default' },
  );
  return {
    secret: issued.secret,
    ctx: (await tokens.validate(issued.secret)).context,
    projectId: issued.project!.id,
    userId: issued.user.id,
  };
}

/** Issue a project-scoped token for a user by password. */
async function login(w: World, userId: string, userName: string, projectId: string): Promise<string> {
  const issued = await w.ts.server.services.identity.tokens.authenticatePassword(
    { userId, password: `pw-${userName}` },
    { kind: 'project', projectId },
  );
  return issued.secret;
}

/** A harness persona (no cached context: the server validates the token on every request). */
function persona(name: string, token: string | null, projectId: string | null, projectName: string | null, userId: string | null): Persona {
  return { name, token, projectId, projectName, userId, context: null };
}

/**
 * Create roles `owner`, `lessee`, `member`, the projects and users of {@link LOGINS} and their
 * grants; set the admin persona and the `expired` persona (a token of `owner1` issued now).
 * Sets placeholders `{project.<key>}`, `{user.<key>}`, `{role.<name>}`.
 */
export async function createIdentities(w: World): Promise<Ids> {
  const { directory, grants } = w.ts.server.services.identity;
  const admin = await adminContext(w);
  w.personas.admin = persona('admin', admin.secret, admin.projectId, 'admin', admin.userId);
  w.values.set('project.admin', admin.projectId);
  w.values.set('user.admin', admin.userId);
  const roles = new Map<string, string>();
  for (const name of ['owner', 'lessee', 'member']) {
    const existing = await grants.listRoles(admin.ctx, { name });
    roles.set(name, existing[0]?.id ?? (await grants.createRole(admin.ctx, { name })).id);
    w.values.set(`role.${name}`, roles.get(name)!);
  }
  const ids: Ids = { users: new Map(), projects: new Map() };
  for (const [key, l] of Object.entries(LOGINS)) {
    const project =
      (await directory.listProjects(admin.ctx, { name: l.project }))[0] ?? (await directory.createProject(admin.ctx, { name: l.project }));
    const user = await directory.createUser(admin.ctx, { name: l.user, password: `pw-${l.user}`, defaultProjectId: project.id });
    await grants.grant(admin.ctx, { user_id: user.id, role_id: roles.get(l.role)!, target: { type: 'project', id: project.id } });
    ids.users.set(key, user.id);
    ids.projects.set(key, project.id);
    w.values.set(`project.${key}`, project.id);
    w.values.set(`user.${key}`, user.id);
  }
  const o1 = LOGINS.o1;
  const expired = await login(w, ids.users.get('o1')!, o1.user, ids.projects.get('o1')!);
  w.personas.expired = persona('expired', expired, ids.projects.get('o1')!, 'o1', ids.users.get('o1')!);
  return ids;
}

/**
 * Give every persona its token for the rest of the run (call after the clock moved past the
 * TTL of the `expired` token): fresh tokens for admin and the seven users, a forged string, a
 * revoked `owner1` token, and a token of `disabled1` whose project `dis` is then disabled.
 */
export async function issueLiveTokens(w: World, ids: Ids): Promise<void> {
  const admin = await adminContext(w);
  w.personas.admin = persona('admin', admin.secret, admin.projectId, 'admin', admin.userId);
  for (const [key, l] of Object.entries(LOGINS)) {
    const token = await login(w, ids.users.get(key)!, l.user, ids.projects.get(key)!);
    w.personas[key as PersonaKey] = persona(key, token, ids.projects.get(key)!, l.project, ids.users.get(key)!);
  }
  w.personas.anon = persona('anon', null, null, null, null);
  w.personas.forged = persona('forged', forgedToken(), null, null, null);
  const revoked = await login(w, ids.users.get('o1')!, LOGINS.o1.user, ids.projects.get('o1')!);
  await must(w, w.personas.admin, 'DELETE', '/identity/v3/auth/tokens', 204, undefined, { headers: { 'x-subject-token': revoked } });
  w.personas.revoked = persona('revoked', revoked, ids.projects.get('o1')!, 'o1', ids.users.get('o1')!);
  await must(w, w.personas.admin, 'PATCH', `/identity/v3/projects/${ids.projects.get('disabled')}`, 200, { project: { enabled: false } });
  // A token of owner1 that rows about X-Subject-Token inspect (never sent as X-Auth-Token).
  const subject = await login(w, ids.users.get('o1')!, LOGINS.o1.user, ids.projects.get('o1')!);
  w.values.set('token.subject_o1', subject);
  w.secrets.set('subject token of owner1', subject);
}

/** Issue a new token of `owner1` (fresh tokens for revocation rows). */
export async function ownerToken(w: World): Promise<string> {
  return login(w, w.value('user.o1'), LOGINS.o1.user, w.value('project.o1'));
}
