/**
 * Interop: Debian's `openstack baremetal` CLI (python3-ironicclient 5.0.1, which sends
 * microversion 1.78) against esi's baremetal API: node create/list/show/set, manage, provide,
 * power, ports and delete, as the admin and as the owner, lessee and another project.
 *
 * Provision transitions are finished by the conductor when one runs; otherwise (the conductor
 * is not part of this process yet) the test applies the FSM's `done` event through the node
 * repository, as a conductor would.
 *
 * Each test runs on a server of its own (an empty inventory: the tests assert whole lists) and
 * enrols the node it works on, so the tests do not depend on their order.
 *
 * Needs `/usr/bin/openstack` and python3-ironicclient (a failure when missing, see test/helpers/tools.ts).
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { next } from '../../src/domain/inventory/states.ts';
import { createNode, createPort } from '../api/baremetal/helpers.ts';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { describeNeeding, OPENSTACK_BAREMETAL } from '../helpers/tools.ts';
import { personaCli } from './persona-cli.ts';
import { waitFor, WaitForTimeout } from '../helpers/wait-for.ts';

let ts: TestServer;
let p: Personas;

/** Wait briefly for a conductor to finish the node's transition, else apply `done` ourselves. */
async function finishTransition(uuid: string): Promise<void> {
  const repo = ts.server.services.inventory.nodeRepository;
  const settled = await waitFor(
    () => repo.get(uuid),
    (n) => n!.target_provision_state === null,
    { timeoutMs: 2_000, intervalMs: 100 },
  ).then(
    () => true,
    (err: unknown) => {
      if (err instanceof WaitForTimeout) return false;
      throw err;
    },
  );
  if (settled) return;
  const n = (await repo.get(uuid))!;
  const t = next(n.provision_state, 'done');
  await repo.applyConductorResult(uuid, { provision_state: t.state, target_provision_state: t.target }, Date.now());
}

const { os, osJson } = personaCli(() => ts.url);

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = OPENSTACK_BAREMETAL;

/** Node `n1` (fake-hardware, enroll), owned by o1 and leased to l1, enrolled through the API; its UUID. */
async function enrolN1(): Promise<string> {
  return (await createNode(ts, p, { name: 'n1' })).uuid;
}

describeNeeding(NEEDS, 'openstack baremetal CLI against the baremetal API', () => {
  beforeEach(async () => {
    ts = await startTestServer();
    p = await createPersonas(ts);
  });
  afterEach(async () => ts?.close());

  it('creates, lists and shows a node', async () => {
    const created = await osJson('admin', ['baremetal', 'node', 'create', '--driver', 'fake-hardware', '--name', 'n1']);
    expect(created).toMatchObject({ name: 'n1', driver: 'fake-hardware', provision_state: 'enroll', owner: null, lessee: null });
    const uuid = created.uuid;
    // python-ironicclient 5.0.1 cannot pass owner/lessee on create; it sets them with a PATCH.
    await os('admin', ['baremetal', 'node', 'set', '--owner', p.owner.projectId!, '--lessee', p.lessee.projectId!, 'n1']);
    const list = await osJson('admin', ['baremetal', 'node', 'list']);
    expect(list).toEqual([expect.objectContaining({ UUID: uuid, Name: 'n1', 'Provisioning State': 'enroll', Maintenance: false })]);
    expect((await osJson('owner', ['baremetal', 'node', 'list'])).map((n: any) => n.Name)).toEqual(['n1']);
    expect((await osJson('lessee', ['baremetal', 'node', 'list'])).map((n: any) => n.Name)).toEqual(['n1']);
    expect(await osJson('other', ['baremetal', 'node', 'list'])).toEqual([]);
    const shown = await osJson('lessee', ['baremetal', 'node', 'show', 'n1']);
    expect(shown.uuid).toBe(uuid);
    expect(shown.driver_info).toEqual({ content: expect.stringMatching(/Redacted/) });
    await expect(os('other', ['baremetal', 'node', 'show', 'n1'])).rejects.toThrow(/could not be found/);
  });

  it('sets properties and owner (admin, owner), refuses the lessee', async () => {
    await enrolN1();
    await os('owner', ['baremetal', 'node', 'set', '--property', 'cpus=4', 'n1']);
    expect(Number((await osJson('admin', ['baremetal', 'node', 'show', 'n1', '-c', 'properties'])).properties.cpus)).toBe(4);
    await expect(os('lessee', ['baremetal', 'node', 'set', '--property', 'cpus=8', 'n1'])).rejects.toThrow(/update:properties/);
    await os('lessee', ['baremetal', 'node', 'set', '--extra', 'note=mine', 'n1']);
    const adminProject = p.admin.projectId!;
    await os('admin', ['baremetal', 'node', 'set', '--owner', adminProject, 'n1']);
    expect((await osJson('admin', ['baremetal', 'node', 'show', 'n1', '-c', 'owner'])).owner).toBe(adminProject);
    await os('admin', ['baremetal', 'node', 'set', '--owner', p.owner.projectId!, 'n1']);
  });

  it('manages, provides and powers the node', async () => {
    const uuid = await enrolN1();
    await os('owner', ['baremetal', 'node', 'manage', 'n1']);
    const verifying = await osJson('admin', ['baremetal', 'node', 'show', 'n1', '-c', 'provision_state', '-c', 'target_provision_state']);
    expect(['verifying', 'manageable']).toContain(verifying.provision_state);
    await finishTransition(uuid);
    await os('lessee', ['baremetal', 'node', 'provide', 'n1']);
    await finishTransition(uuid);
    expect((await osJson('admin', ['baremetal', 'node', 'show', 'n1'])).provision_state).toBe('available');
    await os('lessee', ['baremetal', 'node', 'power', 'on', 'n1']);
    const power = await osJson('admin', ['baremetal', 'node', 'show', 'n1', '-c', 'power_state', '-c', 'target_power_state']);
    expect(power.target_power_state === 'power on' || power.power_state === 'power on').toBe(true);
  });

  it('creates and lists ports, refuses a duplicate MAC', async () => {
    const uuid = await enrolN1();
    const port = await osJson('owner', ['baremetal', 'port', 'create', '--node', uuid, '52:54:00:AB:CD:EF']);
    expect(port).toMatchObject({ address: '52:54:00:ab:cd:ef', node_uuid: uuid });
    // A 409: the client retries it 5 times, 2 s apart, then reports it.
    await expect(os('admin', ['baremetal', 'port', 'create', '--node', uuid, '52:54:00:ab:cd:ef'])).rejects.toThrow(/already exists/);
    expect((await osJson('lessee', ['baremetal', 'port', 'list'])).map((x: any) => x.Address)).toEqual(['52:54:00:ab:cd:ef']);
    expect(await osJson('other', ['baremetal', 'port', 'list'])).toEqual([]);
  });

  it('deletes the node (and its ports); only the admin may', async () => {
    const uuid = await enrolN1();
    await createPort(ts, p, uuid, '52:54:00:ab:cd:ef');
    expect((await osJson('admin', ['baremetal', 'port', 'list'])).map((x: any) => x.Address)).toEqual(['52:54:00:ab:cd:ef']);
    await expect(os('owner', ['baremetal', 'node', 'delete', 'n1'])).rejects.toThrow(/baremetal:node:delete/);
    await os('admin', ['baremetal', 'node', 'delete', 'n1']);
    expect(await osJson('admin', ['baremetal', 'node', 'list'])).toEqual([]);
    expect(await osJson('admin', ['baremetal', 'port', 'list'])).toEqual([]);
  });
});
