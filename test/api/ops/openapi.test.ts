/**
 * The API documentation (src/api/docs; docs/api.md): `/openapi.json`, `/openapi/<service>.json`
 * and the `/docs` page, compared with what the server really serves:
 * - the document is valid OpenAPI 3.1 (an OpenAPI validator, @apidevtools/swagger-parser, and
 *   our own checks: unique operation ids, every path parameter declared, every operation
 *   answering in its service's error format);
 * - every route of Fastify's route table is documented, and every documented operation is a route;
 * - the body schemas in the document are the very objects the parsers check bodies with, and
 *   they behave so: a body the schema refuses is the API's 400 (in the documented error format),
 *   a body it admits is not refused for its shape;
 * - anonymous callers read the documents (public docs), which hold no secret and do not change
 *   with the caller.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { NodeCreateBody, PatchBody, PortCreateBody, PowerBody } from '../../../src/api/baremetal/schemas.ts';
import { ProjectCreateBody, UserCreateBody } from '../../../src/api/identity/schemas.ts';
import { bodySchema } from '../../../src/api/lease/wire.ts';
import { CLAIM_BODY } from '../../../src/api/lease/routes-offers.ts';
import { DOC_SERVICES } from '../../../src/api/docs/services.ts';
import { asDocumented } from './openapi-support.ts';
import { ImageCreateBody, ImagePatchBody, ImagePatchDraft4Body } from '../../../src/api/image/bodies.ts';
import { FlavorCreateBody, FlavorUpdateBody, KeypairCreateBody, ServerCreateBody } from '../../../src/api/compute/bodies.ts';
import { NODE_DETAIL_PARAMS, NODE_LIST_PARAMS } from '../../../src/api/baremetal/node-list.ts';
import { FLOATINGIP, NETWORK, PORT, RBAC_POLICY, ROUTER, SUBNET, TRUNK } from '../../../src/api/network/schemas.ts';

let ts: TestServer;
let p: Personas;

/** The whole document as anonymous callers get it (parsed JSON, walked freely). */
let doc: any;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
  const r = await call(ts, p.anonymous, 'GET', '/openapi.json');
  expect(r.status, r.text).toBe(200);
  doc = r.body;
});
afterAll(async () => ts?.close());

/** Every documented operation: method (upper case), OpenAPI path, operation object. */
function operations(document = doc): Array<{ method: string; path: string; op: Record<string, any> }> {
  const out = [];
  for (const [path, item] of Object.entries<Record<string, any>>(document.paths))
    for (const m of METHODS) if (item[m]) out.push({ method: m.toUpperCase(), path, op: item[m] });
  return out;
}

/** A path with its parameters anonymous (`{}`), for comparing URL shapes whatever the names. */
const shape = (path: string): string => path.replace(/\{[^}]+\}/g, '{}').replace(/(.)\/$/, '$1');

/**
 * Fastify's own route table (`printRoutes`, independent of the documentation's route hook) as
 * `METHOD shape` pairs. A node's label continues its parent's path; `:a|:b` is one position with
 * two parameter names.
 */
function routeTable(): Set<string> {
  const text = ts.server.app!.printRoutes({ commonPrefix: false });
  const stack: Array<{ depth: number; path: string }> = [];
  const out = new Set<string>();
  for (const line of text.split('\n')) {
    const m = /^([│ ]*)(?:[├└]── )?(\S+)(?: \(([^)]*)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    while (stack.length > 0 && stack[stack.length - 1]!.depth >= depth) stack.pop();
    const path = (stack[stack.length - 1]?.path ?? '') + m[2]!;
    stack.push({ depth, path });
    const url = path.replace(/:[A-Za-z0-9_]+(\|:[A-Za-z0-9_]+)*/g, '{}');
    for (const method of m[3]?.split(', ') ?? []) out.add(`${method} ${shape(url)}`);
  }
  return out;
}

/** The document's pairs, as {@link routeTable}'s. */
const documented = (): Set<string> => new Set(operations().map((o) => `${o.method} ${shape(o.path)}`));

const bodyOf = (method: string, path: string): unknown => doc.paths[path]?.[method]?.requestBody?.content?.['application/json']?.schema;

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 with info, tags per service, a token scheme, and unique operation ids', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: 'esi API', version: expect.any(String) });
    expect(doc.tags.map((t: { name: string }) => t.name)).toEqual(DOC_SERVICES.map((s) => s.name));
    expect(doc.components.securitySchemes.token).toEqual({ type: 'apiKey', in: 'header', name: 'X-Auth-Token' });
    const ops = operations();
    expect(ops.length).toBeGreaterThan(250);
    const ids = ops.map((o) => o.op.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z]+(_[A-Za-z0-9]+)*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('passes an OpenAPI validator (the specification’s own JSON schema of 3.1 documents)', async () => {
    // The validator resolves references in place: it gets a copy.
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeDefined();
    for (const s of DOC_SERVICES) {
      const r = await call(ts, p.anonymous, 'GET', `/openapi/${s.name}.json`);
      await expect(SwaggerParser.validate(r.body), s.name).resolves.toBeDefined();
    }
  });

  it('declares every path parameter, tags each operation with its service, and gives its error format', () => {
    for (const { method, path, op } of operations()) {
      const where = `${method} ${path}`;
      expect(path, where).not.toMatch(/:/);
      const declared = (op.parameters ?? []).filter((x: { in: string }) => x.in === 'path').map((x: { name: string }) => x.name);
      const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      expect(declared.sort(), where).toEqual(inPath.sort());
      for (const x of op.parameters ?? []) if (x.in === 'path') expect(x.required, where).toBe(true);
      expect(op.tags, where).toHaveLength(1);
      const service = DOC_SERVICES.find((s) => s.name === op.tags[0])!;
      expect(path === service.prefix || path.startsWith(`${service.prefix}/`), where).toBe(true);
      // One success answer: 2XX, or the status a route names (101 for a websocket, 300 for version lists).
      const success = Object.keys(op.responses).filter((code) => ['2XX', '101', '300'].includes(code));
      expect(success, where).toHaveLength(1);
      if (service.error !== null) expect(op.responses['4XX'], where).toEqual({ $ref: `#/components/responses/${service.name}Error` });
      if (!service.authenticated) expect(op.security, where).toEqual([]);
    }
    for (const s of DOC_SERVICES.filter((x) => x.error !== null))
      expect(doc.components.responses[`${s.name}Error`].content[s.error!.mediaType].schema).toEqual(
        JSON.parse(JSON.stringify(s.error!.schema)),
      );
  });

  it('documents every route the server serves, and only those', async () => {
    const table = routeTable();
    const docs = documented();
    expect(table.size).toBeGreaterThan(300);
    const missing: string[] = [];
    for (const entry of table) {
      const [method, path] = entry.split(' ') as [string, string];
      if (docs.has(entry) || path.startsWith('/docs')) continue; // the page's own files
      // HEAD is answered for every GET route (Fastify), documented once as the GET.
      if (method === 'HEAD' && docs.has(`GET ${path}`)) continue;
      missing.push(entry);
    }
    // What the document leaves out is only the routes that refuse a method with 405.
    for (const entry of missing) {
      const [method, path] = entry.split(' ') as [string, string];
      const r = await call(ts, p.admin, method, path.replace(/\{\}/g, 'x'), undefined, {
        'openstack-api-version': 'compute 2.1',
        'x-openstack-ironic-api-version': '1.82',
      });
      expect(r.status, `${entry} is not documented, yet answers ${r.status}`).toBe(405);
    }
    for (const entry of docs) expect(table.has(entry), `${entry} is documented but not served`).toBe(true);
    for (const { method, path } of operations())
      expect(ts.server.app!.hasRoute({ method, url: path.replace(/\{([^}]+)\}/g, ':$1') }), `${method} ${path}`).toBe(true);
  });

  it('has one document per service: its paths only, together the whole', async () => {
    const union = new Set<string>();
    for (const s of DOC_SERVICES) {
      const r = await call(ts, p.anonymous, 'GET', `/openapi/${s.name}.json`);
      expect(r.status, s.name).toBe(200);
      expect(r.body.openapi).toBe('3.1.0');
      for (const { method, path, op } of operations(r.body)) {
        expect(op.tags, path).toEqual([s.name]);
        union.add(`${method} ${path}`);
      }
    }
    expect([...union].sort()).toEqual(
      operations()
        .map((o) => `${o.method} ${o.path}`)
        .sort(),
    );
    expect((await call(ts, p.anonymous, 'GET', '/openapi/nothing.json')).status).toBe(404);
  });
});

describe('body schemas: the parsers own', () => {
  it('are the very schema objects the parsers check bodies against', () => {
    const cases: Array<[string, string, TSchema]> = [
      ['post', '/baremetal/v1/nodes', NodeCreateBody],
      ['post', '/baremetal/nodes', NodeCreateBody],
      ['patch', '/baremetal/v1/nodes/{ident}', PatchBody],
      ['post', '/baremetal/v1/ports', PortCreateBody],
      ['put', '/baremetal/v1/nodes/{ident}/states/power', PowerBody],
      ['post', '/identity/v3/projects', ProjectCreateBody],
      ['post', '/identity/v3/users', UserCreateBody],
      ['post', '/lease/v1/offers/{ident}/claim', bodySchema(CLAIM_BODY)],
    ];
    for (const [path, bodies] of Object.entries({
      networks: NETWORK,
      subnets: SUBNET,
      ports: PORT,
      routers: ROUTER,
      floatingips: FLOATINGIP,
      trunks: TRUNK,
      'rbac-policies': RBAC_POLICY,
    })) {
      cases.push(['post', `/network/v2.0/${path}`, bodies.createBody], ['put', `/network/v2.0/${path}/{id}`, bodies.updateBody]);
    }
    cases.push(
      ['post', '/image/v2/images', ImageCreateBody],
      ['post', '/compute/v2.1/servers', ServerCreateBody],
      ['post', '/compute/v2.1/os-keypairs', KeypairCreateBody],
      ['post', '/compute/v2.1/flavors', FlavorCreateBody],
      ['put', '/compute/v2.1/flavors/{id}', FlavorUpdateBody],
    );
    for (const [method, path, schema] of cases) expect(bodyOf(method, path), `${method} ${path}`).toEqual(asDocumented(schema));
    // Glance's PATCH takes its JSON-patch media types, one schema each.
    const patch = doc.paths['/image/v2/images/{id}'].patch.requestBody.content;
    expect(Object.keys(patch).sort()).toEqual([
      'application/openstack-images-v2.0-json-patch',
      'application/openstack-images-v2.1-json-patch',
    ]);
    expect(patch['application/openstack-images-v2.1-json-patch'].schema).toEqual(asDocumented(ImagePatchBody));
    expect(patch['application/openstack-images-v2.0-json-patch'].schema).toEqual(asDocumented(ImagePatchDraft4Body));
  });

  it('refuse what the document refuses with the API’s 400 in its documented format, and admit what it admits', async () => {
    const errorSchema = (name: string): TSchema => DOC_SERVICES.find((s) => s.name === name)!.error!.schema;
    // The newest microversions: the document's.
    const v = { 'x-openstack-ironic-api-version': '1.82', 'openstack-api-version': 'compute 2.90' };
    const cases: Array<{
      service: string;
      method: string;
      url: string;
      schema: TSchema;
      bad: unknown[];
      good: unknown;
      goodStatus: number;
    }> = [
      {
        service: 'baremetal',
        method: 'POST',
        url: '/baremetal/v1/nodes',
        schema: NodeCreateBody,
        bad: [{ driver: 'fake-hardware', colour: 'blue' }, {}, { driver: 7 }, { driver: 'fake-hardware', properties: [1] }],
        good: { driver: 'fake-hardware', name: 'doc-node', properties: { memory_mb: 1024 } },
        goodStatus: 201,
      },
      {
        service: 'identity',
        method: 'POST',
        url: '/identity/v3/projects',
        schema: ProjectCreateBody,
        bad: [{ project: { name: 'x' }, extra: 1 }, { project: {} }, { project: { name: 'x', enabled: 'yes' } }],
        good: { project: { name: 'doc-project', description: 'from the documented schema' } },
        goodStatus: 201,
      },
      {
        service: 'lease',
        method: 'POST',
        url: '/lease/v1/offers/00000000-0000-4000-8000-000000000000/claim',
        schema: bodySchema(CLAIM_BODY),
        bad: [{ colour: 'blue' }, { name: 7 }, { properties: 'x' }],
        good: { name: 'doc-claim', properties: {} },
        goodStatus: 404,
      },
      {
        service: 'compute',
        method: 'POST',
        url: '/compute/v2.1/os-keypairs',
        schema: KeypairCreateBody,
        bad: [{ keypair: { name: 'k', colour: 1 } }, { keypair: { name: 'bad/name' } }, { keypair: {} }, { keypair: { name: 'k' }, x: 1 }],
        good: { keypair: { name: 'doc-keypair' } },
        goodStatus: 201,
      },
      {
        service: 'compute',
        method: 'POST',
        url: '/compute/v2.1/flavors',
        schema: FlavorCreateBody,
        bad: [{ flavor: { name: 'f', ram: 1, vcpus: 1 } }, { flavor: { name: 'f', ram: 'x', vcpus: 1, disk: 1 } }, { flavour: {} }],
        good: { flavor: { name: 'doc-flavor', ram: 1024, vcpus: 2, disk: 10 } },
        goodStatus: 200,
      },
      {
        service: 'compute',
        method: 'POST',
        url: '/compute/v2.1/servers',
        schema: ServerCreateBody,
        bad: [
          { server: { name: 's', flavorRef: '1' } },
          { server: { name: 's', imageRef: 'i', flavorRef: '1', colour: 1 } },
          { server: { name: 's', imageRef: 'i', flavorRef: '1', networks: 7 } },
          { server: { name: 7, imageRef: 'i', flavorRef: '1' } },
        ],
        good: { server: { name: 'doc-server', imageRef: 'no-such-image', flavorRef: 'no-such-flavor', networks: 'none' } },
        // Nova's 400 for a flavor that does not exist: refused for what it names, not its shape.
        goodStatus: 400,
      },
      {
        service: 'image',
        method: 'POST',
        url: '/image/v2/images',
        schema: ImageCreateBody,
        bad: [{ name: 7 }, { min_ram: 'x' }, { visibility: 'everyone' }, { os_distro: 7 }, { tags: 'x' }, { id: 'not-a-uuid' }, []],
        good: { name: 'doc-image', disk_format: 'raw', os_distro: 'debian', min_ram: 512 },
        goodStatus: 201,
      },
      {
        service: 'network',
        method: 'POST',
        url: '/network/v2.0/networks',
        schema: NETWORK.createBody,
        bad: [
          { network: { name: 'x', colour: 'blue' } },
          { network: { name: 7 } },
          { network: { mtu: 'big' } },
          { network: { name: 'x'.repeat(256) } },
          { network: { status: 'DOWN' } },
          { network: [] },
          { networks: [{}] },
        ],
        good: { network: { name: 'doc-network', admin_state_up: 'true', mtu: '1400' } },
        goodStatus: 201,
      },
      {
        service: 'network',
        method: 'POST',
        url: '/network/v2.0/ports',
        schema: PORT.createBody,
        bad: [{ port: {} }, { port: { network_id: 42 } }, { port: { network_id: '00000000-0000-4000-8000-000000000000', fixed_ips: {} } }],
        good: { port: { network_id: '00000000-0000-4000-8000-000000000000', name: 'doc-port' } },
        goodStatus: 404,
      },
      {
        service: 'network',
        method: 'PUT',
        url: '/network/v2.0/subnets/00000000-0000-4000-8000-000000000000',
        schema: SUBNET.updateBody,
        bad: [{ subnet: { cidr: '10.0.0.0/24' } }, { subnet: { enable_dhcp: [] } }, { subnet: { host_routes: 'x' } }],
        good: { subnet: { name: 'doc-subnet' } },
        goodStatus: 404,
      },
    ];
    for (const c of cases) {
      for (const bad of c.bad) {
        expect(Value.Check(c.schema, bad), JSON.stringify(bad)).toBe(false);
        const r = await call(ts, p.admin, c.method, c.url, bad, v);
        expect(r.status, `${c.url} ${JSON.stringify(bad)}: ${r.text}`).toBe(400);
        expect(Value.Check(errorSchema(c.service), r.body), r.text).toBe(true);
      }
      expect(Value.Check(c.schema, c.good)).toBe(true);
      const r = await call(ts, p.admin, c.method, c.url, c.good, v);
      expect(r.status, `${c.url}: ${r.text}`).toBe(c.goodStatus);
    }
  });
});

describe('query parameters: the readers own', () => {
  const queryNames = (method: string, path: string): string[] =>
    (doc.paths[path][method].parameters ?? [])
      .filter((x: { in: string }) => x.in === 'query')
      .map((x: { name: string }) => x.name)
      .sort();

  it('are the names the query readers allow: those pass, any other is the API’s 400', async () => {
    const v = { 'x-openstack-ironic-api-version': '1.82' };
    expect(queryNames('get', '/baremetal/v1/nodes')).toEqual([...NODE_LIST_PARAMS].sort());
    expect(queryNames('get', '/baremetal/v1/nodes/detail')).toEqual([...NODE_DETAIL_PARAMS].sort());
    // A chassis' nodes: the node list's, but the chassis filter (the chassis is the URL's).
    expect(queryNames('get', '/baremetal/v1/chassis/{uuid}/nodes')).toEqual(
      [...NODE_LIST_PARAMS].filter((n) => n !== 'chassis_uuid').sort(),
    );
    // A node's ports: no node filter; a single resource: `fields` only; a websocket: `read_only`.
    expect(queryNames('get', '/baremetal/v1/nodes/{ident}/ports')).not.toContain('node');
    expect(queryNames('get', '/baremetal/v1/ports/{uuid}')).toEqual(['fields']);
    expect(queryNames('get', '/baremetal/v1/nodes/{ident}/states/console/stream')).toEqual(['read_only']);
    const cases: Array<[string, string, string]> = [
      ['baremetal', '/baremetal/v1/nodes', 'get'],
      ['baremetal', '/baremetal/v1/allocations', 'get'],
      ['baremetal', '/baremetal/v1/chassis', 'get'],
      ['baremetal', '/baremetal/v1/chassis/detail', 'get'],
      ['baremetal', '/baremetal/v1/ports', 'get'],
      ['baremetal', '/baremetal/v1/ports/detail', 'get'],
      ['baremetal', '/baremetal/v1/portgroups', 'get'],
      ['baremetal', '/baremetal/v1/portgroups/detail', 'get'],
      ['baremetal', '/baremetal/v1/volume/connectors', 'get'],
      ['baremetal', '/baremetal/v1/volume/targets', 'get'],
      ['baremetal', '/baremetal/v1/drivers', 'get'],
      ['baremetal', '/baremetal/v1/conductors', 'get'],
      ['baremetal', '/baremetal/v1/deploy_templates', 'get'],
      ['lease', '/lease/v1/offers', 'get'],
      ['lease', '/lease/v1/leases', 'get'],
      ['lease', '/lease/v1/events', 'get'],
      // Neutron's lists: any attribute name filters, and esi refuses names that are none (400).
      ...['networks', 'subnets', 'ports', 'trunks', 'rbac-policies', 'routers', 'floatingips'].map((c): [string, string, string] => [
        'network',
        `/network/v2.0/${c}`,
        'get',
      ]),
    ];
    for (const [service, path, method] of cases) {
      const names = queryNames(method, path);
      expect(names.length, path).toBeGreaterThan(0);
      const refused = await call(ts, p.admin, method.toUpperCase(), `${path}?not_a_documented_parameter=1`, undefined, v);
      expect(refused.status, `${path}: ${refused.text}`).toBe(400);
      const errorSchema = DOC_SERVICES.find((s) => s.name === service)!.error!.schema;
      expect(Value.Check(errorSchema, refused.body), refused.text).toBe(true);
      // Every documented name is taken (its value may still be refused: 'x' is no valid limit).
      for (const name of names) {
        const r = await call(ts, p.admin, method.toUpperCase(), `${path}?${name}=x`, undefined, v);
        expect(r.text, `${path}?${name}`).not.toMatch(/Unexpected argument|Unknown argument|invalid attribute for filtering/);
      }
    }
  });
});

describe('who may read the documents', () => {
  it('every persona, anonymous included, gets the same documents and the page', async () => {
    const text = JSON.stringify(doc);
    for (const who of [p.admin, p.owner, p.lessee, p.other, p.anonymous]) {
      const r = await call(ts, who, 'GET', '/openapi.json');
      expect(r.status).toBe(200);
      expect(JSON.stringify(r.body)).toBe(text);
    }
    const bad = await call(ts, null, 'GET', '/openapi/baremetal.json', undefined, { 'x-auth-token': 'not-a-token' });
    expect(bad.status).toBe(200);
    const page = await fetch(`${ts.url}/docs`, { redirect: 'follow' });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    // Served from the package, nothing fetched elsewhere (this machine may have no network).
    expect(await page.text()).not.toMatch(/(src|href)=["']?(https?:)?\/\//);
    const init = await (await fetch(`${ts.url}/docs/static/swagger-initializer.js`)).text();
    expect(init).toContain('/openapi/baremetal.json');
    expect(init).toContain('validatorUrl: null');
    const bundle = await fetch(`${ts.url}/docs/static/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  });

  it('hold no secret: no password, token, key, data directory or URL of this server', () => {
    const text = JSON.stringify(doc);
    const config = ts.server.services.config as unknown as Record<string, unknown>;
    const secrets = [ADMIN_PASSWORD, ts.dataDir, ts.url, String(config.publicUrl)];
    for (const who of Object.values(p)) if (who.token) secrets.push(who.token);
    const key = config.secretKey;
    if (key instanceof Uint8Array) secrets.push(Buffer.from(key).toString('hex'), Buffer.from(key).toString('base64'));
    for (const s of secrets) expect(text.includes(s), `the document holds ${s.slice(0, 12)}…`).toBe(false);
    expect(doc.servers).toBeUndefined();
    expect(text).not.toMatch(/"(example|default)":/);
  });
});
