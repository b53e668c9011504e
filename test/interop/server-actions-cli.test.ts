/**
 * Interop: Debian's `openstack` CLI (python3-openstackclient 6.0: `server stop|start|reboot|rebuild`
 * through python3-novaclient at compute 2.1, `console log show` through openstacksdk) against
 * esi's server actions (`POST /compute/v2.1/servers/{id}/action`), on a lab node (redfish
 * driver, `fake` deploy interface — no image is written, the deploy powers the node on —,
 * `redfish-serial` console) leased to l1: the lab machine is really powered off and on through
 * Redfish, and `console log show` prints the firmware lines of its boots from the lab BMC's serial
 * log. The server is the lessee's; another project is told it does not exist.
 *
 * The tests share the one server and run in a fixed order of steps inside one test each (the
 * file's tests are shuffled), so each starts from ACTIVE.
 *
 * Needs `/usr/bin/openstack` with its baremetal and compute plugins (a failure when missing, see
 * test/helpers/tools.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLab, type Lab } from '../../src/lab/index.ts';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { describeNeeding, OPENSTACK_BAREMETAL, TOOLS } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { personaCli, type CliPersona } from './persona-cli.ts';

const IRONIC = { 'x-openstack-ironic-api-version': '1.82' };
const NOVA = { 'x-openstack-nova-api-version': '2.90' };
const SYSTEM = 'node-0';

let ts: TestServer;
let lab: Lab;
let p: Personas;
let node: string;
let server: string;
let image1: string;
let image2: string;

const { os, osJson } = personaCli(() => ts.url);

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = [...OPENSTACK_BAREMETAL, TOOLS.novaClient];

/** An API call as admin that must succeed; its body. */
async function must(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const r = await call(ts, p.admin, method, path, body, headers);
  expect(r.status, `${method} ${path}: ${r.text}`).toBeLessThan(300);
  return r.body;
}

/** Poll `openstack server show` (as the lessee) until the status is `status`. */
function waitStatus(status: string, who: CliPersona = 'lessee'): Promise<any> {
  return waitFor(
    () => osJson(who, ['server', 'show', server]),
    (s) => s.status === status,
    { timeoutMs: 60_000, intervalMs: 300, what: `server ${server} ${status}`, show: (s) => s.status },
  );
}

/** The number of firmware boots (`esi-lab firmware: POST`) in a console log. */
const boots = (log: string): number => log.split('\n').filter((l) => l.includes(`esi-lab firmware: POST ${SYSTEM}`)).length;

async function uploadImage(name: string): Promise<string> {
  const made = await must('POST', '/image/v2/images', { name, disk_format: 'raw', container_format: 'bare', visibility: 'public' });
  const up = await fetch(`${ts.url}/image/v2/images/${made.id}/file`, {
    method: 'PUT',
    headers: { 'x-auth-token': p.admin.token!, 'content-type': 'application/octet-stream' },
    body: new Uint8Array(4096),
  });
  expect(up.status).toBe(204);
  return made.id;
}

describeNeeding(NEEDS, 'openstack server stop|start|reboot|rebuild and console log show', () => {
  beforeAll(async () => {
    lab = await startLab({ nodes: 1 });
    ts = await startTestServer();
    p = await createPersonas(ts);
    // A redfish node on the lab system, o1's, leased to l1, with the fake deploy interface and
    // the lab's serial console; made available (manage, provide).
    const made = await must(
      'POST',
      '/baremetal/v1/nodes',
      {
        driver: 'redfish',
        name: 'srv-a',
        deploy_interface: 'fake',
        console_interface: 'redfish-serial',
        resource_class: 'gold',
        owner: p.owner.projectId,
        lessee: p.lessee.projectId,
        properties: { cpus: 8, memory_mb: 16384, local_gb: 100 },
        driver_info: {
          redfish_address: lab.url,
          redfish_system_id: `/redfish/v1/Systems/${SYSTEM}`,
          redfish_username: 'admin',
          redfish_password: 'password',
        },
      },
      IRONIC,
    );
    node = made.uuid;
    for (const [verb, state] of [
      ['manage', 'manageable'],
      ['provide', 'available'],
    ] as const) {
      await waitFor(
        () => call(ts, p.admin, 'PUT', `/baremetal/v1/nodes/${node}/states/provision`, { target: verb }, IRONIC),
        (r) => r.status !== 409,
        { timeoutMs: 10_000, what: `${verb} accepted`, show: (r) => r.text },
      );
      await waitFor(
        async () => (await must('GET', `/baremetal/v1/nodes/${node}`, undefined, IRONIC)).provision_state,
        (s) => s === state,
        { timeoutMs: 30_000, intervalMs: 100, what: `node ${state}` },
      );
    }
    await must('POST', '/compute/v2.1/flavors', { flavor: { name: 'bm.gold', id: 'bm.gold', ram: 16384, vcpus: 8, disk: 100 } }, NOVA);
    await must('POST', '/compute/v2.1/flavors/bm.gold/os-extra_specs', { extra_specs: { 'resources:CUSTOM_GOLD': '1' } }, NOVA);
    image1 = await uploadImage('os1');
    image2 = await uploadImage('os2');
    // The lessee turns the node's console on and creates its server with the CLI.
    await os('lessee', ['baremetal', 'node', 'console', 'enable', 'srv-a']);
    const s = await osJson('lessee', ['server', 'create', '--flavor', 'bm.gold', '--image', 'os1', '--wait', 'web']);
    expect(s).toMatchObject({ name: 'web', status: 'ACTIVE' });
    server = s.id;
    expect(lab.systems.powerState(SYSTEM)).toBe('On');
  }, 240_000);
  afterAll(async () => {
    await ts?.close();
    await lab?.close();
  });

  it('server stop and start power the lab machine off and on; a second stop is refused as Nova refuses it', async () => {
    await waitStatus('ACTIVE');
    await os('lessee', ['server', 'stop', 'web']);
    const off = await waitStatus('SHUTOFF');
    expect(off['OS-EXT-STS:vm_state']).toBe('stopped');
    expect(lab.systems.powerState(SYSTEM)).toBe('Off');
    await expect(os('lessee', ['server', 'stop', 'web'])).rejects.toThrow(
      new RegExp(`Cannot 'stop' instance ${server} while it is in vm_state stopped \\(HTTP 409\\)`),
    );
    await os('lessee', ['server', 'start', 'web']);
    await waitStatus('ACTIVE');
    expect(lab.systems.powerState(SYSTEM)).toBe('On');
    await expect(os('lessee', ['server', 'start', server])).rejects.toThrow(/Cannot 'start' instance .* while it is in vm_state active/);
  }, 180_000);

  it('server reboot --soft and --hard --wait reboot the lab machine (each boot shows in the console log)', async () => {
    await waitStatus('ACTIVE');
    const serial = (): string => lab.serial.scrollback(SYSTEM).toString('utf8');
    const before = boots(serial());
    expect(before).toBeGreaterThan(0);
    await os('lessee', ['server', 'reboot', '--soft', '--wait', 'web']);
    await waitFor(
      async () => boots(serial()),
      (n) => n === before + 1,
      { timeoutMs: 30_000, what: 'a boot after the soft reboot' },
    );
    await os('lessee', ['server', 'reboot', '--hard', '--wait', 'web']);
    await waitFor(
      async () => boots(serial()),
      (n) => n === before + 2,
      { timeoutMs: 30_000, what: 'a boot after the hard reboot' },
    );
    expect((await osJson('lessee', ['server', 'show', 'web'])).status).toBe('ACTIVE');
    expect(lab.systems.powerState(SYSTEM)).toBe('On');
    // The console log the CLI shows is the machine's serial log, with both boots.
    expect(boots(await os('lessee', ['console', 'log', 'show', 'web']))).toBe(before + 2);
  }, 180_000);

  it('server rebuild --image --wait re-deploys the node with the other image', async () => {
    const before = await waitStatus('ACTIVE');
    const next = String(before.image).includes(image1) ? 'os2' : 'os1';
    const nextId = next === 'os2' ? image2 : image1;
    // With --wait the CLI prints "Complete" before the server.
    const out = await os('lessee', ['server', 'rebuild', '--image', next, '--wait', 'web', '-f', 'json']);
    expect(out).toMatch(/^Complete\n/);
    const rebuilt = JSON.parse(out.slice(out.indexOf('{')));
    expect(rebuilt).toMatchObject({ id: server, name: 'web' });
    expect(String(rebuilt.image)).toContain(nextId);
    const after = await waitStatus('ACTIVE');
    expect(String(after.image)).toContain(nextId);
    const n = await must('GET', `/baremetal/v1/nodes/${node}`, undefined, IRONIC);
    expect(n).toMatchObject({ provision_state: 'active', instance_uuid: server, power_state: 'power on' });
    expect(n.instance_info.image_source).toBe(nextId);
  }, 180_000);

  it('console log show prints the serial log of the node; --lines keeps the last lines', async () => {
    await waitStatus('ACTIVE');
    const all = await os('lessee', ['console', 'log', 'show', 'web']);
    expect(all).toMatch(new RegExp(`esi-lab firmware: POST ${SYSTEM} \\(system [0-9a-f-]+\\), boot #\\d+`));
    expect(all).not.toContain('\r');
    const lines = all.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(3);
    const last3 = await os('lessee', ['console', 'log', 'show', '--lines', '3', 'web']);
    // The machine prints nothing while it idles: the two reads see the same log.
    expect(last3.trimEnd().split('\n')).toHaveLength(3);
    expect(all.trimEnd().endsWith(last3.trimEnd())).toBe(true);
    expect((await os('admin', ['console', 'log', 'show', '--lines', '3', server])).trimEnd().split('\n')).toHaveLength(3);
  }, 120_000);

  it('another project is told the server does not exist, for every action', async () => {
    for (const args of [
      ['server', 'stop', server],
      ['server', 'start', server],
      ['server', 'reboot', '--hard', server],
      ['server', 'rebuild', '--image', 'os1', server],
      ['console', 'log', 'show', server],
    ]) {
      await expect(os('other', args)).rejects.toThrow(/No server with a name or ID|could not be found|No Server found/);
    }
    expect((await osJson('lessee', ['server', 'show', 'web'])).status).not.toBe('SHUTOFF');
  }, 120_000);
});
