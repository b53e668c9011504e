/**
 * Interop: Debian's `openstack baremetal node history list|get` (python3-ironicclient 5.0.1,
 * microversion 1.78) against esi's node history: the list (short and `--long`, which asks for
 * `…/history/detail`), one event, as the admin and the owner; the lessee is refused.
 *
 * Needs `/usr/bin/openstack` and python3-ironicclient (a failure when missing, see test/helpers/tools.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { describeNeeding, OPENSTACK_BAREMETAL } from '../helpers/tools.ts';
import { personaCli } from './persona-cli.ts';

let ts: TestServer;
let p: Personas;

const { osJson } = personaCli(() => ts.url);

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = OPENSTACK_BAREMETAL;

describeNeeding(NEEDS, 'openstack baremetal node history', () => {
  let uuid = '';

  beforeAll(async () => {
    ts = await startTestServer();
    p = await createPersonas(ts);
    const h = { 'x-openstack-ironic-api-version': '1.78' };
    const created = await call(
      ts,
      p.admin,
      'POST',
      '/baremetal/v1/nodes',
      { driver: 'fake-hardware', name: 'hist-cli', owner: p.owner.projectId, lessee: p.lessee.projectId },
      h,
    );
    expect(created.status, created.text).toBe(201);
    uuid = created.body.uuid;
    expect((await call(ts, p.owner, 'PUT', `/baremetal/v1/nodes/${uuid}/maintenance`, { reason: 'cli check' }, h)).status).toBe(202);
    expect((await call(ts, p.admin, 'DELETE', `/baremetal/v1/nodes/${uuid}/maintenance`, undefined, h)).status).toBe(202);
  }, 60_000);
  afterAll(async () => ts?.close());

  it('lists (short and --long) and shows one event, as admin and owner', async () => {
    const list = await osJson('admin', ['baremetal', 'node', 'history', 'list', 'hist-cli']);
    expect(list.map((e: any) => e['Description of the event'])).toEqual(['Maintenance set: cli check', 'Maintenance cleared.']);
    expect(Object.keys(list[0]).sort()).toEqual(['Created At', 'Description of the event', 'Severity', 'UUID']);
    const long = await osJson('owner', ['baremetal', 'node', 'history', 'list', 'hist-cli', '--long']);
    expect(long).toHaveLength(2);
    expect(long[0]).toMatchObject({ Severity: 'INFO', 'Event Origin Type': 'maintenance', User: p.owner.userId });
    const one = await osJson('owner', ['baremetal', 'node', 'history', 'get', uuid, list[1].UUID]);
    expect(one).toMatchObject({
      uuid: list[1].UUID,
      severity: 'INFO',
      event_type: 'maintenance',
      event: 'Maintenance cleared.',
      user: p.admin.userId,
    });
  }, 120_000);

  it('refuses the lessee', async () => {
    await expect(osJson('lessee', ['baremetal', 'node', 'history', 'list', uuid])).rejects.toThrow(/history:get|Forbidden|403/);
  }, 60_000);
});
