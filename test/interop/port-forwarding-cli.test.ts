/**
 * Interop: our `esi port forwarding create|delete|purge` (python-esiclient's commands, see
 * src/cli/commands/port-forwarding.ts) run as a child process against a real esi server, every
 * step checked through the network API:
 *
 * create by port name on an external network (allocates the floating IP), again (idempotent:
 * same forwards, no new floating IP), by internal address (finds the port by fixed IP), to an
 * address without a port (creates `esi-autocreated-<ip>` with --internal-ip-network or
 * --internal-ip-subnet; refused without), bad port specs refused before any request; delete by
 * spec (a spec matching nothing is a warning), purge; another project can neither see, delete
 * nor purge the lessee's forwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, call, createPersonas, startTestServer, type Persona, type Personas, type TestServer } from '../helpers/harness.ts';
import { esi, json, ok, type CliResult } from './cli-driver.ts';

let ts: TestServer;
let p: Personas;

/** The `OS_*` environment of a persona (password auth, Default domain). */
function envOf(who: Persona): Record<string, string> {
  const user = who.name === 'admin' ? 'admin' : { owner: 'owner1', lessee: 'lessee1', other: 'owner2' }[who.name]!;
  return {
    OS_AUTH_URL: `${ts.url}/identity/v3`,
    OS_USERNAME: user,
    OS_PASSWORD: who.name === 'admin' ? ADMIN_PASSWORD : `pw-${user}`,
    OS_PROJECT_NAME: who.projectName!,
    OS_USER_DOMAIN_ID: 'default',
    OS_PROJECT_DOMAIN_ID: 'default',
  };
}

/** `esi port forwarding <args>` as a persona. */
function pf(who: Persona, ...args: string[]): Promise<CliResult> {
  return esi(envOf(who), 'port', 'forwarding', ...args);
}

/** A network API call that must answer `status`; its body. */
async function api(who: Persona, method: string, path: string, body?: unknown, status = method === 'POST' ? 201 : 200): Promise<any> {
  const r = await call(ts, who, method, `/network/v2.0${path}`, body);
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r.body;
}

/** The forwards of a floating IP as the API lists them, sorted by external port. */
async function forwards(fipId: string): Promise<any[]> {
  const list = (await api(p.lessee, 'GET', `/floatingips/${fipId}/port_forwardings`)).port_forwardings as any[];
  return list.sort((a, b) => a.external_port - b.external_port || a.protocol.localeCompare(b.protocol));
}

/** `[external port, protocol, internal ip, internal port]` of each forward. */
const shape = (list: any[]): unknown[][] => list.map((f) => [f.external_port, f.protocol, f.internal_ip_address, f.internal_port]);

describe('esi port forwarding', () => {
  let pubId = '';
  let lnetId = '';
  let lport: any;
  let web: any;

  beforeAll(async () => {
    ts = await startTestServer({ env: { ESI_NETWORK_VLAN_RANGES: 'physnet1:620:629' } });
    p = await createPersonas(ts);
    // The admin's external network; the lessee's network behind its router; two lessee ports.
    pubId = (await api(p.admin, 'POST', '/networks', { network: { name: 'public', 'router:external': true } })).network.id;
    await api(p.admin, 'POST', '/subnets', {
      subnet: {
        network_id: pubId,
        name: 'public-sub',
        cidr: '203.0.113.0/24',
        ip_version: 4,
        enable_dhcp: false,
        allocation_pools: [{ start: '203.0.113.10', end: '203.0.113.19' }],
      },
    });
    lnetId = (await api(p.lessee, 'POST', '/networks', { network: { name: 'lnet' } })).network.id;
    const lsub = (
      await api(p.lessee, 'POST', '/subnets', { subnet: { network_id: lnetId, name: 'lsub', cidr: '10.9.0.0/24', ip_version: 4 } })
    ).subnet;
    const router = (await api(p.lessee, 'POST', '/routers', { router: { name: 'lr', external_gateway_info: { network_id: pubId } } }))
      .router;
    await api(p.lessee, 'PUT', `/routers/${router.id}/add_router_interface`, { subnet_id: lsub.id });
    lport = (await api(p.lessee, 'POST', '/ports', { port: { name: 'lport', network_id: lnetId } })).port;
    web = (await api(p.lessee, 'POST', '/ports', { port: { name: 'web', network_id: lnetId } })).port;
  });
  afterAll(async () => ts?.close());

  it('creates (idempotently), deletes and purges port forwards as esiclient does, and keeps them from other projects', async () => {
    const lip = lport.fixed_ips[0].ip_address as string;
    const webIp = web.fixed_ips[0].ip_address as string;
    const lesseeFips = async (): Promise<any[]> =>
      (await api(p.lessee, 'GET', `/floatingips?project_id=${p.lessee.projectId}`)).floatingips as any[];

    // step: by port name on an external network — a new floating IP carries three forwards.
    const first = await json<any[]>(
      pf(p.lessee, 'create', '-f', 'json', '-d', 'lport services', '-p', '22', '-p', '8080:80/tcp', '-p', '53/udp', 'lport', 'public'),
    );
    expect(first.map((r) => [r['Internal Port'], r['External Port'], r.Protocol, r['Internal IP']])).toEqual([
      [22, 22, 'tcp', lip],
      [80, 8080, 'tcp', lip],
      [53, 53, 'udp', lip],
    ]);
    expect(Object.keys(first[0])).toEqual(['ID', 'Internal Port', 'External Port', 'Protocol', 'Internal IP', 'External IP']);
    const fips = await lesseeFips();
    expect(fips).toHaveLength(1);
    const fip = fips[0];
    expect(fip.floating_network_id).toBe(pubId);
    const address = fip.floating_ip_address as string;
    expect(new Set(first.map((r) => r['External IP']))).toEqual(new Set([address]));
    let now = await forwards(fip.id);
    expect(shape(now)).toEqual([
      [22, 'tcp', lip, 22],
      [53, 'udp', lip, 53],
      [8080, 'tcp', lip, 80],
    ]);
    expect(now.every((f) => f.internal_port_id === lport.id && f.description === 'lport services')).toBe(true);
    expect(now.map((f) => f.id).sort()).toEqual(first.map((r) => r.ID).sort());

    // step: the same command again — the same floating IP and forwards, nothing new.
    const again = await json<any[]>(
      pf(p.lessee, 'create', '-f', 'json', '-p', '22', '-p', '8080:80/tcp', '-p', '53/udp', 'lport', 'public'),
    );
    expect(again.map((r) => r.ID)).toEqual(first.map((r) => r.ID));
    expect((await lesseeFips()).map((f) => f.id)).toEqual([fip.id]);
    expect((await forwards(fip.id)).map((f) => f.id)).toEqual(now.map((f) => f.id));

    // step: by internal address on the floating IP's address — the port holding it is found.
    const byIp = await json<any[]>(pf(p.lessee, 'create', '-f', 'json', '-p', '80', webIp, address));
    expect(byIp.map((r) => [r['Internal IP'], r['Internal Port'], r['External Port'], r['External IP']])).toEqual([
      [webIp, 80, 80, address],
    ]);
    now = await forwards(fip.id);
    expect(now.find((f) => f.id === byIp[0].ID)).toMatchObject({ internal_port_id: web.id, internal_ip_address: webIp, description: '' });
    expect(now).toHaveLength(4);

    // step: an address no port holds — refused without a network, else esi-autocreated-<ip>.
    const portsBefore = (await api(p.lessee, 'GET', '/ports')).ports.length;
    const noNet = await pf(p.lessee, 'create', '-p', '2222:22', '10.9.0.50', address);
    expect(noNet.code).not.toBe(0);
    expect(noNet.stderr).toMatch(/no port has the address 10\.9\.0\.50; to create one, give --internal-ip-network/);
    expect((await api(p.lessee, 'GET', '/ports')).ports).toHaveLength(portsBefore);
    const auto = await json<any[]>(
      pf(p.lessee, 'create', '-f', 'json', '--internal-ip-network', 'lnet', '-p', '2222:22', '10.9.0.50', address),
    );
    const autoPort = (await api(p.lessee, 'GET', '/ports?name=esi-autocreated-10.9.0.50')).ports;
    expect(autoPort).toHaveLength(1);
    expect(autoPort[0]).toMatchObject({ network_id: lnetId, fixed_ips: [{ ip_address: '10.9.0.50' }] });
    now = await forwards(fip.id);
    expect(now.find((f) => f.id === auto[0].ID)).toMatchObject({
      internal_port_id: autoPort[0].id,
      internal_ip_address: '10.9.0.50',
      external_port: 2222,
    });
    const bySubnet = await json<any[]>(
      pf(p.lessee, 'create', '-f', 'json', '--internal-ip-subnet', 'lsub', '-p', '2223:22', '10.9.0.51', address),
    );
    const subnetPort = (await api(p.lessee, 'GET', '/ports?fixed_ips=ip_address%3D10.9.0.51')).ports;
    expect(subnetPort.map((x: any) => x.name)).toEqual(['esi-autocreated-10.9.0.51']);
    now = await forwards(fip.id);
    expect(now.find((f) => f.id === bySubnet[0].ID)?.internal_port_id).toBe(subnetPort[0].id);
    // The address now has its port: a re-run with the network finds it and the forward.
    const autoAgain = await json<any[]>(
      pf(p.lessee, 'create', '-f', 'json', '--internal-ip-network', 'lnet', '-p', '2222:22', '10.9.0.50', address),
    );
    expect(autoAgain.map((r) => r.ID)).toEqual(auto.map((r) => r.ID));
    expect(await forwards(fip.id)).toHaveLength(6);

    // step: bad specs and a missing -p fail with a clear message and change nothing.
    // (Independent CLI runs go side by side: each is mostly Node start-up.)
    const badSpecs = [
      [['-p', '70000'], /port 70000 out of range/],
      [['-p', '22/icmp'], /protocol icmp .* is not tcp or udp/],
      [['-p', 'ssh'], /invalid port forward specification "ssh"/],
      [[], /You must specify at least one port with --port/],
    ] as const;
    const badRuns = await Promise.all(badSpecs.map(([args]) => pf(p.lessee, 'create', ...args, 'lport', address)));
    badRuns.forEach((bad, i) => {
      expect(bad.code, bad.stdout).toBe(1);
      expect(bad.stderr).toMatch(badSpecs[i]![1]);
    });
    expect((await forwards(fip.id)).map((f) => f.id)).toEqual(now.map((f) => f.id));

    // step: another project sees no floating IP at that address: it can neither delete nor purge.
    const theirs = await call(ts, p.other, 'GET', `/network/v2.0/floatingips/${fip.id}/port_forwardings`);
    expect(theirs.status).toBe(404);
    const [otherPurge, otherDelete, otherCreate] = await Promise.all([
      pf(p.other, 'purge', address),
      pf(p.other, 'delete', '-p', '22', lip, address),
      pf(p.other, 'create', '-p', '22', lip, address),
    ]);
    expect(otherPurge.code).toBe(1);
    expect(otherPurge.stderr).toMatch(new RegExp(`floating ip ${address.replace(/\./g, '\\.')} was not found`));
    expect(otherDelete.code).toBe(1);
    expect(otherDelete.stderr).toMatch(/was not found/);
    expect(otherCreate.code).toBe(1);
    expect(otherCreate.stderr).toMatch(/was not found/);
    expect((await forwards(fip.id)).map((f) => f.id)).toEqual(now.map((f) => f.id));

    // step: delete one forward by its spec; it alone goes.
    const deleted = await json<any[]>(pf(p.lessee, 'delete', '-f', 'json', '-p', '8080:80', lip, address));
    const http = now.find((f) => f.external_port === 8080)!;
    expect(deleted).toEqual([
      { ID: http.id, 'Internal Port': 80, 'External Port': 8080, Protocol: 'tcp', 'Internal IP': lip, 'External IP': address },
    ]);
    now = await forwards(fip.id);
    expect(now).toHaveLength(5);
    expect(now.some((f) => f.id === http.id)).toBe(false);

    // step: specs matching nothing (another port, the wrong protocol, another address) warn and delete nothing.
    const none = await pf(p.lessee, 'delete', '-p', '9999', '-p', '53/tcp', lip, address);
    expect(none.code).toBe(0);
    expect(none.stdout.split('\n').filter((l) => l.startsWith('|'))).toEqual([expect.stringMatching(/^\| ID +\| Internal Port/)]);
    expect(none.stderr).toMatch(/warning: port forwarding matching 9999:9999\/tcp to .* does not exist/);
    expect(none.stderr).toMatch(/warning: port forwarding matching 53:53\/tcp to .* does not exist/);
    const wrongIp = await pf(p.lessee, 'delete', '-p', '22', webIp, address);
    expect(wrongIp.stderr).toMatch(/22:22\/tcp/);
    expect((await forwards(fip.id)).map((f) => f.id)).toEqual(now.map((f) => f.id));

    // step: purge removes every forward; the floating IP stays.
    const purged = await json<any[]>(pf(p.lessee, 'purge', '-f', 'json', address));
    expect(purged.map((r) => r.ID).sort()).toEqual(now.map((f) => f.id).sort());
    expect(await forwards(fip.id)).toEqual([]);
    expect((await lesseeFips()).map((f) => f.id)).toEqual([fip.id]);
    expect((await ok(pf(p.lessee, 'purge', address))).split('\n').filter((l) => l.startsWith('|'))).toHaveLength(1);

    // step: a purge naming an unknown address deletes nothing, even on the known one.
    await ok(pf(p.lessee, 'create', '-p', '22', 'lport', address));
    const mixed = await pf(p.lessee, 'purge', address, '198.51.100.7');
    expect(mixed.code).toBe(1);
    expect(mixed.stderr).toMatch(/floating ip 198\.51\.100\.7 was not found/);
    expect(await forwards(fip.id)).toHaveLength(1);
  }, 600_000); // ~25 CLI runs, 1.5-5 s each (Node start-up) depending on the machine's load
});
