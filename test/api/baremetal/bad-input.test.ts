/**
 * Bad input never crashes the service or changes state: malformed JSON, wrong types, unknown
 * fields, oversized and mistyped bodies, bad identifiers — each a 4xx in Ironic's error format
 * with nothing written. Includes a randomised check that arbitrary JSON bodies never yield 5xx.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, countRows, createNode, createPort, expectError, nodeRow } from './helpers.ts';

let ts: TestServer;
let p: Personas;
let node: any;
let port: any;

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
  node = await createNode(ts, p, { name: 'victim', properties: { cpus: 2 } });
  port = await createPort(ts, p, node.uuid, '52:54:00:12:34:56');
});
afterAll(async () => ts?.close());

/** Snapshot of everything a bad request could have changed. */
async function snapshot(): Promise<string> {
  const row = await nodeRow(ts, node.uuid);
  return JSON.stringify([await countRows(ts, 'nodes'), await countRows(ts, 'ports'), row?.version, row?.properties]);
}

describe('bad input matrix', () => {
  const cases: Array<[string, string, string, unknown, number, Record<string, string>?]> = [
    ['malformed JSON on create', 'POST', '/v1/nodes', '{"driver": ', 400],
    ['malformed JSON on patch', 'PATCH', '/v1/nodes/victim', '[{"op":', 400],
    ['malformed JSON on power', 'PUT', '/v1/nodes/victim/states/power', '{target: power on}', 400],
    ['array instead of object', 'POST', '/v1/nodes', [{ driver: 'fake-hardware' }], 400],
    ['object instead of patch array', 'PATCH', '/v1/nodes/victim', { op: 'add', path: '/extra/a', value: 1 }, 400],
    ['empty patch', 'PATCH', '/v1/nodes/victim', [], 400],
    ['unknown patch op', 'PATCH', '/v1/nodes/victim', [{ op: 'move', from: '/extra', path: '/properties' }], 400],
    ['bad patch path', 'PATCH', '/v1/nodes/victim', [{ op: 'add', path: 'extra/a', value: 1 }], 400],
    ['empty create body', 'POST', '/v1/nodes', '', 400],
    ['missing driver', 'POST', '/v1/nodes', { name: 'x' }, 400],
    ['unknown node field', 'POST', '/v1/nodes', { driver: 'fake-hardware', colour: 'blue' }, 400],
    ['wrong type: driver', 'POST', '/v1/nodes', { driver: 42 }, 400],
    ['wrong type: properties', 'POST', '/v1/nodes', { driver: 'fake-hardware', properties: [1, 2] }, 400],
    ['wrong type: maintenance', 'POST', '/v1/nodes', { driver: 'fake-hardware', maintenance: 'perhaps' }, 400],
    ['over-long resource_class', 'POST', '/v1/nodes', { driver: 'fake-hardware', resource_class: 'x'.repeat(81) }, 400],
    ['over-long description', 'POST', '/v1/nodes', { driver: 'fake-hardware', description: 'x'.repeat(4097) }, 400],
    ['bad uuid in body', 'POST', '/v1/nodes', { driver: 'fake-hardware', instance_uuid: 'nope' }, 400],
    ['patch with wrong type', 'PATCH', '/v1/nodes/victim', [{ op: 'replace', path: '/properties', value: 'cpus=4' }], 400],
    ['patch unknown root', 'PATCH', '/v1/nodes/victim', [{ op: 'add', path: '/colour', value: 'x' }], 400],
    ['power: wrong type', 'PUT', '/v1/nodes/victim/states/power', { target: 1 }, 400],
    ['provision: wrong type', 'PUT', '/v1/nodes/victim/states/provision', { target: ['manage'] }, 400],
    ['provision: unknown field', 'PUT', '/v1/nodes/victim/states/provision', { target: 'manage', force: true }, 400],
    ['traits: not a list', 'PUT', '/v1/nodes/victim/traits', { traits: 'CUSTOM_A' }, 400],
    ['port: bad MAC', 'POST', '/v1/ports', { node_uuid: '52ee1c4a-0000-4000-8000-000000000000', address: '12345' }, 400],
    ['port: bad node uuid', 'POST', '/v1/ports', { node_uuid: 'victim', address: '52:54:00:00:00:77' }, 400],
    ['port: unknown field', 'POST', '/v1/ports', { node_uuid: 'x', address: 'y', vlan: 5 }, 400],
    ['port: patch internal_info', 'PATCH', '/v1/ports/PORT', [{ op: 'add', path: '/internal_info/a', value: 1 }], 400],
    ['port ident is a MAC', 'GET', '/v1/ports/52:54:00:12:34:56', undefined, 400],
    ['node ident with bad characters', 'GET', '/v1/nodes/a%20b', undefined, 400],
    ['unknown query parameter', 'GET', '/v1/ports?colour=red', undefined, 400],
    ['unknown route', 'GET', '/v1/nodes/victim/levitate', undefined, 404],
    ['unknown resource', 'GET', '/v1/chassis-of-doom', undefined, 404],
    [
      'form-encoded body (parsed as JSON, as Ironic)',
      'POST',
      '/v1/nodes',
      'driver=fake-hardware',
      400,
      { 'content-type': 'application/x-www-form-urlencoded' },
    ],
    ['empty body with octet-stream', 'POST', '/v1/nodes', '', 400, { 'content-type': 'application/octet-stream' }],
  ];

  it.each(cases)('%s → %i, nothing written', async (_name, method, path, body, status, headers) => {
    const before = await snapshot();
    const res = await bm(ts, p.admin, method, path.replace('PORT', port.uuid), body, '1.78', headers ?? {});
    expectError(res, status);
    expect(await snapshot()).toBe(before);
  });

  it('refuses an oversized body with 413', async () => {
    const before = await snapshot();
    const huge = { driver: 'fake-hardware', extra: { blob: 'x'.repeat(ts.config.maxBodyBytes + 10) } };
    expectError(await bm(ts, p.admin, 'POST', '/v1/nodes', huge), 413);
    expect(await snapshot()).toBe(before);
  });

  it('refuses JSON with prototype-polluting keys', async () => {
    const before = await snapshot();
    const res = await bm(ts, p.admin, 'POST', '/v1/nodes', '{"driver":"fake-hardware","extra":{"__proto__":{"x":1}}}');
    expect(res.status).toBe(400);
    expect(await snapshot()).toBe(before);
  });
});

describe('random bodies', () => {
  it('never yield a 5xx, on create, patch and state endpoints', async () => {
    const targets: Array<[string, string]> = [
      ['POST', '/v1/nodes'],
      ['PATCH', '/v1/nodes/victim'],
      ['PUT', '/v1/nodes/victim/states/provision'],
      ['PUT', '/v1/nodes/victim/states/power'],
      ['POST', '/v1/ports'],
      ['PATCH', `/v1/ports/PORT`],
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...targets), fc.jsonValue({ maxDepth: 3 }), async ([method, path], body) => {
        const res = await bm(ts, p.admin, method, path.replace('PORT', port.uuid), JSON.stringify(body));
        expect(res.status, `${method} ${path} ${JSON.stringify(body)} → ${res.text}`).toBeLessThan(500);
        if (res.status >= 400) expect(typeof res.body.error_message).toBe('string');
      }),
      { numRuns: 120 },
    );
  });
});
