/**
 * Two esi processes (`node bin/esi.js server`, API and conductor each) sharing one PostgreSQL
 * database: servers created at the same instant on both never share a node, and allocations
 * created on both — and processed by both processes' conductors — never share a node either.
 * Exactly as many succeed as there are nodes. (PostgreSQL only: SQLite is one process.)
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describePostgresOnly } from '../../helpers/harness.ts';
import {
  createDatabase,
  http,
  projectWithUser,
  startServerProcess,
  tokenFor,
  type ServerProcess,
  type TempDatabase,
} from '../lease/processes.ts';
import { waitFor } from '../../helpers/wait-for.ts';

const ADMIN_PW = 'race-admin-password';
const NODES = 10;
const IRONIC = { 'x-openstack-ironic-api-version': '1.82' };
const NOVA = { 'x-openstack-nova-api-version': '2.90' };

describePostgresOnly('two esi processes sharing PostgreSQL: placement races', () => {
  let db: TempDatabase;
  const servers: ServerProcess[] = [];
  let a: string;
  let b: string;
  let admin: string;
  let user: string;
  let image: string;

  /** `n` fake-hardware nodes of the project with this resource class, managed and provided (available, power off). */
  async function nodes(rc: string, project: string): Promise<string[]> {
    const made: string[] = [];
    for (let i = 0; i < NODES; i++) {
      const n = await http(
        `${a}/baremetal/v1/nodes`,
        'POST',
        admin,
        {
          driver: 'fake-hardware',
          name: `${rc}-${i}`,
          resource_class: rc,
          owner: project,
          properties: { cpus: 1, memory_mb: 1024, local_gb: 10 },
        },
        IRONIC,
      );
      expect(n.status, JSON.stringify(n.body)).toBe(201);
      made.push(n.body.uuid);
      await http(`${a}/baremetal/v1/nodes/${n.body.uuid}/states/provision`, 'PUT', admin, { target: 'manage' }, IRONIC);
    }
    const wait = async (state: string) => {
      await waitFor(
        async () =>
          (
            await http(
              `${a}/baremetal/v1/nodes?resource_class=${rc}&fields=provision_state,target_provision_state`,
              'GET',
              admin,
              undefined,
              IRONIC,
            )
          ).body.nodes as any[],
        (nodes) => nodes.every((x: any) => x.provision_state === state && x.target_provision_state === null),
        { timeoutMs: 60_000, intervalMs: 200, what: `nodes ${state}` },
      );
    };
    await wait('manageable');
    for (const u of made) await http(`${a}/baremetal/v1/nodes/${u}/states/provision`, 'PUT', admin, { target: 'provide' }, IRONIC);
    await wait('available');
    return made;
  }

  beforeAll(async () => {
    db = await createDatabase();
    const env = { ESI_ADMIN_PASSWORD: ADMIN_PW, ESI_SECRET_KEY: randomBytes(32).toString('base64') };
    servers.push(await startServerProcess(['--database-url', db.url], env));
    servers.push(await startServerProcess(['--database-url', db.url], env));
    [a, b] = servers.map((s) => s.url) as [string, string];
    admin = await tokenFor(a, 'admin', ADMIN_PW, 'admin');
    await projectWithUser(a, admin, 'p1', 'user1', 'pw-user1', 'member');
    user = await tokenFor(b, 'user1', 'pw-user1', 'p1');
    const img = await http(`${a}/image/v2/images`, 'POST', admin, {
      name: 'os',
      disk_format: 'raw',
      container_format: 'bare',
      visibility: 'public',
    });
    image = img.body.id;
    const up = await fetch(`${a}/image/v2/images/${image}/file`, {
      method: 'PUT',
      headers: { 'x-auth-token': admin, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(1024),
    });
    expect(up.status).toBe(204);
  }, 180_000);

  afterAll(async () => {
    for (const s of servers) await s.stop();
    await db?.drop();
  });

  it(`${2 * NODES + 6} servers asked for at once on both processes: ${NODES} placed on ${NODES} distinct nodes`, async () => {
    const projects = await http(`${a}/identity/v3/projects?name=p1`, 'GET', admin);
    const made = await nodes('srace', projects.body.projects[0].id);
    const f = await http(
      `${a}/compute/v2.1/flavors`,
      'POST',
      admin,
      { flavor: { name: 'srace', id: 'srace', ram: 1024, vcpus: 1, disk: 10 } },
      NOVA,
    );
    expect(f.status, JSON.stringify(f.body)).toBe(200);
    await http(`${a}/compute/v2.1/flavors/srace/os-extra_specs`, 'POST', admin, { extra_specs: { 'resources:CUSTOM_SRACE': '1' } }, NOVA);
    const results = await Promise.all(
      Array.from({ length: 2 * NODES + 6 }, (_, i) =>
        http(
          `${i % 2 ? a : b}/compute/v2.1/servers`,
          'POST',
          user,
          { server: { name: `s${i}`, flavorRef: 'srace', imageRef: image, networks: 'none' } },
          NOVA,
        ),
      ),
    );
    const ok = results.filter((r) => r.status === 202);
    expect(ok).toHaveLength(NODES);
    for (const r of results.filter((x) => x.status !== 202)) expect(r.body.conflictingRequest.message).toMatch(/No valid host was found/);
    const listed = await http(`${b}/baremetal/v1/nodes?resource_class=srace&fields=uuid,instance_uuid`, 'GET', admin, undefined, IRONIC);
    const instances = listed.body.nodes.map((n: any) => n.instance_uuid);
    expect(new Set(instances).size).toBe(NODES);
    expect(instances.sort()).toEqual(ok.map((r) => r.body.server.id).sort());
    expect(listed.body.nodes.map((n: any) => n.uuid).sort()).toEqual(made.sort());
  }, 180_000);

  it(`${2 * NODES + 6} allocations on both processes, processed by both conductors: ${NODES} active on distinct nodes`, async () => {
    await nodes('arace', (await http(`${a}/identity/v3/projects?name=admin`, 'GET', admin)).body.projects[0].id);
    const created = await Promise.all(
      Array.from({ length: 2 * NODES + 6 }, (_, i) =>
        http(`${i % 2 ? a : b}/baremetal/v1/allocations`, 'POST', admin, { resource_class: 'arace' }, IRONIC),
      ),
    );
    for (const c of created) expect(c.status, JSON.stringify(c.body)).toBe(201);
    const all = await waitFor(
      async () =>
        (await http(`${a}/baremetal/v1/allocations?resource_class=arace`, 'GET', admin, undefined, IRONIC)).body.allocations as any[],
      (allocations) => allocations.every((x) => x.state !== 'allocating'),
      {
        timeoutMs: 60_000,
        intervalMs: 200,
        what: 'no allocation left allocating',
        show: (l) => l.filter((x) => x.state === 'allocating').length,
      },
    );
    const active = all.filter((x) => x.state === 'active');
    expect(active).toHaveLength(NODES);
    expect(new Set(active.map((x) => x.node_uuid)).size).toBe(NODES);
  }, 180_000);
});
