/**
 * The leasing demo of the ESI talk (the ESI project, https://github.com/CCI-MOC/esi), replayed against `esi server --lab 5` with the
 * real Debian `openstack` CLI and the `esi` CLI:
 *
 * - admin creates projects o1, o2, l1, l2 and their users and roles;
 * - nodes A–E are enrolled with the `redfish` driver against the lab; A–C owned by o1, D–E by o2;
 * - admin sees 5 nodes, o1 sees 3, l1 sees none;
 * - o1 offers B; l1 claims it; l1 then sees B, powers it on (the lab's Redfish PowerState
 *   becomes On), cannot set a property on it, cannot see A;
 * - when a lease is deleted, and separately when a short lease expires on its own, l1 loses
 *   the node again (never before the lease's end; how fast is measured by bench/lease-skew.ts).
 *
 * Each test claims its own node and gives it back, so the tests do not depend on their order.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeNeeding, OPENSTACK_BAREMETAL } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { esi, json, ok, openstack, startEsi, userEnv, type EsiProcess } from './cli-driver.ts';

/** Naive UTC ISO time `YYYY-MM-DDTHH:MM:SS`, as esi-leap clients send. */
function isoIn(ms: number): string {
  return new Date(Date.now() + ms).toISOString().slice(0, 19);
}

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = OPENSTACK_BAREMETAL;

describeNeeding(NEEDS, 'the ESI demo with the real openstack CLI', () => {
  let esiServer: EsiProcess;
  let admin: Record<string, string>;
  const users: Record<string, Record<string, string>> = {};
  const projectIds: Record<string, string> = {};
  const nodeIds: Record<string, string> = {};

  /** A Keystone token for a demo user, for sub-second polling over HTTP. */
  async function tokenFor(user: string, project: string): Promise<string> {
    const res = await fetch(`${esiServer.url}/identity/v3/auth/tokens?nocatalog`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: { methods: ['password'], password: { user: { name: user, domain: { id: 'default' }, password: `pw-${user}` } } },
          scope: { project: { name: project, domain: { id: 'default' } } },
        },
      }),
    });
    expect(res.status).toBe(201);
    return res.headers.get('x-subject-token')!;
  }

  /** Status of `GET /baremetal/v1/nodes/{id}` for a token. */
  async function nodeStatus(token: string, id: string): Promise<number> {
    const res = await fetch(`${esiServer.url}/baremetal/v1/nodes/${id}`, {
      headers: { 'x-auth-token': token, 'x-openstack-ironic-api-version': '1.78' },
    });
    await res.arrayBuffer();
    return res.status;
  }

  /** Poll until `GET` of the node returns `status` for the token; resolves with the time (epoch ms). */
  async function waitForNodeStatus(token: string, id: string, status: number, timeoutMs: number): Promise<number> {
    await waitFor(
      () => nodeStatus(token, id),
      (s) => s === status,
      { timeoutMs, what: `node ${id} answering ${status}` },
    );
    return Date.now();
  }

  /** The lab's Redfish PowerState of a system. */
  async function labPower(system: string): Promise<string> {
    const res = await fetch(`${esiServer.labUrl}/redfish/v1/Systems/${system}`, {
      headers: { authorization: `Basic ${Buffer.from('admin:password').toString('base64')}` },
    });
    return ((await res.json()) as { PowerState: string }).PowerState;
  }

  beforeAll(async () => {
    esiServer = await startEsi({ lab: 5 });
    admin = esiServer.adminEnv;
    await createPersonas();
    await enrolNodes();
    // About 30 CLI calls of 1–4 s each on a loaded CI machine: more than the project's 120 s default.
  }, 300_000);

  afterAll(async () => {
    await esiServer?.stop();
  });

  /** Admin creates the projects, users and roles with the openstack CLI. */
  async function createPersonas(): Promise<void> {
    await Promise.all(
      ['o1', 'o2', 'l1', 'l2'].map(async (p) => {
        projectIds[p] = (await json(openstack(admin, 'project', 'create', p, '-f', 'json'))).id;
      }),
    );
    await Promise.all([ok(openstack(admin, 'role', 'create', 'owner')), ok(openstack(admin, 'role', 'create', 'lessee'))]);
    const plan: Array<[string, string, string]> = [
      ['owner1', 'o1', 'owner'],
      ['owner2', 'o2', 'owner'],
      ['lessee1', 'l1', 'lessee'],
      ['lessee2', 'l2', 'lessee'],
    ];
    await Promise.all(
      plan.map(async ([user, project, role]) => {
        await ok(openstack(admin, 'user', 'create', '--project', project, '--password', `pw-${user}`, user));
        await ok(openstack(admin, 'role', 'add', '--user', user, '--project', project, role));
        users[user] = userEnv(admin, user, `pw-${user}`, project);
      }),
    );
  }

  /** Admin enrols nodes A–E with the redfish driver (fake deploy interface) against the lab, A–C owned by o1, D–E by o2, and makes them available. */
  async function enrolNodes(): Promise<void> {
    const names = ['A', 'B', 'C', 'D', 'E'];
    await Promise.all(
      names.map(async (name, i) => {
        const owner = i < 3 ? projectIds.o1! : projectIds.o2!;
        const node = await json(
          openstack(
            admin,
            'baremetal',
            'node',
            'create',
            '--driver',
            'redfish',
            '--name',
            name,
            '--driver-info',
            `redfish_address=${esiServer.labUrl}`,
            '--driver-info',
            `redfish_system_id=/redfish/v1/Systems/node-${i}`,
            '--driver-info',
            'redfish_username=admin',
            '--driver-info',
            'redfish_password=password',
            '--property',
            'cpus=16',
            '--property',
            'memory_mb=65536',
            '--resource-class',
            'baremetal',
            // The demo is about leasing: the fake deploy interface writes nothing (Ironic FakeDeploy), so
            // the nodes need no agent ramdisk; deploying for real is test/interop/deploy-cli.test.ts.
            '--deploy-interface',
            'fake',
            '-f',
            'json',
          ),
        );
        nodeIds[name] = node.uuid;
        expect(node.driver_info.redfish_password).toBe('******');
        // python-ironicclient 5.0.1 cannot send `owner` on create; it is set afterwards, as users do.
        await ok(openstack(admin, 'baremetal', 'node', 'set', '--owner', owner, name));
      }),
    );
    await Promise.all(names.map((name) => ok(openstack(admin, 'baremetal', 'node', 'manage', name, '--wait', '60'))));
    await Promise.all(names.map((name) => ok(openstack(admin, 'baremetal', 'node', 'provide', name, '--wait', '60'))));
  }

  it('the CLI shows the role assignments and five available nodes', async () => {
    const assignments = await json<Array<Record<string, string>>>(openstack(admin, 'role', 'assignment', 'list', '--names', '-f', 'json'));
    expect(assignments.some((a) => a.User === 'lessee1@Default' && a.Role === 'lessee' && a.Project === 'l1@Default')).toBe(true);
    const nodes = await json<Array<Record<string, string>>>(openstack(admin, 'baremetal', 'node', 'list', '-f', 'json'));
    expect(nodes.map((n) => n['Provisioning State'])).toEqual(['available', 'available', 'available', 'available', 'available']);
  });

  it('admin sees 5 nodes, o1 sees 3, l1 sees none', async () => {
    const count = async (env: Record<string, string>): Promise<string[]> =>
      (await json<Array<{ Name: string }>>(openstack(env, 'baremetal', 'node', 'list', '-f', 'json'))).map((n) => n.Name).sort();
    expect(await count(admin)).toEqual(['A', 'B', 'C', 'D', 'E']);
    expect(await count(users.owner1!)).toEqual(['A', 'B', 'C']);
    expect(await count(users.owner2!)).toEqual(['D', 'E']);
    expect(await count(users.lessee1!)).toEqual([]);
  });

  /** o1 offers `node` for a week and l1 claims it (the whole offer, or until `end`); waits until l1 sees the node. */
  async function claimAsL1(node: string, end?: string): Promise<{ offer: string; lease: string; l1Token: string }> {
    const offer = await json(esi(users.owner1!, 'offer', 'create', node, '--end-time', isoIn(7 * 86_400_000), '-f', 'json'));
    const offers = await json<Array<Record<string, unknown>>>(esi(users.lessee1!, 'offer', 'list', '-f', 'json'));
    expect(offers.map((o) => o.UUID)).toContain(offer.uuid);
    const claimArgs = end === undefined ? [] : ['--end-time', end];
    const lease = await json(esi(users.lessee1!, 'offer', 'claim', offer.uuid, ...claimArgs, '-f', 'json'));
    const l1Token = await tokenFor('lessee1', 'l1');
    await waitForNodeStatus(l1Token, nodeIds[node]!, 200, 10_000);
    return { offer: offer.uuid, lease: lease.uuid, l1Token };
  }

  /** Ends the test's lease and offer so that l1 sees no node again, whatever test runs next. */
  async function release(node: string, leaseUuid: string, offerUuid: string, l1Token: string): Promise<void> {
    await esi(users.lessee1!, 'lease', 'delete', leaseUuid);
    await waitForNodeStatus(l1Token, nodeIds[node]!, 404, 10_000);
    await ok(esi(users.owner1!, 'offer', 'delete', offerUuid));
  }

  it('o1 offers B and l1 claims it; l1 sees B, powers it on, cannot edit it, cannot see A', async () => {
    const { offer, lease, l1Token } = await claimAsL1('B');
    try {
      const visible = await json<Array<{ Name: string }>>(openstack(users.lessee1!, 'baremetal', 'node', 'list', '-f', 'json'));
      expect(visible.map((n) => n.Name)).toEqual(['B']);

      expect(await labPower('node-1')).toBe('Off');
      await ok(openstack(users.lessee1!, 'baremetal', 'node', 'power', 'on', 'B'));
      await waitFor(
        () => labPower('node-1'),
        (p) => p === 'On',
        { timeoutMs: 15_000, intervalMs: 100, what: "the lab's node-1 powered on" },
      );

      const set = await openstack(users.lessee1!, 'baremetal', 'node', 'set', '--property', 'owned_by_me=yes', 'B');
      expect(set.code).not.toBe(0);
      expect(set.stderr).toMatch(/403|[Ff]orbidden|denied/);
      const showA = await openstack(users.lessee1!, 'baremetal', 'node', 'show', 'A');
      expect(showA.code).not.toBe(0);
      expect(showA.stderr).toMatch(/could not be found|404/i);
    } finally {
      await release('B', lease, offer, l1Token);
    }
  });

  // How fast access goes is a figure of the lease-skew benchmark (bench/lease-skew.ts); here
  // the revocation must happen, and never before the lease's end.
  it('deleting the lease revokes l1 access to C', async () => {
    const { offer, lease, l1Token } = await claimAsL1('C');
    await ok(esi(users.lessee1!, 'lease', 'delete', lease));
    const deletedAt = Date.now();
    const goneAt = await waitForNodeStatus(l1Token, nodeIds.C!, 404, 10_000);
    console.info(`demo: access revoked ${goneAt - deletedAt} ms after the lease was deleted`);
    const visible = await json<unknown[]>(openstack(users.lessee1!, 'baremetal', 'node', 'list', '-f', 'json'));
    expect(visible).toEqual([]);
    await ok(esi(users.owner1!, 'offer', 'delete', offer));
  });

  it('a short lease of A expires on its own and l1 loses A at its end, not before', async () => {
    const end = new Date(Date.now() + 20_000).toISOString().slice(0, 19);
    const { offer, lease, l1Token } = await claimAsL1('A', end);
    const endAt = Date.parse(`${end}Z`);
    const goneAt = await waitForNodeStatus(l1Token, nodeIds.A!, 404, 40_000);
    console.info(`demo: access revoked ${goneAt - endAt} ms after the lease's end time`);
    expect(goneAt).toBeGreaterThanOrEqual(endAt);
    const shown = await json(esi(users.lessee1!, 'lease', 'show', lease, '-f', 'json'));
    expect(shown.status).toBe('expired');
    await ok(esi(users.owner1!, 'offer', 'delete', offer));
  });
});
