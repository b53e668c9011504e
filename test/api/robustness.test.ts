/**
 * Cross-service robustness: every route of the identity (`/identity/v3`), baremetal
 * (`/baremetal/v1`), lease (`/lease/v1`), network (`/network/v2.0`) and compute (`/compute/v2.1`) APIs — enumerated from the Fastify app, so new
 * routes are covered without editing this file — gets bad input as admin, owner, lessee, another
 * project and anonymous: hostile path ids (not UUIDs, very long, `%00`, unicode, bad
 * percent-encodings), hostile query strings, malformed JSON, JSON of the wrong type, deeply
 * nested JSON, huge strings, unknown attributes, a wrong type for every known attribute
 * (fast-check, fixed seed) and a body over the size limit.
 *
 * Every answer must be a 4xx (a 2xx only where the input happens to be valid: a query string or
 * token a route may ignore), never a 5xx, with the API's own error body (Keystone
 * `{"error": …}`, Ironic `{"error_message": "<json>"}` with the version headers, esi-leap
 * `{faultcode, faultstring, debuginfo}`, Neutron `{"NeutronError": …}`, Nova `{"<name>": {code, message}}`), echo no secret, and write nothing: the row counts of
 * every table are compared after each request. Set `ESI_ROBUSTNESS_REPORT=<file>` to get every
 * failure as JSON.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatLeaseTime } from '../../src/domain/leasing/time.ts';
import { ADMIN_PASSWORD, call, createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { buildCases, type BadCase } from '../helpers/robustness/cases.ts';
import { errorFormatProblems, leakedSecrets, missingIronicHeaders, type ApiName } from '../helpers/robustness/checks.ts';
import { countChanges, rowCounter, type RowCounts } from '../helpers/robustness/db.ts';
import { RawClient } from '../helpers/robustness/http.ts';
import { listRoutes, routeKey, type RouteInfo, type RouteParam } from '../helpers/robustness/routes.ts';
import { BODY_SPECS, IDENTITY_CATALOG_PARAMS, specKey, type Fixtures } from '../helpers/robustness/specs.ts';
import { waitFor } from '../helpers/wait-for.ts';

const BODY_LIMIT = 192 * 1024;
const DAY = 86_400_000;
const IRONIC = { 'x-openstack-ironic-api-version': '1.82' };
const NOVA = { 'x-openstack-nova-api-version': '2.90' };
const APIS: Readonly<Record<ApiName, { prefix: string; headers: Record<string, string> }>> = {
  identity: { prefix: '/identity/v3', headers: {} },
  baremetal: { prefix: '/baremetal/v1', headers: IRONIC },
  lease: { prefix: '/lease/v1', headers: {} },
  network: { prefix: '/network/v2.0', headers: {} },
  compute: { prefix: '/compute/v2.1', headers: NOVA },
};
const PERSONA_NAMES = ['admin', 'owner', 'lessee', 'other', 'anonymous'] as const;

let ts: TestServer;
let fixtures: Fixtures;
let client: RawClient;
let counts: () => Promise<RowCounts>;
let secrets: string[];

beforeAll(async () => {
  ts = await startTestServer({ env: { ESI_MAX_BODY_BYTES: String(BODY_LIMIT) } });
  const p = await createPersonas(ts);
  fixtures = await createFixtures(p);
  client = new RawClient(ts.url);
  counts = await rowCounter(ts);
  secrets = [
    ...PERSONA_NAMES.flatMap((n) => (p[n].token ? [p[n].token] : [])),
    ADMIN_PASSWORD,
    'pw-owner1',
    'rb-hook-secret',
    'rb-fixture-secret',
  ];
}, 60_000);
afterAll(async () => {
  client?.close();
  await ts?.close();
});

/** Two nodes of o1 (one with lessee l1, a trait and a port), an offer on the other, a lease of l1. */
async function createFixtures(p: Personas): Promise<Fixtures> {
  const ok = async (
    persona: keyof Personas,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<any> => {
    const res = await call(ts, p[persona], method, path, body, headers);
    if (res.status >= 300) throw new Error(`fixture ${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const node = (
    await ok(
      'admin',
      'POST',
      '/baremetal/v1/nodes',
      { driver: 'fake-hardware', name: 'rb-node', owner: p.owner.projectId, lessee: p.lessee.projectId },
      IRONIC,
    )
  ).uuid;
  const node2 = (
    await ok('admin', 'POST', '/baremetal/v1/nodes', { driver: 'fake-hardware', name: 'rb-node-2', owner: p.owner.projectId }, IRONIC)
  ).uuid;
  await ok('admin', 'PUT', `/baremetal/v1/nodes/${node}/traits/CUSTOM_RB`, undefined, IRONIC);
  const step = { interface: 'bios', step: 'factory_reset', args: {}, priority: 10 };
  await ok('admin', 'POST', '/baremetal/v1/deploy_templates', { name: 'CUSTOM_RB', steps: [step] }, IRONIC);
  await ok('admin', 'PUT', `/baremetal/v1/nodes/${node}/maintenance`, { reason: 'rb' }, IRONIC);
  await ok('admin', 'DELETE', `/baremetal/v1/nodes/${node}/maintenance`, undefined, IRONIC);
  const historyEvent = (await ok('admin', 'GET', `/baremetal/v1/nodes/${node}/history`, undefined, IRONIC)).history[0]?.uuid as
    string | undefined;
  const port = (await ok('admin', 'POST', '/baremetal/v1/ports', { address: '52:54:00:00:00:01', node_uuid: node }, IRONIC)).uuid;
  const conductor = (await ok('admin', 'GET', '/baremetal/v1/conductors', undefined, IRONIC)).conductors[0].hostname;
  const t = Date.now() + 30 * DAY;
  const at = (days: number): string => formatLeaseTime(t + days * DAY);
  const offer = (await ok('owner', 'POST', '/lease/v1/offers', { resource_uuid: node2, start_time: at(0), end_time: at(20) })).uuid;
  const lease = (await ok('lessee', 'POST', `/lease/v1/offers/${offer}/claim`, { start_time: at(1), end_time: at(2) })).uuid;
  const ownerRoleId = (await ok('admin', 'GET', '/identity/v3/roles?name=owner')).roles[0].id;
  // esi's additions (being built): used when they can be created, else listed by the first test.
  const optional = async (path: string, body: unknown): Promise<string | undefined> => {
    const res = await call(ts, p.owner, 'POST', path, body);
    if (res.status !== 201) fixtureErrors.push(`POST ${path}: ${res.status} ${res.text.slice(0, 200)}`);
    return res.status === 201 ? (res.body.uuid as string) : undefined;
  };
  const network = await networkFixtures(p, ok);
  // Identity: a group of the admin and an application credential of owner1.
  const identity = {
    group: (await ok('admin', 'POST', '/identity/v3/groups', { group: { name: 'rb-group' } })).group.id as string,
    appCredential: (
      await ok('owner', 'POST', `/identity/v3/users/${p.owner.userId}/application_credentials`, {
        application_credential: { name: 'rb-ac' },
      })
    ).application_credential.id as string,
  };
  const leasePolicy = await optional('/lease/v1/lease_policies', {
    resource_uuid: node,
    project_id: p.owner.projectId,
    max_lease_seconds: 86_400,
  });
  const webhook = await optional('/lease/v1/webhooks', {
    url: 'http://127.0.0.1:9/rb-fixture',
    secret: 'rb-fixture-secret',
    enabled: false,
  });
  // Scheduling and compute: an allocation (it fails: no node of its class), a flavor with an
  // extra spec, an image, o1's key pair, and a server of o1 on a free node of its own.
  const allocation = (await ok('admin', 'POST', '/baremetal/v1/allocations', { resource_class: 'rb-none' }, IRONIC)).uuid;
  // Ironic's inventory resources: a chassis, a portgroup and a volume connector and target of the node.
  const chassis = (await ok('admin', 'POST', '/baremetal/v1/chassis', { description: 'rb' }, IRONIC)).uuid;
  const portgroup = (
    await ok('admin', 'POST', '/baremetal/v1/portgroups', { node_uuid: node, address: '52:54:00:00:00:02', name: 'rb-pg' }, IRONIC)
  ).uuid;
  const volumeConnector = (
    await ok(
      'admin',
      'POST',
      '/baremetal/v1/volume/connectors',
      { node_uuid: node, type: 'iqn', connector_id: 'iqn.2026-11.org.esi:rb' },
      IRONIC,
    )
  ).uuid;
  const volumeTarget = (
    await ok(
      'admin',
      'POST',
      '/baremetal/v1/volume/targets',
      { node_uuid: node, volume_type: 'iscsi', boot_index: 0, volume_id: 'rb-vol' },
      IRONIC,
    )
  ).uuid;
  const flavor = (
    await ok('admin', 'POST', '/compute/v2.1/flavors', { flavor: { name: 'rb-flavor', id: 'rb-flavor', ram: 1, vcpus: 1, disk: 0 } }, NOVA)
  ).flavor.id;
  await ok(
    'admin',
    'POST',
    `/compute/v2.1/flavors/${flavor}/os-extra_specs`,
    {
      extra_specs: {
        'hw:rb': 'x',
        'resources:CUSTOM_RB_SERVER': '1',
        'resources:VCPU': '0',
        'resources:MEMORY_MB': '0',
        'resources:DISK_GB': '0',
      },
    },
    NOVA,
  );
  const image = (
    await ok('admin', 'POST', '/image/v2/images', { name: 'rb-image', disk_format: 'raw', container_format: 'bare', visibility: 'public' })
  ).id;
  const up = await fetch(`${ts.url}/image/v2/images/${image}/file`, {
    method: 'PUT',
    headers: { 'x-auth-token': p.admin.token!, 'content-type': 'application/octet-stream' },
    body: new Uint8Array(512),
  });
  if (up.status !== 204) throw new Error(`fixture image upload: ${up.status}`);
  const keypair = (
    await ok(
      'owner',
      'POST',
      '/compute/v2.1/os-keypairs',
      { keypair: { name: 'rb-key', public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDvC3hT0l2fJ5kq3n7ZlVxq8YVw3pX6m8A0bq4b8wD1u rb' } },
      NOVA,
    )
  ).keypair.name;
  const serverNode = (
    await ok(
      'admin',
      'POST',
      '/baremetal/v1/nodes',
      { driver: 'fake-hardware', name: 'rb-server-node', owner: p.owner.projectId, resource_class: 'rb-server' },
      IRONIC,
    )
  ).uuid;
  await ts.server.services.inventory.nodeRepository.applyConductorResult(
    serverNode,
    { provision_state: 'available', power_state: 'power off' },
    Date.now(),
  );
  const server = (
    await ok(
      'owner',
      'POST',
      '/compute/v2.1/servers',
      { server: { name: 'rb-server', flavorRef: flavor, imageRef: image, networks: 'none' } },
      NOVA,
    )
  ).server.id;
  // Let the conductor deploy it, so that nothing changes in the database during the attacks.
  await waitFor(
    async () => (await call(ts, p.owner, 'GET', `/compute/v2.1/servers/${server}`, undefined, NOVA)).body.server.status,
    (status) => status === 'ACTIVE',
    { timeoutMs: 10_000, what: `server ${server} ACTIVE` },
  );
  return {
    allocation,
    chassis,
    portgroup,
    volumeConnector,
    volumeTarget,
    flavor,
    extraSpec: 'hw:rb',
    image,
    keypair,
    server,
    personas: p,
    ownerRoleId,
    node,
    port,
    trait: 'CUSTOM_RB',
    conductor,
    ...(historyEvent ? { historyEvent } : {}),
    offer,
    lease,
    window: [at(10), at(11)],
    ...(leasePolicy ? { leasePolicy } : {}),
    ...(webhook ? { webhook } : {}),
    network,
    identity,
  };
}

/** A shared network of o1 with a subnet, a port, a trunk (parent + one sub-port); a switch; a router. */
async function networkFixtures(
  p: Personas,
  ok: (persona: keyof Personas, method: string, path: string, body?: unknown) => Promise<any>,
): Promise<NonNullable<Fixtures['network']>> {
  const n = (await ok('owner', 'POST', '/network/v2.0/networks', { network: { name: 'rb-net' } })).network.id;
  const subnet = (await ok('owner', 'POST', '/network/v2.0/subnets', { subnet: { network_id: n, cidr: '10.98.0.0/24' } })).subnet.id;
  const port = async (): Promise<string> => (await ok('owner', 'POST', '/network/v2.0/ports', { port: { network_id: n } })).port.id;
  const [free, trunkParent, subPort] = [await port(), await port(), await port()];
  const trunk = (
    await ok('owner', 'POST', '/network/v2.0/trunks', {
      trunk: { port_id: trunkParent, sub_ports: [{ port_id: subPort, segmentation_type: 'vlan', segmentation_id: 3000 }] },
    })
  ).trunk.id;
  const rbac = (
    await ok('owner', 'POST', '/network/v2.0/rbac-policies', {
      rbac_policy: { object_type: 'network', object_id: n, action: 'access_as_shared', target_tenant: p.lessee.projectId },
    })
  ).rbac_policy.id;
  const sw = (
    await ok('admin', 'POST', '/network/v2.0/switches', { switch: { name: 'rb-switch', switch_id: '02:00:00:00:00:7a', driver: 'fake' } })
  ).switch.id;
  const router = (await ok('owner', 'POST', '/network/v2.0/routers', { router: { name: 'rb-router' } })).router.id;
  // A floating IP of o1 with a port forwarding to a port behind o1's router.
  const ext = (await ok('admin', 'POST', '/network/v2.0/networks', { network: { name: 'rb-ext', 'router:external': true } })).network.id;
  await ok('admin', 'POST', '/network/v2.0/subnets', { subnet: { network_id: ext, cidr: '198.19.0.0/24', enable_dhcp: false } });
  const fipNet = (await ok('owner', 'POST', '/network/v2.0/networks', { network: { name: 'rb-fip-net' } })).network.id;
  const fipSub = (await ok('owner', 'POST', '/network/v2.0/subnets', { subnet: { network_id: fipNet, cidr: '10.97.0.0/24' } })).subnet.id;
  const fipRouter = (
    await ok('owner', 'POST', '/network/v2.0/routers', { router: { name: 'rb-fip-router', external_gateway_info: { network_id: ext } } })
  ).router.id;
  await ok('owner', 'PUT', `/network/v2.0/routers/${fipRouter}/add_router_interface`, { subnet_id: fipSub });
  const routedPort = (await ok('owner', 'POST', '/network/v2.0/ports', { port: { network_id: fipNet } })).port.id;
  const floatingip = (await ok('owner', 'POST', '/network/v2.0/floatingips', { floatingip: { floating_network_id: ext } })).floatingip.id;
  const portForwarding = (
    await ok('owner', 'POST', `/network/v2.0/floatingips/${floatingip}/port_forwardings`, {
      port_forwarding: { protocol: 'tcp', internal_port_id: routedPort, internal_port: 22, external_port: 2022 },
    })
  ).port_forwarding.id;
  return {
    network: n,
    subnet,
    port: free,
    trunk,
    trunkParent,
    subPort,
    rbac,
    switch: sw,
    router,
    extNetwork: ext,
    routedPort,
    floatingip,
    portForwarding,
  };
}

/** Fixtures that could not be created (reported by the first test). */
const fixtureErrors: string[] = [];

/** The fixture id for a path parameter, by the resource segment before it (undefined: none). */
function fixtureParam(api: ApiName, param: RouteParam, f: Fixtures): string | undefined {
  const table: Record<ApiName, Record<string, string>> = {
    identity: {
      projects: f.personas.owner.projectId!,
      users: f.personas.owner.userId!,
      roles: f.ownerRoleId,
      domains: 'default',
      ...IDENTITY_CATALOG_PARAMS,
      ...(f.identity ? { groups: f.identity.group, application_credentials: f.identity.appCredential } : {}),
    },
    baremetal: {
      nodes: f.node,
      console: f.node,
      traits: f.trait,
      ports: f.port,
      drivers: 'fake-hardware',
      conductors: f.conductor,
      heartbeat: f.node,
      allocations: f.allocation,
      chassis: f.chassis,
      portgroups: f.portgroup,
      connectors: f.volumeConnector,
      targets: f.volumeTarget,
      bios: 'BootMode',
      deploy_templates: 'CUSTOM_RB',
      vendor_passthru: 'third_method_sync',
      indicators: 'led@system',
    },
    compute: { flavors: f.flavor, 'os-extra_specs': f.extraSpec, 'os-keypairs': f.keypair, servers: f.server },
    lease: {
      offers: f.offer,
      leases: f.lease,
      console_auth_tokens: f.node,
      quotas: f.personas.owner.projectId!,
      ...(f.leasePolicy ? { lease_policies: f.leasePolicy } : {}),
      ...(f.webhook ? { webhooks: f.webhook } : {}),
    },
    network: f.network
      ? {
          networks: f.network.network,
          subnets: f.network.subnet,
          ports: f.network.port,
          trunks: f.network.trunk,
          'rbac-policies': f.network.rbac,
          switches: f.network.switch,
          routers: f.network.router,
          floatingips: f.network.floatingip,
          port_forwardings: f.network.portForwarding,
          quotas: f.personas.owner.projectId!,
          extensions: 'trunk',
        }
      : {},
  };
  if (api === 'baremetal' && param.after === 'vifs') return f.network?.port;
  if (api === 'baremetal' && param.after === 'history') return f.historyEvent;
  return table[api][param.after];
}

/** An id no resource has: used for parameters without a fixture (the first test lists them). */
const NO_FIXTURE = '00000000-0000-4000-8000-00000000f1c5';

/** The value of a path parameter: its fixture, URL-encoded, or {@link NO_FIXTURE}. */
function realParam(api: ApiName, param: RouteParam, f: Fixtures): string {
  return encodeURIComponent(fixtureParam(api, param, f) ?? NO_FIXTURE);
}

/** One failed expectation. */
interface Failure {
  readonly route: string;
  readonly persona: string;
  readonly case: string;
  readonly request: string;
  readonly status: number;
  readonly problems: readonly string[];
  readonly response: string;
}

const short = (s: string | undefined, n = 160): string =>
  s === undefined ? '' : s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s;

/** Send every case of one layer to every route of one API as every persona; collect the failures. */
async function attack(api: ApiName, layer: BadCase['layer']): Promise<{ failures: Failure[]; requests: number; routes: RouteInfo[] }> {
  const { prefix, headers } = APIS[api];
  const routes = listRoutes(ts.server.app!, [prefix]);
  const failures: Failure[] = [];
  let requests = 0;
  let baseline = await counts();
  for (const route of routes) {
    const spec = BODY_SPECS[specKey(route.method, route.pattern)];
    const realParams = route.params.map((param) => realParam(api, param, fixtures));
    for (const persona of PERSONA_NAMES) {
      const p = fixtures.personas[persona];
      const cases = buildCases(route, spec, persona, {
        fixtures,
        apiHeaders: headers,
        realParams,
        bodyLimit: BODY_LIMIT,
        reduced: persona !== 'admin' && persona !== 'owner',
        anonymous: persona === 'anonymous',
      });
      for (const c of cases.filter((x) => x.layer === layer)) {
        requests += 1;
        const res = await client.send(
          c.method,
          c.path,
          { accept: 'application/json', ...(p.token ? { 'x-auth-token': p.token } : {}), ...c.headers },
          c.body,
        );
        const problems = judge(api, c, res.status, res);
        const after = await counts();
        const changed = countChanges(baseline, after);
        if (changed.length > 0) problems.push(`wrote: ${changed.join(', ')}`);
        baseline = after;
        if (problems.length > 0) {
          failures.push({
            route: routeKey(route),
            persona,
            case: c.label,
            request: `${c.method} ${short(c.path, 120)} ${short(c.body, 200)}`.trim(),
            status: res.status,
            problems,
            response: short(res.text, 300),
          });
        }
      }
    }
  }
  return { failures, requests, routes };
}

/** The problems of one answer. */
function judge(api: ApiName, c: BadCase, status: number, res: Parameters<typeof errorFormatProblems>[1]): string[] {
  const problems: string[] = [];
  const success = status >= 200 && status < 300;
  const versionDoc = status === 300 && (c.method === 'GET' || c.method === 'HEAD');
  if (status >= 500) problems.push(`server error ${status}`);
  else if (!(status >= 400 && status < 500) && !(success && c.expect === 'client-or-success') && !versionDoc)
    problems.push(`status ${status} (expected 4xx)`);
  if (status >= 400 && c.method !== 'HEAD') problems.push(...errorFormatProblems(api, res));
  if (api === 'baremetal') problems.push(...missingIronicHeaders(res));
  problems.push(...leakedSecrets(res, secrets));
  return problems;
}

/** A readable list of failures, one line each, grouped by route. */
function report(failures: readonly Failure[]): string {
  return failures
    .map(
      (f) =>
        `${f.route} [${f.persona}] ${f.case} → ${f.status}: ${f.problems.join('; ')}\n    request: ${f.request}\n    response: ${f.response}`,
    )
    .join('\n');
}

function saveReport(name: string, failures: readonly Failure[]): void {
  const file = process.env.ESI_ROBUSTNESS_REPORT;
  if (!file) return;
  const all = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  all[name] = failures;
  fs.writeFileSync(file, JSON.stringify(all, null, 2));
}

describe('robustness against bad input', () => {
  it('enumerates the routes of the APIs from the app, and every write route has a body spec', () => {
    const all = (Object.keys(APIS) as ApiName[]).flatMap((api) => listRoutes(ts.server.app!, [APIS[api].prefix]));
    const keys = all.map(routeKey);
    for (const known of [
      'POST /identity/v3/users/:id/password',
      'PATCH /baremetal/v1/nodes/:ident',
      'POST /lease/v1/offers/:ident/claim',
      'DELETE /lease/v1/leases/:ident',
      'PUT /network/v2.0/trunks/:id/add_subports',
    ]) {
      expect(keys).toContain(known);
    }
    expect(all.length).toBeGreaterThan(100);
    const missing = all
      .filter((r) => ['POST', 'PUT', 'PATCH'].includes(r.method) && !BODY_SPECS[specKey(r.method, r.pattern)])
      .map(routeKey);
    expect(missing, 'write routes without a body spec in test/helpers/robustness/specs.ts').toEqual([]);
    const apiOf = (pattern: string): ApiName => (Object.keys(APIS) as ApiName[]).find((a) => pattern.startsWith(APIS[a].prefix))!;
    const noFixture = [
      ...new Set(
        all.flatMap((r) =>
          r.params.filter((p) => fixtureParam(apiOf(r.pattern), p, fixtures) === undefined).map((p) => `/${p.after}/:${p.names.join('|')}`),
        ),
      ),
    ];
    expect(fixtureErrors, 'fixtures that could not be created').toEqual([]);
    expect(noFixture, 'path parameters without a fixture (add them to fixtureParam)').toEqual([]);
  });

  for (const api of Object.keys(APIS) as ApiName[]) {
    it(`${api}: every route answers bad input with a 4xx in its own format and writes nothing`, async () => {
      const { failures, requests, routes } = await attack(api, 'api');
      saveReport(api, failures);
      expect(routes.length).toBeGreaterThan(5);
      expect(requests).toBeGreaterThan(routes.length * 5);
      expect(
        failures.length,
        `${failures.length} of ${requests} bad requests to ${routes.length} routes failed:\n${report(failures)}`,
      ).toBe(0);
    }, 400_000);
  }

  // Over-long path parameters and undecodable URLs never reach an API plugin: Fastify's router
  // answers them, so their format is the app's (`frameworkErrors`), checked here for all APIs.
  it('router: URLs refused before routing (over-long ids, bad percent-encodings) answer in each API’s format', async () => {
    const results = [];
    for (const api of Object.keys(APIS) as ApiName[]) results.push(await attack(api, 'router'));
    const failures = results.flatMap((r) => r.failures);
    saveReport('router', failures);
    const requests = results.reduce((n, r) => n + r.requests, 0);
    expect(requests).toBeGreaterThan(100);
    expect(failures.length, `${failures.length} of ${requests} requests failed:\n${report(failures)}`).toBe(0);
  }, 400_000);

  it('the fixtures are intact afterwards', async () => {
    const p = fixtures.personas;
    const offer = await call(ts, p.owner, 'GET', `/lease/v1/offers/${fixtures.offer}`);
    expect(offer.body.status).toBe('available');
    const lease = await call(ts, p.lessee, 'GET', `/lease/v1/leases/${fixtures.lease}`);
    expect(lease.body.status).toBe('created');
    const node = await call(ts, p.admin, 'GET', `/baremetal/v1/nodes/${fixtures.node}`, undefined, IRONIC);
    expect(node.body).toMatchObject({
      maintenance: false,
      owner: p.owner.projectId,
      lessee: p.lessee.projectId,
      traits: ['CUSTOM_RB'],
      description: null,
    });
    // The owner's password is unchanged, and the row counter sees the token a login writes.
    const before = await counts();
    const login = await call(ts, null, 'POST', '/identity/v3/auth/tokens', {
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'owner1', domain: { id: 'default' }, password: 'pw-owner1' } } },
      },
    });
    expect(login.status).toBe(201);
    expect(countChanges(before, await counts())).toEqual([`tokens: ${before.tokens} → ${before.tokens! + 1}`]);
    const project = await call(ts, p.admin, 'GET', `/identity/v3/projects/${p.owner.projectId}`);
    expect(project.body.project).toMatchObject({ name: 'o1', enabled: true, description: '' });
  });
});
