/**
 * Interop: Debian's `openstack` CLI (python3-openstackclient 6.0 with openstacksdk and
 * python3-novaclient, python3-ironicclient) against a real `esi server` process:
 * `openstack flavor create|list|show|set|unset|delete` (properties, private flavors and project
 * access), `openstack keypair create --public-key|list|show|delete`,
 * `openstack baremetal allocation create|list|show|delete`, and `openstack server
 * create|list|show|delete` on fake-hardware nodes (the conductor deploys them at once).
 * Each test makes the flavors and key pairs it uses (and removes what another test would see),
 * so that the tests do not depend on their order.
 *
 * Needs `/usr/bin/openstack` with its baremetal and compute plugins (a failure when missing, see
 * test/helpers/tools.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeNeeding, OPENSTACK_BAREMETAL, TOOLS } from '../helpers/tools.ts';
import { json, ok, openstack, startEsi, userEnv, type EsiProcess } from './cli-driver.ts';
import { http, tokenFor, projectWithUser } from '../api/lease/processes.ts';
import { waitFor } from '../helpers/wait-for.ts';

const IRONIC = { 'x-openstack-ironic-api-version': '1.82' };
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDvC3hT0l2fJ5kq3n7ZlVxq8YVw3pX6m8A0bq4b8wD1u user@laptop';

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = [...OPENSTACK_BAREMETAL, TOOLS.novaClient];

describeNeeding(NEEDS, 'openstack flavor, keypair, baremetal allocation and server commands', () => {
  let esi: EsiProcess;
  let admin: Record<string, string>;
  let member: Record<string, string>;
  let dir: string;
  let token: string;
  let srvNode: string;

  /** A fake-hardware node of `project`, made available over HTTP (manage, provide). */
  async function freeNode(token: string, name: string, rc: string, project: string): Promise<string> {
    const n = await http(
      `${esi.url}/baremetal/v1/nodes`,
      'POST',
      token,
      { driver: 'fake-hardware', name, resource_class: rc, owner: project, properties: { cpus: 8, memory_mb: 16384, local_gb: 100 } },
      IRONIC,
    );
    expect(n.status, JSON.stringify(n.body)).toBe(201);
    for (const [verb, state] of [
      ['manage', 'manageable'],
      ['provide', 'available'],
    ] as const) {
      await http(`${esi.url}/baremetal/v1/nodes/${n.body.uuid}/states/provision`, 'PUT', token, { target: verb }, IRONIC);
      await waitFor(
        async () => (await http(`${esi.url}/baremetal/v1/nodes/${n.body.uuid}`, 'GET', token, undefined, IRONIC)).body.provision_state,
        (s) => s === state,
        { timeoutMs: 20_000, intervalMs: 100, what: `node ${name} ${state}` },
      );
    }
    return n.body.uuid;
  }

  beforeAll(async () => {
    esi = await startEsi();
    admin = esi.adminEnv;
    token = await tokenFor(esi.url, 'admin', admin.OS_PASSWORD!, 'admin');
    const p1 = await projectWithUser(esi.url, token, 'p1', 'user1', 'pw-user1', 'member');
    member = userEnv(admin, 'user1', 'pw-user1', 'p1');
    const adminProject = (await http(`${esi.url}/identity/v3/projects?name=admin`, 'GET', token)).body.projects[0].id;
    await freeNode(token, 'alloc-1', 'gold', adminProject);
    srvNode = await freeNode(token, 'srv-1', 'silver', p1);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-sched-interop-'));
    fs.writeFileSync(path.join(dir, 'key.pub'), `${KEY}\n`);
    fs.writeFileSync(path.join(dir, 'image.raw'), Buffer.alloc(64 * 1024));
  }, 120_000);
  afterAll(async () => {
    await esi?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** `openstack flavor create` of a bare-metal flavor of the CUSTOM_SILVER resource class (srv-1's), 16 GiB, 8 vCPUs, 100 GB. */
  const silverFlavor = (name: string, ...extra: string[]) =>
    openstack(
      admin,
      'flavor',
      'create',
      '--ram',
      '16384',
      '--vcpus',
      '8',
      '--disk',
      '100',
      '--property',
      'resources:CUSTOM_SILVER=1',
      '--property',
      'resources:VCPU=0',
      name,
      ...extra,
    );

  it('flavor create (with properties), list, show, set, unset; private flavors with project access', async () => {
    const made = await json(silverFlavor('bm.silver', '-f', 'json'));
    expect(made).toMatchObject({ name: 'bm.silver', ram: 16384, vcpus: 8, disk: 100, 'os-flavor-access:is_public': true });
    expect(made.properties).toMatchObject({ 'resources:CUSTOM_SILVER': '1', 'resources:VCPU': '0' });
    await ok(
      openstack(
        admin,
        'flavor',
        'set',
        '--property',
        'esi:match:memory_mb=exact',
        '--property',
        'capabilities:boot_mode=uefi',
        'bm.silver',
      ),
    );
    await ok(openstack(admin, 'flavor', 'unset', '--property', 'capabilities:boot_mode', 'bm.silver'));
    const shown = await json(openstack(member, 'flavor', 'show', 'bm.silver', '-f', 'json'));
    expect(shown.properties).toEqual({ 'resources:CUSTOM_SILVER': '1', 'resources:VCPU': '0', 'esi:match:memory_mb': 'exact' });
    // A project creates a private flavor of its own; the admin shares another with it.
    const mine = await json(
      openstack(member, 'flavor', 'create', '--private', '--ram', '1024', '--vcpus', '1', '--disk', '1', 'p1.tiny', '-f', 'json'),
    );
    expect(mine['os-flavor-access:is_public']).toBe(false);
    await ok(
      openstack(
        admin,
        'flavor',
        'create',
        '--private',
        '--project',
        'p1',
        '--ram',
        '2048',
        '--vcpus',
        '2',
        '--disk',
        '2',
        'shared',
        '-f',
        'json',
      ),
    );
    const names = (await json<any[]>(openstack(member, 'flavor', 'list', '-f', 'json'))).map((f) => f.Name).sort();
    expect(names).toEqual(['bm.silver', 'p1.tiny', 'shared']);
    await ok(openstack(admin, 'flavor', 'unset', '--project', 'p1', 'shared'));
    expect((await json<any[]>(openstack(member, 'flavor', 'list', '-f', 'json'))).map((f) => f.Name).sort()).toEqual([
      'bm.silver',
      'p1.tiny',
    ]);
    await ok(openstack(member, 'flavor', 'delete', 'p1.tiny'));
  });

  it('keypair create --public-key, list, show, delete', async () => {
    const made = await json(openstack(member, 'keypair', 'create', '--public-key', path.join(dir, 'key.pub'), 'laptop', '-f', 'json'));
    expect(made).toMatchObject({ name: 'laptop', type: 'ssh' });
    expect(made.fingerprint).toMatch(/^([0-9a-f]{2}:){15}[0-9a-f]{2}$/);
    expect((await json<any[]>(openstack(member, 'keypair', 'list', '-f', 'json'))).map((k) => k.Name)).toEqual(['laptop']);
    expect((await json(openstack(member, 'keypair', 'show', 'laptop', '-f', 'json'))).fingerprint).toBe(made.fingerprint);
    await ok(openstack(member, 'keypair', 'create', '--public-key', path.join(dir, 'key.pub'), 'spare'));
    await ok(openstack(member, 'keypair', 'delete', 'spare'));
  });

  it('baremetal allocation create --wait, list, show, delete', async () => {
    const a = await json(
      openstack(admin, 'baremetal', 'allocation', 'create', '--resource-class', 'gold', '--name', 'job-1', '--wait', '30', '-f', 'json'),
    );
    expect(a).toMatchObject({ name: 'job-1', state: 'active', resource_class: 'gold', last_error: null });
    const node = await json(
      openstack(admin, 'baremetal', 'node', 'show', 'alloc-1', '-f', 'json', '-c', 'uuid', '-c', 'instance_uuid', '-c', 'allocation_uuid'),
    );
    expect(a.node_uuid).toBe(node.uuid);
    expect(node).toMatchObject({ instance_uuid: a.uuid, allocation_uuid: a.uuid });
    expect((await json<any[]>(openstack(admin, 'baremetal', 'allocation', 'list', '-f', 'json'))).map((x) => x.Name)).toEqual(['job-1']);
    expect((await json(openstack(admin, 'baremetal', 'allocation', 'show', 'job-1', '-f', 'json'))).node_uuid).toBe(node.uuid);
    const failed = await openstack(admin, 'baremetal', 'allocation', 'create', '--resource-class', 'gold', '--wait', '30');
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toMatch(/no available nodes match the resource class gold/);
    await ok(openstack(admin, 'baremetal', 'allocation', 'delete', 'job-1'));
    expect((await http(`${esi.url}/baremetal/v1/nodes/alloc-1`, 'GET', token, undefined, IRONIC)).body.instance_uuid).toBeNull();
  });

  it('server create --wait, list, show, delete --wait as a project member', async () => {
    // The test's own flavor (matching srv-1's resource class) and key pair, removed at the end,
    // so that it needs nothing from the flavor and keypair tests and leaves their lists alone.
    await ok(silverFlavor('bm.web'));
    await ok(openstack(member, 'keypair', 'create', '--public-key', path.join(dir, 'key.pub'), 'web-key'));
    await ok(
      openstack(
        admin,
        'image',
        'create',
        '--file',
        path.join(dir, 'image.raw'),
        '--disk-format',
        'raw',
        '--container-format',
        'bare',
        '--public',
        'os1',
      ),
    );
    const s = await json(
      openstack(
        member,
        'server',
        'create',
        '--flavor',
        'bm.web',
        '--image',
        'os1',
        '--key-name',
        'web-key',
        '--wait',
        'web1',
        '-f',
        'json',
      ),
    );
    expect(s).toMatchObject({ name: 'web1', status: 'ACTIVE', key_name: 'web-key' });
    expect(s.flavor).toMatch(/^bm\.web/);
    const list = await json<any[]>(openstack(member, 'server', 'list', '-f', 'json'));
    expect(list).toEqual([expect.objectContaining({ Name: 'web1', Status: 'ACTIVE' })]);
    const shown = await json(openstack(admin, 'server', 'show', s.id, '-f', 'json'));
    expect(shown['OS-EXT-SRV-ATTR:hypervisor_hostname']).toBe(srvNode);
    const full = await openstack(member, 'server', 'create', '--flavor', 'bm.web', '--image', 'os1', 'web2');
    expect(full.code).not.toBe(0);
    expect(full.stderr).toMatch(
      /No valid host was found\..*Closest: srv-1 \(provision_state: provision state active \(must be available\); instance: already holds instance/,
    );
    await ok(openstack(member, 'server', 'delete', '--wait', 'web1'));
    expect(await json<any[]>(openstack(member, 'server', 'list', '-f', 'json'))).toEqual([]);
    expect((await http(`${esi.url}/baremetal/v1/nodes/${srvNode}`, 'GET', token, undefined, IRONIC)).body.instance_uuid).toBeNull();
    await ok(openstack(admin, 'flavor', 'delete', 'bm.web'));
    await ok(openstack(member, 'keypair', 'delete', 'web-key'));
  });
});
