/**
 * Fresh-object factories of the group, domain and application credential rows
 * (`matrix/identity.yaml`), merged into `FACTORIES` by ./factories.ts. Groups and domains are
 * the admin's (only the admin sees a group or a new domain); application credentials are
 * owner1's, made with its own token.
 */
import type { PersonaKey } from './matrix.ts';
import { must, type World } from './world.ts';

/** Placeholder values of one fresh object. */
type FreshValues = Record<string, string>;

const ADMIN: readonly PersonaKey[] = ['admin'];

/** A group of the admin, registered as seen by the admin only. */
async function makeGroup(w: World): Promise<FreshValues> {
  const name = `pm-f${w.next()}-group`;
  const r = await must(w, w.personas.admin, 'POST', '/identity/v3/groups', 201, { group: { name } });
  w.track(`fresh:${name}`, r.body.group.id, name, ADMIN);
  return { fresh: r.body.group.id, 'fresh.name': name };
}

/** A domain of the admin (enabled unless `enabled` is false). */
async function makeDomain(w: World, enabled: boolean): Promise<FreshValues> {
  const name = `pm-f${w.next()}-domain`;
  const r = await must(w, w.personas.admin, 'POST', '/identity/v3/domains', 201, { domain: { name, enabled } });
  w.track(`fresh:${name}`, r.body.domain.id, name, ADMIN);
  return { fresh: r.body.domain.id, 'fresh.name': name };
}

/** The identity factories by name. */
export const IDENTITY_FACTORIES: Readonly<Record<string, (w: World) => Promise<FreshValues>>> = {
  /** A group (no members, no grants). */
  group: makeGroup,
  /** A group with one member, a fresh user of its own (`fresh.user`; removing it revokes only its tokens). */
  async group_with_member(w) {
    const v = await makeGroup(w);
    const name = `pm-f${w.next()}-guser`;
    const u = await must(w, w.personas.admin, 'POST', '/identity/v3/users', 201, { user: { name, password: 'pw-fresh' } });
    w.track(`fresh:${name}`, u.body.user.id, name, ADMIN);
    await must(w, w.personas.admin, 'PUT', `/identity/v3/groups/${v.fresh}/users/${u.body.user.id}`, 204);
    return { ...v, 'fresh.user': u.body.user.id };
  },
  /** A group holding role `member` on project `x`. */
  async group_granted(w) {
    const v = await makeGroup(w);
    await must(
      w,
      w.personas.admin,
      'PUT',
      `/identity/v3/projects/${w.project('x')}/groups/${v.fresh}/roles/${w.value('role.member')}`,
      204,
    );
    return v;
  },
  /** An enabled domain. */
  domain: (w) => makeDomain(w, true),
  /** A disabled domain (deletable). */
  domain_disabled: (w) => makeDomain(w, false),
  /** An application credential of owner1 on project o1 (`fresh.secret`: its secret). */
  async appcred_o1(w) {
    const name = `pm-f${w.next()}-appcred`;
    const r = await must(w, w.personas.o1, 'POST', `/identity/v3/users/${w.value('user.o1')}/application_credentials`, 201, {
      application_credential: { name },
    });
    const c = r.body.application_credential;
    w.track(`fresh:${name}`, c.id, name, ['admin', 'o1']);
    w.secrets.set(`secret of ${name}`, c.secret);
    return { fresh: c.id, 'fresh.name': name, 'fresh.secret': c.secret };
  },
};
