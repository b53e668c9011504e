/**
 * Names in esi's one-call network endpoints (src/domain/networking/names.ts): a name means the
 * caller's own resource first; another project's (shared with it, or on its network) only when
 * the caller owns none of that name and exactly one is visible; several are 409 naming no
 * resource. Any project may RBAC-share a network with any other, so without this a project could
 * make `--network prod` ambiguous for another, or land its node on the sharer's VLAN.
 *
 * With an operator policy hiding other projects' ports from a network's owner and trunks from
 * everyone but admins, names resolve only to what that policy lets the caller see.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cabledNode, create, createSwitch, expectNeutronError, net, startNetEnv, type NetEnv } from './support.ts';

let env: NetEnv;
beforeAll(async () => {
  env = await startNetEnv();
  await createSwitch(env, 'tor-n');
  await cabledNode(env, 'nn1', 'tor-n', ['52:54:00:00:41:00', '52:54:00:00:41:01', '52:54:00:00:41:02']);
});
afterAll(async () => env?.ts.close());

/** A network of `persona` named `name`, shared by RBAC with the lessee. */
async function sharedToLessee(persona: 'owner' | 'other', name: string): Promise<any> {
  const n = await create(env, env.p[persona], 'networks', 'network', { name });
  await create(env, env.p[persona], 'rbac-policies', 'rbac_policy', {
    object_type: 'network',
    object_id: n.id,
    action: 'access_as_shared',
    target_tenant: env.p.lessee.projectId,
  });
  return n;
}

describe('network names', () => {
  it('mean the caller’s own network even when another project shares one of that name', async () => {
    const { lessee } = env.p;
    const own = await create(env, lessee, 'networks', 'network', { name: 'prod' });
    const squat = await sharedToLessee('other', 'prod');
    // Both are visible to the lessee in the Neutron API…
    expect((await net(env, lessee, 'GET', '/networks?name=prod')).body.networks.map((n: any) => n.id).sort()).toEqual(
      [own.id, squat.id].sort(),
    );
    // …but `prod` in esi's commands is its own.
    const t = await net(env, lessee, 'POST', '/esi/trunks', { name: 'pt', native_network: 'prod' });
    expect(t.status, t.text).toBe(201);
    expect(t.body.trunk.networks.map((n: any) => n.id)).toEqual([own.id]);
    const att = await net(env, lessee, 'POST', '/esi/node-networks', { node: 'nn1', network: 'prod' });
    expect(att.status, att.text).toBe(200);
    expect(att.body.node_network.networks.map((n: any) => n.id)).toEqual([own.id]);
    const listed = (await net(env, lessee, 'GET', '/esi/node-networks?node=nn1&network=prod')).body.node_networks;
    expect(listed.map((r: any) => r.network_port.name)).toEqual(['esi-nn1-prod']);
    expect((await net(env, lessee, 'POST', '/esi/node-networks/detach', { node: 'nn1', ports: ['esi-nn1-prod'] })).status).toBe(200);
  });

  it('take another project’s shared network only when it is the one of that name, else 409 naming none', async () => {
    const { lessee } = env.p;
    const only = await sharedToLessee('owner', 'stage');
    const t = await net(env, lessee, 'POST', '/esi/trunks', { name: 'st', native_network: 'stage' });
    expect(t.status, t.text).toBe(201);
    expect(t.body.trunk.networks.map((n: any) => n.id)).toEqual([only.id]);
    const second = await sharedToLessee('other', 'stage');
    const amb = await net(env, lessee, 'POST', '/esi/trunks', { name: 'st2', native_network: 'stage' });
    expectNeutronError(amb, 409, 'NameNotUnique', /More than one network named stage is visible to you; use its ID/);
    for (const id of [only.id, second.id]) expect(amb.text).not.toContain(id);
    expect((await net(env, lessee, 'POST', '/esi/trunks', { name: 'st2', native_network: second.id })).status).toBe(201);
    expectNeutronError(await net(env, lessee, 'POST', '/esi/trunks', { name: 'st3', native_network: 'nowhere' }), 404);
  });

  it('two own networks of one name are 409', async () => {
    const { owner } = env.p;
    await create(env, owner, 'networks', 'network', { name: 'twice' });
    await create(env, owner, 'networks', 'network', { name: 'twice' });
    expectNeutronError(
      await net(env, owner, 'POST', '/esi/trunks', { name: 'tw', native_network: 'twice' }),
      409,
      'NameNotUnique',
      /Your project has more than one network named twice/,
    );
  });
});

describe('port names', () => {
  it('mean the caller’s own port before another project’s port on its network', async () => {
    const { owner, lessee } = env.p;
    const onet = await sharedToLessee('owner', 'port-net');
    const mine = await create(env, owner, 'ports', 'port', { network_id: onet.id, name: 'dup' });
    await create(env, lessee, 'ports', 'port', { network_id: onet.id, name: 'dup' });
    const att = await net(env, owner, 'POST', '/esi/node-networks', { node: 'nn1', port: 'dup' });
    expect(att.status, att.text).toBe(200);
    expect(att.body.node_network.network_port.id).toBe(mine.id);
    expect((await net(env, owner, 'POST', '/esi/node-networks/detach', { node: 'nn1', ports: ['dup'] })).body.detached).toEqual([mine.id]);
  });
});

describe('with an operator policy that hides more', () => {
  let penv: NetEnv;
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-names-'));
    const file = path.join(dir, 'policy.yaml');
    fs.writeFileSync(file, ['"get_port": "rule:context_is_admin or rule:owner"', '"get_trunk": "rule:context_is_admin"', ''].join('\n'));
    penv = await startNetEnv({ env: { ESI_POLICY_FILE: file } });
    await createSwitch(penv, 'tor-p');
    await cabledNode(penv, 'pn1', 'tor-p', ['52:54:00:00:42:00']);
  });
  afterAll(async () => {
    await penv?.ts.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('resolves port and trunk names only to what the policy lets the caller see', async () => {
    const { owner, lessee } = penv.p;
    const onet = await create(penv, owner, 'networks', 'network', { name: 'p-net' });
    await create(penv, owner, 'rbac-policies', 'rbac_policy', {
      object_type: 'network',
      object_id: onet.id,
      action: 'access_as_shared',
      target_tenant: lessee.projectId,
    });
    await create(penv, lessee, 'ports', 'port', { network_id: onet.id, name: 'lessee-only' });
    // The owner may not see the lessee's port under this policy: its name is unknown to it.
    expectNeutronError(await net(penv, owner, 'POST', '/esi/node-networks', { node: 'pn1', port: 'lessee-only' }), 404, 'PortNotFound');
    // A trunk the policy hides from its own project cannot be named either.
    const lnet = await create(penv, lessee, 'networks', 'network', { name: 'p-lnet' });
    const parent = await create(penv, lessee, 'ports', 'port', { network_id: lnet.id });
    await create(penv, penv.p.admin, 'trunks', 'trunk', { name: 'hidden-trunk', port_id: parent.id, project_id: lessee.projectId });
    expectNeutronError(await net(penv, lessee, 'POST', '/esi/node-networks', { node: 'pn1', trunk: 'hidden-trunk' }), 404, 'TrunkNotFound');
    expect((await net(penv, penv.p.admin, 'GET', `/ports/${parent.id}`)).body.port['binding:host_id']).toBe('');
  });
});
