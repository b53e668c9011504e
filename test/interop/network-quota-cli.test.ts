/**
 * Interop: Debian's `openstack` CLI (python3-openstackclient 6.0 over openstacksdk 0.101) sets
 * and reads esi's per-project network quotas (Neutron's `/v2.0/quotas`):
 *
 * `quota set --routers N --floating-ips M [--check-limit] <project>` (openstacksdk
 * `update_quota`: `PUT /v2.0/quotas/{id}`), `quota list --network --detail --project <p>`
 * (`GET /v2.0/quotas/{id}/details`, the CLI's "In Use" is Neutron's `used`) and
 * `quota list --network` (every project's `GET /v2.0/quotas/{id}` against its `/default`,
 * listing those that differ). The limit applies at once: the lessee's third router by the CLI
 * fails with the quota error; a project may not set its own quota.
 *
 * Needs `/usr/bin/openstack` (a failure when missing, see test/helpers/tools.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { describeNeeding, TOOLS } from '../helpers/tools.ts';
import { personaCli } from './persona-cli.ts';

let ts: TestServer;
let p: Personas;
const { os, osJson } = personaCli(() => ts.url);

/** `quota list --network --detail --project <project>` as rows by resource. */
async function details(project: string): Promise<Record<string, { limit: number; inUse: number; reserved: number }>> {
  const rows = await osJson('admin', ['quota', 'list', '--network', '--detail', '--project', project]);
  return Object.fromEntries(rows.map((r: any) => [r.Resource, { limit: r.Limit, inUse: r['In Use'], reserved: r.Reserved }]));
}

describeNeeding([TOOLS.openstack], 'openstack quota CLI (network quotas)', () => {
  beforeAll(async () => {
    ts = await startTestServer({ env: { ESI_NETWORK_VLAN_RANGES: 'physnet1:620:629' } });
    p = await createPersonas(ts);
  });
  afterAll(async () => ts?.close());

  it('an admin sets a project’s router and floating IP quotas; the CLI shows limits and usage; the limit holds', async () => {
    // step: the admin sets l1's quotas by project name, as an operator would.
    await os('admin', ['quota', 'set', '--routers', '2', '--floating-ips', '1', 'l1']);
    expect(await details('l1')).toEqual({
      floating_ips: { limit: 1, inUse: 0, reserved: 0 },
      routers: { limit: 2, inUse: 0, reserved: 0 },
    });
    // Another project keeps the defaults (Neutron's: 10 routers, 50 floating IPs).
    expect((await details('o1')).routers).toEqual({ limit: 10, inUse: 0, reserved: 0 });

    // step: the lessee creates two routers; the third fails with the quota error.
    await os('lessee', ['router', 'create', 'qr1']);
    await os('lessee', ['router', 'create', 'qr2']);
    await expect(os('lessee', ['router', 'create', 'qr3'])).rejects.toThrow(/Quota exceeded for resources: \['router'\]/);
    expect((await details('l1')).routers).toEqual({ limit: 2, inUse: 2, reserved: 0 });

    // step: `quota list --network` lists the projects whose quotas differ from the defaults.
    const listed = await osJson('admin', ['quota', 'list', '--network']);
    expect(listed).toEqual([expect.objectContaining({ 'Project ID': p.lessee.projectId, Routers: 2, 'Floating IPs': 1 })]);

    // step: --check-limit refuses a limit below the usage; raising it lets the lessee go on.
    await expect(os('admin', ['quota', 'set', '--routers', '1', '--check-limit', 'l1'])).rejects.toThrow(
      /Quota limit 1 for router must be greater than or equal to already used 2/,
    );
    await os('admin', ['quota', 'set', '--routers', '3', '--check-limit', 'l1']);
    await os('lessee', ['router', 'create', 'qr3']);
    expect((await details('l1')).routers).toEqual({ limit: 3, inUse: 3, reserved: 0 });
  });

  it('a project may not set its own quota, nor another’s', async () => {
    // By id: Keystone shows a project to a token scoped to it, but lists projects to admins only.
    await expect(os('owner', ['quota', 'set', '--routers', '99', p.owner.projectId!])).rejects.toThrow(/update_quota/);
    // The CLI resolves the project through Keystone first, which does not show o1 to o2: the
    // request fails before it reaches the network API (whose 404 the API tests cover).
    await expect(os('other', ['quota', 'set', '--routers', '99', p.owner.projectId!])).rejects.toThrow(
      /40[34]|not authorized|could not be found/i,
    );
    expect((await details('o1')).routers?.limit).toBe(10);
  });
});
