/**
 * Deploy templates (https://docs.openstack.org/api-ref/baremetal/#deploy-templates-deploy-templates,
 * Ironic 21.4 `deploy_template.py`, API ≥ 1.55): create, list (fields, detail, sort, pages), show
 * by UUID or name, PATCH, delete; validation of names and steps with Ironic's answers; the five
 * personas (a system-level resource: project callers 403, nothing written); the 1.55 gate; and
 * templates applied to fake-hardware deploys whose instance traits name them (refusals at the
 * provision request, an unknown step failing the deploy with `last_error`, `…/validate`).
 * Templates on real BMCs and the agent deploy's plan: deploy-templates-apply.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bm, enroll, expectError, getNode, provision, settled, startConductorEnv, type ConductorEnv } from '../conductor/support.ts';
import { fault } from './helpers.ts';

let env: ConductorEnv;
const T = '/v1/deploy_templates';
const SETTINGS = { settings: [{ name: 'ProcVirtualization', value: 'Disabled' }] };
const bios = (priority: number, args: Record<string, unknown> = SETTINGS) => ({
  interface: 'bios',
  step: 'apply_configuration',
  args,
  priority,
});

beforeAll(async () => {
  env = await startConductorEnv(0);
});
afterAll(async () => env?.close());

/** Create a template as admin; its JSON. */
async function create(body: Record<string, unknown>): Promise<any> {
  const r = await bm(env.ts, env.p.admin, 'POST', T, body);
  expect(r.status, r.text).toBe(201);
  return r.body;
}

/** Names of all templates, as admin. */
async function names(): Promise<string[]> {
  return (await bm(env.ts, env.p.admin, 'GET', `${T}?limit=1000`)).body.deploy_templates.map((t: any) => t.name);
}

describe('the resource', () => {
  it('creates (201, Location), shows by UUID and by name, masks secret step arguments, accepts and hides description', async () => {
    const r = await bm(env.ts, env.p.admin, 'POST', T, {
      name: 'CUSTOM_SHOW',
      description: 'not shown in 21.4',
      extra: { rack: 7 },
      steps: [bios(150), { interface: 'raid', step: 'delete_configuration', args: { admin_password: 's3cret' }, priority: '5' }],
    });
    expect(r.status, r.text).toBe(201);
    expect(r.headers.get('location')).toBe(`${env.ts.url}/baremetal/v1/deploy_templates/${r.body.uuid}`);
    expect(Object.keys(r.body)).toEqual(['uuid', 'created_at', 'updated_at', 'name', 'extra', 'links', 'steps']);
    expect(r.body).toMatchObject({ name: 'CUSTOM_SHOW', extra: { rack: 7 }, updated_at: null });
    expect(r.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+\+00:00$/);
    expect(r.body.steps).toEqual([
      bios(150),
      { interface: 'raid', step: 'delete_configuration', args: { admin_password: '******' }, priority: 5 },
    ]);
    const byName = await bm(env.ts, env.p.admin, 'GET', `${T}/CUSTOM_SHOW`);
    expect(byName.body).toEqual(r.body);
    expect((await bm(env.ts, env.p.admin, 'GET', `${T}/${r.body.uuid.toUpperCase()}`)).body.uuid).toBe(r.body.uuid);
    const some = await bm(env.ts, env.p.admin, 'GET', `${T}/CUSTOM_SHOW?fields=uuid,extra`);
    expect(some.body).toEqual({ uuid: r.body.uuid, extra: { rack: 7 }, links: r.body.links });
    expectError(await bm(env.ts, env.p.admin, 'GET', `${T}/CUSTOM_SHOW?fields=description`), 400, /Field\(s\) "description" are not valid/);
    expectError(await bm(env.ts, env.p.admin, 'GET', `${T}/CUSTOM_NOPE`), 404, /^Deploy template CUSTOM_NOPE could not be found\.$/);
    expectError(await bm(env.ts, env.p.admin, 'GET', `${T}/a%20b`), 400, /^Expected UUID or name for template_ident: a b$/);
  });

  it('lists uuid, name and links by default; detail and fields; sorts and pages with Ironic next links', async () => {
    for (const n of ['CUSTOM_LIST_B', 'CUSTOM_LIST_A', 'CUSTOM_LIST_C']) await create({ name: n, steps: [bios(10)] });
    const all = await bm(env.ts, env.p.admin, 'GET', T);
    expect(all.status).toBe(200);
    const a = all.body.deploy_templates.find((t: any) => t.name === 'CUSTOM_LIST_A');
    expect(Object.keys(a)).toEqual(['uuid', 'name', 'links']);
    const detail = await bm(env.ts, env.p.admin, 'GET', `${T}?detail=true`);
    expect(Object.keys(detail.body.deploy_templates[0])).toEqual(['uuid', 'created_at', 'updated_at', 'name', 'extra', 'links', 'steps']);
    const fields = await bm(env.ts, env.p.admin, 'GET', `${T}?fields=name,steps`);
    expect(Object.keys(fields.body.deploy_templates[0])).toEqual(['name', 'links', 'steps']);
    const sorted = (await bm(env.ts, env.p.admin, 'GET', `${T}?sort_key=name&sort_dir=desc`)).body.deploy_templates.map((t: any) => t.name);
    expect(sorted).toEqual([...sorted].sort().reverse());
    const page = await bm(env.ts, env.p.admin, 'GET', `${T}?sort_key=name&limit=2&detail=True`);
    expect(page.body.deploy_templates).toHaveLength(2);
    const last = page.body.deploy_templates[1].uuid;
    expect(page.body.next).toBe(
      `${env.ts.url}/baremetal/v1/deploy_templates?sort_key=name&sort_dir=asc&detail=True&limit=2&marker=${last}`,
    );
    const rest = await bm(env.ts, env.p.admin, 'GET', page.body.next.slice(`${env.ts.url}/baremetal`.length));
    expect(rest.body.deploy_templates[0].name > page.body.deploy_templates[1].name).toBe(true);
    expectError(await bm(env.ts, env.p.admin, 'GET', `${T}?detail=true&fields=name`), 400, /Can not specify \?detail=True and fields/);
    expectError(await bm(env.ts, env.p.admin, 'GET', `${T}?fields=name,colour`), 400, /Field\(s\) "colour" are not valid/);
    expectError(
      await bm(env.ts, env.p.admin, 'GET', `${T}?sort_key=steps`),
      400,
      /^The sort_key value steps is an invalid field for sorting$/,
    );
    expectError(await bm(env.ts, env.p.admin, 'GET', `${T}?sort_key=colour`), 400, /"colour" is an invalid field for sorting/);
    expectError(await bm(env.ts, env.p.admin, 'GET', `${T}?marker=CUSTOM_LIST_A`), 404, /Deploy template CUSTOM_LIST_A could not be found/);
    expectError(await bm(env.ts, env.p.admin, 'GET', `${T}?limit=0`), 400);
    expectError(await bm(env.ts, env.p.admin, 'GET', `${T}?colour=1`), 400, /Unexpected arguments: colour/);
  });

  it.each([
    ['a name that is not a trait', { name: 'bad', steps: [bios(1)] }, /a deploy template name must be a valid trait/],
    ['no steps', { name: 'CUSTOM_V', steps: [] }, /\[\] is too short/],
    ['no name', { steps: [bios(1)] }, /'name' is a required property/],
    ['an interface steps cannot name', { name: 'CUSTOM_V', steps: [{ ...bios(1), interface: 'boot' }] }, /'boot' is not one of/],
    ['a negative priority', { name: 'CUSTOM_V', steps: [bios(-1)] }, /-1 is less than the minimum of 0/],
    ['a step without args', { name: 'CUSTOM_V', steps: [{ interface: 'bios', step: 'x', priority: 1 }] }, /'args' is a required property/],
    ['an unknown step key', { name: 'CUSTOM_V', steps: [{ ...bios(1), foo: 1 }] }, /'foo' was unexpected/],
    ['an unknown field', { name: 'CUSTOM_V', steps: [bios(1)], foo: 1 }, /'foo' was unexpected/],
    ['a malformed uuid', { name: 'CUSTOM_V', steps: [bios(1)], uuid: 'nope' }, /Expected UUID for uuid: nope/],
    ['a long description', { name: 'CUSTOM_V', steps: [bios(1)], description: 'x'.repeat(256) }, /at most 255 characters/],
    [
      'a duplicated step',
      { name: 'CUSTOM_V', steps: [bios(1), bios(2)] },
      /Duplicate deploy steps.*interface: bios, step: apply_configuration/,
    ],
    ['a body that is not an object', [bios(1)], /must be a JSON object/],
  ])('refuses %s with 400 and writes nothing', async (_what, body, message) => {
    const before = await names();
    expectError(await bm(env.ts, env.p.admin, 'POST', T, body), 400, message);
    expect(await names()).toEqual(before);
  });

  it('refuses a duplicate name or UUID with 409', async () => {
    const t = await create({ name: 'CUSTOM_DUP', steps: [bios(1)] });
    expectError(
      await bm(env.ts, env.p.admin, 'POST', T, { name: 'CUSTOM_DUP', steps: [bios(1)] }),
      409,
      /^A deploy template with name CUSTOM_DUP already exists\.$/,
    );
    expectError(
      await bm(env.ts, env.p.admin, 'POST', T, { name: 'CUSTOM_DUP2', uuid: t.uuid, steps: [bios(1)] }),
      409,
      /^A deploy template with UUID .* already exists\.$/,
    );
    expect((await names()).filter((n) => n.startsWith('CUSTOM_DUP'))).toEqual(['CUSTOM_DUP']);
  });

  it('PATCHes name, steps and extra; refuses read-only paths, a taken name and an invalid result', async () => {
    const t = await create({ name: 'CUSTOM_PATCH', steps: [bios(5)] });
    const other = await create({ name: 'CUSTOM_PATCH_TAKEN', steps: [bios(5)] });
    const p = (ops: unknown, ident = t.uuid) => bm(env.ts, env.p.admin, 'PATCH', `${T}/${ident}`, ops);
    const renamed = await p([
      { op: 'replace', path: '/name', value: 'CUSTOM_PATCHED' },
      { op: 'add', path: '/extra/foo', value: 'bar' },
      { op: 'replace', path: '/steps/0/priority', value: 7 },
      { op: 'add', path: '/steps/-', value: { interface: 'raid', step: 'delete_configuration', args: {}, priority: 0 } },
    ]);
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'CUSTOM_PATCHED', extra: { foo: 'bar' } });
    expect(renamed.body.steps.map((s: any) => s.priority)).toEqual([7, 0]);
    expect(renamed.body.updated_at).not.toBeNull();
    expect((await p([])).body).toEqual(renamed.body);
    const unchanged = JSON.stringify((await bm(env.ts, env.p.admin, 'GET', `${T}/${t.uuid}`)).body);
    for (const [ops, status, message] of [
      [
        [{ op: 'replace', path: '/uuid', value: other.uuid }],
        400,
        /^Cannot patch \/uuid\. Only the following can be updated: extra, name, steps, description$/,
      ],
      [[{ op: 'replace', path: '/created_at', value: 'x' }], 400, /Cannot patch \/created_at/],
      [
        [{ op: 'add', path: '/description', value: 'd' }],
        400,
        /Adding a new attribute \(\/description\) to the root of the resource is not allowed/,
      ],
      [[{ op: 'replace', path: '/name', value: 'CUSTOM_PATCH_TAKEN' }], 409, /with name CUSTOM_PATCH_TAKEN already exists/],
      [[{ op: 'replace', path: '/name', value: 'bad' }], 400, /valid trait/],
      [[{ op: 'remove', path: '/steps' }], 400, /'steps' is a required property/],
      [[{ op: 'replace', path: '/steps', value: [] }], 400, /too short/],
      [[{ op: 'replace', path: '/steps/0/interface', value: 'boot' }], 400, /'boot' is not one of/],
      [[{ op: 'replace', path: '/steps/0/foo', value: 1 }], 400, /can't replace non-existent object 'foo'/],
      [{ op: 'replace', path: '/name', value: 'CUSTOM_Q' }, 400, /JSON array/],
    ] as const) {
      expectError(await p(ops), status, message);
    }
    expect(JSON.stringify((await bm(env.ts, env.p.admin, 'GET', `${T}/${t.uuid}`)).body)).toBe(unchanged);
  });

  it('deletes (204), then 404', async () => {
    const t = await create({ name: 'CUSTOM_DEL', steps: [bios(1)] });
    const r = await bm(env.ts, env.p.admin, 'DELETE', `${T}/CUSTOM_DEL`);
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expectError(await bm(env.ts, env.p.admin, 'GET', `${T}/${t.uuid}`), 404);
    expectError(await bm(env.ts, env.p.admin, 'DELETE', `${T}/CUSTOM_DEL`), 404);
  });

  it('is a system-level resource: project callers 403 and nothing changes, anonymous 401', async () => {
    const t = await create({ name: 'CUSTOM_SYS', steps: [bios(1)] });
    const before = JSON.stringify(await names());
    for (const who of [env.p.owner, env.p.lessee, env.p.other]) {
      expectError(await bm(env.ts, who, 'GET', T), 403);
      expectError(await bm(env.ts, who, 'GET', `${T}/${t.uuid}`), 403);
      expectError(await bm(env.ts, who, 'POST', T, { name: 'CUSTOM_MINE', steps: [bios(1)] }), 403);
      expectError(await bm(env.ts, who, 'PATCH', `${T}/${t.uuid}`, [{ op: 'replace', path: '/name', value: 'CUSTOM_MINE' }]), 403);
      expectError(await bm(env.ts, who, 'DELETE', `${T}/${t.uuid}`), 403);
    }
    for (const [m, path] of [
      ['GET', T],
      ['POST', T],
      ['DELETE', `${T}/${t.uuid}`],
    ] as const)
      expectError(await bm(env.ts, env.p.anonymous, m, path, m === 'POST' ? {} : undefined), 401);
    expect(JSON.stringify(await names())).toBe(before);
  });

  it('does not exist before 1.55: GET 404, other methods 405, in webob’s error shape', async () => {
    const get = await bm(env.ts, env.p.admin, 'GET', T, undefined, '1.54');
    expect(get.status).toBe(404);
    expect(JSON.parse(get.body.error_message)).toEqual({
      code: 404,
      title: 'Not Found',
      description: 'The API version does not allow deploy templates',
    });
    for (const [m, path] of [
      ['POST', T],
      ['PATCH', `${T}/CUSTOM_X`],
      ['DELETE', `${T}/CUSTOM_X`],
    ] as const) {
      const r = await bm(env.ts, env.p.admin, m, path, m === 'POST' ? { name: 'CUSTOM_OLD', steps: [bios(1)] } : [], '1.54');
      expect(r.status).toBe(405);
      expect(JSON.parse(r.body.error_message)).toMatchObject({ code: 405, title: 'Method Not Allowed' });
    }
    expect(await names()).not.toContain('CUSTOM_OLD');
    expect((await bm(env.ts, env.p.anonymous, 'GET', '/v1', undefined, '1.55')).body.deploy_templates[0].href).toBe(
      `${env.ts.url}/baremetal/v1/deploy_templates/`,
    );
  });
});

describe('templates at deploy (fake-hardware)', () => {
  /** A fake-hardware node of o1 with traits, available, with `instance_info`. */
  async function available(name: string, traits: string[], instanceInfo: Record<string, unknown>): Promise<any> {
    const n = await enroll(env, { driver: 'fake-hardware', name, automated_clean: false });
    expect((await bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${n.uuid}/traits`, { traits })).status).toBe(204);
    const patched = await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${n.uuid}`, [
      { op: 'add', path: '/instance_info', value: instanceInfo },
    ]);
    expect(patched.status, patched.text).toBe(200);
    await provision(env, n.uuid, 'manage');
    await settled(env, n.uuid);
    await provision(env, n.uuid, 'provide');
    expect((await settled(env, n.uuid)).provision_state).toBe('available');
    return n;
  }

  it('runs the steps of the templates the instance traits name; the others are left alone', async () => {
    await create({ name: 'CUSTOM_FAKE_BIOS', steps: [bios(150)] });
    await create({ name: 'CUSTOM_NOT_ASKED', steps: [{ interface: 'deploy', step: 'not_a_step', args: {}, priority: 10 }] });
    const n = await available('tpl-ok', ['CUSTOM_FAKE_BIOS', 'CUSTOM_NOT_ASKED'], { traits: ['CUSTOM_FAKE_BIOS'] });
    expect((await bm(env.ts, env.p.owner, 'GET', `/v1/nodes/${n.uuid}/validate`)).body.deploy).toEqual({ result: true });
    await provision(env, n.uuid, 'active', {}, env.p.lessee);
    const done = await settled(env, n.uuid);
    expect(done).toMatchObject({ provision_state: 'active', last_error: null, deploy_step: {} });
    expect(done.driver_internal_info.deploy_steps).toBeUndefined();
  });

  it('fails the deploy before anything runs when a matching template names a step the node does not offer', async () => {
    await create({ name: 'CUSTOM_UNKNOWN_STEP', steps: [{ interface: 'deploy', step: 'flash_the_moon', args: {}, priority: 90 }] });
    const n = await available('tpl-unknown', ['CUSTOM_UNKNOWN_STEP'], { traits: ['CUSTOM_UNKNOWN_STEP'] });
    expect((await getNode(env, n.uuid)).power_state).toBe('power off');
    await provision(env, n.uuid, 'active');
    const failed = await settled(env, n.uuid);
    expect(failed.provision_state).toBe('deploy failed');
    expect(failed.last_error).toMatch(
      /^Cannot get deploy steps; failed to deploy: Validation of deploy steps from deploy templates matching this node's instance traits failed\. Matching deploy templates: CUSTOM_UNKNOWN_STEP\. Errors: node does not support this deploy step: .*flash_the_moon/,
    );
    expect(failed.power_state).toBe('power off');
  });

  it('refuses at the provision request (400, nothing changes) what Ironic checks up front; validate says why', async () => {
    await create({ name: 'CUSTOM_NO_ARGS', steps: [bios(150, {})] });
    await create({ name: 'CUSTOM_CORE', steps: [{ interface: 'deploy', step: 'deploy', args: {}, priority: 150 }] });
    const n = await available('tpl-refused', ['CUSTOM_NO_ARGS', 'CUSTOM_CORE', 'CUSTOM_OTHER'], {});
    const tryDeploy = async (ii: Record<string, unknown>, message: RegExp, extra: Record<string, unknown> = {}) => {
      const patched = await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${n.uuid}`, [{ op: 'replace', path: '/instance_info', value: ii }]);
      expect(patched.status, patched.text).toBe(200);
      const r = await bm(env.ts, env.p.lessee, 'PUT', `/v1/nodes/${n.uuid}/states/provision`, { target: 'active', ...extra });
      expectError(r, 400, message);
      expect(fault(r).faultstring).toMatch(new RegExp(`^Failed to validate deploy or power info for node ${n.uuid}: `));
      expect((await getNode(env, n.uuid)).provision_state).toBe('available');
    };
    await tryDeploy({ traits: ['CUSTOM_NOT_ON_NODE'] }, /Node .* is missing traits CUSTOM_NOT_ON_NODE/);
    await tryDeploy({ traits: 'CUSTOM_NO_ARGS' }, /A list of strings is expected/);
    await tryDeploy(
      { traits: ['CUSTOM_NO_ARGS'] },
      /Matching deploy templates: CUSTOM_NO_ARGS\. Errors: .*missing these required arguments: settings/,
    );
    await tryDeploy({ traits: ['CUSTOM_CORE'] }, /deploy on interface deploy is a core step/);
    await tryDeploy({}, /"deploy steps" argument failed\. .*has these unexpected arguments: force/, {
      deploy_steps: [{ interface: 'bios', step: 'factory_reset', args: { force: true }, priority: 1 }],
    });
    const v = await bm(env.ts, env.p.owner, 'GET', `/v1/nodes/${n.uuid}/validate`);
    expect(v.body.deploy).toEqual({ result: true });
    await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${n.uuid}`, [
      { op: 'replace', path: '/instance_info', value: { traits: ['CUSTOM_CORE'] } },
    ]);
    const bad = await bm(env.ts, env.p.owner, 'GET', `/v1/nodes/${n.uuid}/validate`);
    expect(bad.body.deploy.result).toBe(false);
    expect(bad.body.deploy.reason).toMatch(/^Validation of deploy steps from deploy templates .*core step/);
    // A matching template that is not there (yet) is no problem: a trait need not name one.
    await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${n.uuid}`, [
      { op: 'replace', path: '/instance_info', value: { traits: ['CUSTOM_OTHER'] } },
    ]);
    await provision(env, n.uuid, 'active');
    expect((await settled(env, n.uuid)).provision_state).toBe('active');
  });
});
