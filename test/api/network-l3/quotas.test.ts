/**
 * Network quotas (`/network/v2.0/quotas`, Neutron's `quotas` and `quota_details` extensions) for
 * every persona: a project reads its own limits, defaults and usage; another project's are 404
 * and anonymous callers get 401; only admins set and reset limits (403 on one's own project).
 * A limit an admin sets is what router and floating IP creation enforce at once (lowered,
 * raised, -1 for none, reset by DELETE); `check_limit` refuses a limit below the usage; bad
 * bodies (non-integers, < -1, resources esi does not limit, unknown keys) are 400 and write
 * nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Persona } from '../../helpers/harness.ts';
import { create, expectNeutronError, externalNet, net, startL3Env, type NetEnv } from './support.ts';

let env: NetEnv;
beforeAll(async () => {
  env = await startL3Env({ ESI_QUOTA_ROUTER: '3', ESI_QUOTA_FLOATINGIP: '2' });
});
afterAll(async () => env?.ts.close());

const DEFAULTS = { floatingip: 2, router: 3 };
const UNKNOWN_PROJECT = '0123456789abcdef0123456789abcdef';

/** A new project with a member (role `lessee`) and its token: each test that counts gets its own. */
async function freshProject(name: string): Promise<Persona> {
  const { directory, grants, tokens } = env.ts.server.services.identity;
  const admin = env.p.admin.context!;
  const project = await directory.createProject(admin, { name });
  const user = await directory.createUser(admin, { name: `${name}-u`, password: `pw-${name}`, defaultProjectId: project.id });
  const role = (await grants.listRoles(admin, { name: 'lessee' }))[0]!;
  await grants.grant(admin, { user_id: user.id, role_id: role.id, target: { type: 'project', id: project.id } });
  const issued = await tokens.authenticatePassword({ userId: user.id, password: `pw-${name}` }, { kind: 'project', projectId: project.id });
  const context = (await tokens.validate(issued.secret)).context;
  return { name, token: issued.secret, projectId: project.id, projectName: name, userId: user.id, context };
}

/** The stored quota rows (to prove a refused request wrote nothing). */
async function quotaRows(): Promise<unknown[]> {
  return env.ts.server.services.store.db.selectFrom('network_quotas').selectAll().orderBy('project_id').orderBy('resource').execute();
}

/** Set limits as admin; fails the test unless 200. */
async function setQuota(projectId: string, quota: Record<string, unknown>): Promise<any> {
  const res = await net(env, env.p.admin, 'PUT', `/quotas/${projectId}`, { quota });
  expect(res.status, res.text).toBe(200);
  return res.body.quota;
}

async function router(p: Persona, name: string): Promise<number> {
  return (await net(env, p, 'POST', '/routers', { router: { name } })).status;
}

describe('network quotas: reads', () => {
  it('each project reads its own limits, defaults and usage; others are 404, anonymous 401', async () => {
    const { admin, owner, lessee, other, anonymous } = env.p;
    expect((await net(env, admin, 'DELETE', `/quotas/${owner.projectId}`)).status).toBe(204);
    for (const p of [admin, owner, lessee, other]) {
      const own = await net(env, p, 'GET', `/quotas/${p.projectId}`);
      expect(own.status, `${p.name}: ${own.text}`).toBe(200);
      expect(own.body).toEqual({ quota: DEFAULTS });
      const def = await net(env, p, 'GET', `/quotas/${p.projectId}/default`);
      expect(def.body).toEqual({ quota: DEFAULTS });
      const details = await net(env, p, 'GET', `/quotas/${p.projectId}/details`);
      expect(details.status, details.text).toBe(200);
      expect(Object.keys(details.body.quota).sort()).toEqual(['floatingip', 'router']);
      expect(details.body.quota.router).toMatchObject({ limit: 3, reserved: 0 });
      expect(typeof details.body.quota.router.used).toBe('number');
      expect((await net(env, p, 'GET', '/quotas/project')).body).toEqual({ project: { project_id: p.projectId } });
      expect((await net(env, p, 'GET', '/quotas/tenant')).body).toEqual({ tenant: { tenant_id: p.projectId } });
    }
    // Another project's quota is not there for non-admins; the admin reads any.
    for (const [p, q] of [
      [owner, lessee],
      [lessee, owner],
      [other, owner],
      [owner, admin],
    ] as const) {
      for (const suffix of ['', '/default', '/details'])
        expectNeutronError(
          await net(env, p, 'GET', `/quotas/${q.projectId}${suffix}`),
          404,
          'ProjectNotFound',
          new RegExp(`Project ${q.projectId} could not be found`),
        );
    }
    for (const q of [owner, lessee, other])
      expect((await net(env, admin, 'GET', `/quotas/${q.projectId}`)).body).toEqual({ quota: DEFAULTS });
    for (const path of [
      '/quotas',
      `/quotas/${owner.projectId}`,
      `/quotas/${owner.projectId}/default`,
      `/quotas/${owner.projectId}/details`,
      '/quotas/project',
    ])
      expectNeutronError(await net(env, anonymous, 'GET', path), 401);
  });

  it('an admin reading a project that does not exist sees the defaults (as Neutron); a non-project id is 404', async () => {
    const { admin, owner } = env.p;
    expect((await net(env, admin, 'GET', `/quotas/${UNKNOWN_PROJECT}`)).body).toEqual({ quota: DEFAULTS });
    expect((await net(env, admin, 'GET', `/quotas/${UNKNOWN_PROJECT}/details`)).body.quota.router).toEqual({
      limit: 3,
      used: 0,
      reserved: 0,
    });
    expectNeutronError(await net(env, owner, 'GET', `/quotas/${UNKNOWN_PROJECT}`), 404, 'ProjectNotFound');
    for (const id of ['not-a-project', '8c1a8e9e-5d7e-4b8f-9f43-000000000000', 'A'.repeat(32)])
      expectNeutronError(await net(env, admin, 'GET', `/quotas/${id}`), 404, 'ProjectNotFound');
  });

  it('details count what the project holds', async () => {
    const p = await freshProject('q-details');
    const { network: ext } = await externalNet(env, 'q-details-ext', '198.18.10.0/24');
    await create(env, p, 'routers', 'router', { name: 'qd-r' });
    await create(env, p, 'floatingips', 'floatingip', { floating_network_id: ext.id });
    await create(env, p, 'floatingips', 'floatingip', { floating_network_id: ext.id });
    const res = await net(env, p, 'GET', `/quotas/${p.projectId}/details`);
    expect(res.body).toEqual({
      quota: { router: { limit: 3, used: 1, reserved: 0 }, floatingip: { limit: 2, used: 2, reserved: 0 } },
    });
  });

  it('the extensions are announced; other methods are 405', async () => {
    const aliases = (await net(env, env.p.owner, 'GET', '/extensions')).body.extensions.map((e: any) => e.alias);
    expect(aliases).toEqual(expect.arrayContaining(['quotas', 'quota_details', 'quota-check-limit']));
    expectNeutronError(await net(env, env.p.admin, 'POST', '/quotas', { quota: { router: 1 } }), 405, 'HTTPMethodNotAllowed');
    expectNeutronError(await net(env, env.p.admin, 'POST', `/quotas/${env.p.owner.projectId}`, { quota: {} }), 405);
    expectNeutronError(await net(env, env.p.admin, 'PUT', `/quotas/${env.p.owner.projectId}/default`, { quota: {} }), 405);
  });
});

describe('network quotas: writes', () => {
  it('only admins set and reset limits: 403 on one’s own project, 404 on another’s, 401 anonymous; nothing written', async () => {
    const { admin, owner, lessee, other, anonymous } = env.p;
    const o = owner.projectId!;
    expect((await net(env, admin, 'DELETE', `/quotas/${o}`)).status).toBe(204);
    const before = await quotaRows();
    expectNeutronError(await net(env, owner, 'PUT', `/quotas/${o}`, { quota: { router: 50 } }), 403, 'PolicyNotAuthorized', /update_quota/);
    expectNeutronError(await net(env, owner, 'DELETE', `/quotas/${o}`), 403, 'PolicyNotAuthorized', /delete_quota/);
    for (const p of [lessee, other]) {
      expectNeutronError(await net(env, p, 'PUT', `/quotas/${o}`, { quota: { router: 50 } }), 404, 'ProjectNotFound');
      expectNeutronError(await net(env, p, 'DELETE', `/quotas/${o}`), 404, 'ProjectNotFound');
    }
    expectNeutronError(await net(env, anonymous, 'PUT', `/quotas/${o}`, { quota: { router: 50 } }), 401);
    expectNeutronError(await net(env, anonymous, 'DELETE', `/quotas/${o}`), 401);
    expectNeutronError(await net(env, anonymous, 'GET', '/quotas'), 401);
    expect(await quotaRows()).toEqual(before);

    // The admin sets one resource; the other keeps its default.
    expect(await setQuota(o, { router: 7 })).toEqual({ router: 7, floatingip: 2 });
    expect((await net(env, owner, 'GET', `/quotas/${o}`)).body.quota).toEqual({ router: 7, floatingip: 2 });
    expect((await net(env, owner, 'GET', `/quotas/${o}/default`)).body.quota).toEqual(DEFAULTS);
    // The list: the admin sees every project with limits, a project its own entry, others nothing.
    const entry = { project_id: o, tenant_id: o, router: 7, floatingip: 2 };
    expect((await net(env, admin, 'GET', '/quotas')).body.quotas).toContainEqual(entry);
    expect((await net(env, owner, 'GET', '/quotas')).body).toEqual({ quotas: [entry] });
    for (const p of [lessee, other])
      expect((await net(env, p, 'GET', '/quotas')).body.quotas.map((q: any) => q.project_id)).not.toContain(o);
    // Reset: back to the defaults, gone from the list; resetting again is fine.
    expect((await net(env, admin, 'DELETE', `/quotas/${o}`)).status).toBe(204);
    expect((await net(env, admin, 'DELETE', `/quotas/${o}`)).status).toBe(204);
    expect((await net(env, owner, 'GET', `/quotas/${o}`)).body.quota).toEqual(DEFAULTS);
    expect((await net(env, admin, 'GET', '/quotas')).body.quotas.map((q: any) => q.project_id)).not.toContain(o);
  });

  it('an admin cannot set limits of a project that does not exist (404), but may reset them', async () => {
    const before = await quotaRows();
    expectNeutronError(await net(env, env.p.admin, 'PUT', `/quotas/${UNKNOWN_PROJECT}`, { quota: { router: 1 } }), 404, 'ProjectNotFound');
    expectNeutronError(await net(env, env.p.admin, 'PUT', '/quotas/not-a-project', { quota: { router: 1 } }), 404, 'ProjectNotFound');
    expect((await net(env, env.p.admin, 'DELETE', `/quotas/${UNKNOWN_PROJECT}`)).status).toBe(204);
    expectNeutronError(await net(env, env.p.admin, 'DELETE', '/quotas/not-a-project'), 404);
    expect(await quotaRows()).toEqual(before);
  });

  it('bad bodies are 400 in Neutron’s format and write nothing', async () => {
    const p = await freshProject('q-bad');
    await setQuota(p.projectId!, { router: 5 });
    const before = await quotaRows();
    const cases: Array<[unknown, RegExp]> = [
      [{ quota: { router: 1.5 } }, /Invalid input for router\. Reason: '1\.5' is not an integer/],
      [{ quota: { router: '4' } }, /'4' is not an integer/],
      [{ quota: { router: true } }, /'true' is not an integer/],
      [{ quota: { router: null } }, /'null' is not an integer/],
      [{ quota: { floatingip: { n: 1 } } }, /is not an integer/],
      [{ quota: { router: -2 } }, /'-2' is too small - must be at least '-1'/],
      [{ quota: { router: 2_147_483_648 } }, /is too large - must be no larger than '2147483647'/],
      [{ quota: { router: 1, network: 5 } }, /esi does not enforce a quota on network/],
      [{ quota: { security_group: 5 } }, /esi does not enforce a quota on security_group/],
      [{ quota: { router: 1, foo: 2 } }, /Unrecognized attribute\(s\) 'foo'/],
      [{ quota: { router: 1, project_id: p.projectId } }, /Unrecognized attribute\(s\) 'project_id'/],
      [{ quota: { router: 1, check_limit: 'yes' } }, /Invalid input for check_limit/],
      [{ quota: { router: 1, force: 1 } }, /Invalid input for force/],
      [{ quota: [1] }, /the quota must be a JSON object/],
      [{ quota: 'x' }, /the quota must be a JSON object/],
      [{ router: 1 }, /Unable to find 'quota' in request body/],
      [{ quota: { router: 1 }, extra: 1 }, /Unrecognized attribute\(s\) 'extra'/],
      [{ quotas: [{ router: 1 }] }, /Bulk quotas operations are not supported/],
      [[{ quota: { router: 1 } }], /Resource body required/],
    ];
    for (const [body, message] of cases) {
      const res = await net(env, env.p.admin, 'PUT', `/quotas/${p.projectId}`, body);
      expectNeutronError(res, 400, 'HTTPBadRequest', message);
    }
    expect(await quotaRows()).toEqual(before);
    expect((await net(env, p, 'GET', `/quotas/${p.projectId}`)).body.quota).toEqual({ router: 5, floatingip: 2 });
    // The limits of the range are fine, and `force` is accepted.
    expect(await setQuota(p.projectId!, { router: 2_147_483_647, floatingip: -1, force: true })).toEqual({
      router: 2_147_483_647,
      floatingip: -1,
    });
    expect(await setQuota(p.projectId!, {})).toEqual({ router: 2_147_483_647, floatingip: -1 });
  });
});

describe('network quotas: enforcement', () => {
  it('router creation follows the project’s limit: lowered, raised, unlimited, reset', async () => {
    const p = await freshProject('q-routers');
    const id = p.projectId!;
    const neighbour = await freshProject('q-routers-2');
    await setQuota(id, { router: 1 });
    expect(await router(p, 'a')).toBe(201);
    expectNeutronError(
      await net(env, p, 'POST', '/routers', { router: { name: 'b' } }),
      409,
      'OverQuota',
      /Quota exceeded for resources: \['router'\] \(1 per project\)/,
    );
    // Another project keeps the default (3).
    for (const n of ['x', 'y', 'z']) expect(await router(neighbour, n)).toBe(201);
    expect(await router(neighbour, 'w')).toBe(409);
    // An admin creating a router for the project counts against the project's limit too.
    expectNeutronError(await net(env, env.p.admin, 'POST', '/routers', { router: { name: 'c', project_id: id } }), 409, 'OverQuota');
    await setQuota(id, { router: 2 });
    expect(await router(p, 'b')).toBe(201);
    expect(await router(p, 'c')).toBe(409);
    await setQuota(id, { router: -1 });
    for (const n of ['c', 'd', 'e']) expect(await router(p, n)).toBe(201);
    expect((await net(env, p, 'GET', `/quotas/${id}/details`)).body.quota.router).toEqual({ limit: -1, used: 5, reserved: 0 });
    // Reset to the default (3) while holding 5: no new router until below it.
    expect((await net(env, env.p.admin, 'DELETE', `/quotas/${id}`)).status).toBe(204);
    expectNeutronError(await net(env, p, 'POST', '/routers', { router: { name: 'f' } }), 409, 'OverQuota', /\(3 per project\)/);
    // A limit of 0 forbids any.
    await setQuota(neighbour.projectId!, { router: 0 });
    const mine = (await net(env, neighbour, 'GET', '/routers')).body.routers;
    for (const r of mine) expect((await net(env, neighbour, 'DELETE', `/routers/${r.id}`)).status).toBe(204);
    expect(await router(neighbour, 'none')).toBe(409);
  });

  it('floating IP creation follows the project’s limit', async () => {
    const p = await freshProject('q-fips');
    const { network: ext } = await externalNet(env, 'q-fips-ext', '198.18.11.0/24');
    const fip = () => net(env, p, 'POST', '/floatingips', { floatingip: { floating_network_id: ext.id } });
    await setQuota(p.projectId!, { floatingip: 1 });
    expect((await fip()).status).toBe(201);
    expectNeutronError(await fip(), 409, 'OverQuota', /Quota exceeded for resources: \['floatingip'\] \(1 per project\)/);
    await setQuota(p.projectId!, { floatingip: -1 });
    for (let i = 0; i < 3; i++) expect((await fip()).status).toBe(201);
    await setQuota(p.projectId!, { floatingip: 4 });
    expect((await fip()).status).toBe(409);
  });

  it('check_limit refuses a limit below the usage (400, nothing written); without it the limit is set', async () => {
    const p = await freshProject('q-check');
    const id = p.projectId!;
    for (const n of ['a', 'b']) expect(await router(p, n)).toBe(201);
    await setQuota(id, { router: 3 });
    const before = await quotaRows();
    expectNeutronError(
      await net(env, env.p.admin, 'PUT', `/quotas/${id}`, { quota: { router: 1, floatingip: 9, check_limit: true } }),
      400,
      'HTTPBadRequest',
      /Quota limit 1 for router must be greater than or equal to already used 2/,
    );
    expect(await quotaRows()).toEqual(before);
    expect((await net(env, p, 'GET', `/quotas/${id}`)).body.quota).toEqual({ router: 3, floatingip: 2 });
    // At the usage, or unlimited, passes the check.
    expect(await setQuota(id, { router: 2, check_limit: true })).toEqual({ router: 2, floatingip: 2 });
    expect(await setQuota(id, { router: -1, check_limit: true })).toEqual({ router: -1, floatingip: 2 });
    // Without check_limit (or with check_limit false) a limit below the usage is set, as Neutron;
    // the project then creates no more until it is below the limit.
    expect(await setQuota(id, { router: 1, check_limit: false })).toEqual({ router: 1, floatingip: 2 });
    expect(await router(p, 'c')).toBe(409);
  });

  it('concurrent creations never pass the limit an admin set', async () => {
    const p = await freshProject('q-race');
    await setQuota(p.projectId!, { router: 2 });
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => router(p, `race-${i}`)));
    expect(results.filter((s) => s === 201)).toHaveLength(2);
    expect(results.filter((s) => s === 409)).toHaveLength(4);
  });
});
