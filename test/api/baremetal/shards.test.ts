/**
 * Node shards (API 1.82, Ironic 21.4): the node's `shard` field (shown from 1.82, set by the
 * admin only: `baremetal:node:update:shard`), the node list filters `?shard=` and `?sharded=`,
 * and `GET /v1/shards` (counts per shard, nodes without one under "None" as Ironic shows them;
 * system-level: project callers 403; 404/405 before 1.82).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, createNode, expectError } from './helpers.ts';

let ts: TestServer;
let p: Personas;
const V = '1.82';

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
  for (const [name, shard] of [
    ['sh-a1', 'alpha'],
    ['sh-a2', 'alpha'],
    ['sh-b1', 'beta'],
    ['sh-none', null],
  ] as const) {
    await createNode(ts, p, { name });
    if (shard !== null) {
      const r = await bm(ts, p.admin, 'PATCH', `/v1/nodes/${name}`, [{ op: 'add', path: '/shard', value: shard }], V);
      expect(r.status, r.text).toBe(200);
    }
  }
});
afterAll(async () => ts?.close());

const listNames = async (query: string, who = p.admin, v = V) => {
  const r = await bm(ts, who, 'GET', `/v1/nodes${query}`, undefined, v);
  expect(r.status, r.text).toBe(200);
  return r.body.nodes.map((n: any) => n.name).sort();
};

describe('the shard field', () => {
  it('is shown from 1.82 and set by the admin; the owner may not set it (403), nothing changes', async () => {
    expect((await bm(ts, p.admin, 'GET', '/v1/nodes/sh-a1', undefined, V)).body.shard).toBe('alpha');
    expect((await bm(ts, p.owner, 'GET', '/v1/nodes/sh-a1', undefined, V)).body.shard).toBe('alpha');
    expect((await bm(ts, p.admin, 'GET', '/v1/nodes/sh-a1', undefined, '1.81')).body.shard).toBeUndefined();
    expectError(await bm(ts, p.owner, 'PATCH', '/v1/nodes/sh-a1', [{ op: 'replace', path: '/shard', value: 'mine' }], V), 403);
    expectError(await bm(ts, p.admin, 'PATCH', '/v1/nodes/sh-a1', [{ op: 'replace', path: '/shard', value: 'x' }], '1.81'), 406);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?fields=shard', undefined, '1.81'), 406);
    expect((await bm(ts, p.admin, 'GET', '/v1/nodes/sh-a1', undefined, V)).body.shard).toBe('alpha');
  });
});

describe('node list filters', () => {
  it('?shard= takes a comma-separated list; ?sharded= nodes with or without a shard', async () => {
    expect(await listNames('?shard=alpha')).toEqual(['sh-a1', 'sh-a2']);
    expect(await listNames('?shard=alpha,beta')).toEqual(['sh-a1', 'sh-a2', 'sh-b1']);
    expect(await listNames('?shard=gamma')).toEqual([]);
    expect(await listNames('?sharded=true')).toEqual(['sh-a1', 'sh-a2', 'sh-b1']);
    expect(await listNames('?sharded=false')).toEqual(['sh-none']);
    expect(await listNames('/detail?sharded=false&shard=alpha')).toEqual([]);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?sharded=maybe', undefined, V), 400, /sharded/);
  });

  it('are 406 before 1.82, and keep filtering a project caller’s list to its own nodes', async () => {
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?shard=alpha', undefined, '1.81'), 406, /1\.82/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?sharded=true', undefined, '1.81'), 406, /1\.82/);
    expect(await listNames('?shard=alpha', p.owner)).toEqual(['sh-a1', 'sh-a2']);
    expect(await listNames('?shard=alpha', p.other)).toEqual([]);
  });
});

describe('GET /v1/shards', () => {
  it('counts the nodes of each shard, most first; nodes without a shard are "None", as Ironic shows them', async () => {
    const r = await bm(ts, p.admin, 'GET', '/v1/shards', undefined, V);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({
      shards: [
        { name: 'alpha', count: 2 },
        { name: 'None', count: 1 },
        { name: 'beta', count: 1 },
      ],
    });
    expect((await bm(ts, p.admin, 'GET', '/v1/shards', undefined, 'latest')).body).toEqual(r.body);
    expect((await bm(ts, p.anonymous, 'GET', '/v1', undefined, V)).body.shards[0].href).toBe(`${ts.url}/baremetal/v1/shards/`);
  });

  it('is system-level: project callers 403, anonymous 401; one shard is no resource; parameters 400', async () => {
    for (const who of [p.owner, p.lessee, p.other]) expectError(await bm(ts, who, 'GET', '/v1/shards', undefined, V), 403);
    expectError(await bm(ts, p.anonymous, 'GET', '/v1/shards', undefined, V), 401);
    expectError(await bm(ts, p.admin, 'GET', '/v1/shards/alpha', undefined, V), 404);
    expectError(await bm(ts, p.admin, 'GET', '/v1/shards?limit=1', undefined, V), 400, /Unexpected arguments: limit/);
  });

  it('does not exist before 1.82 (GET 404, POST 405, webob’s shape); other methods are 405 with Allow: GET', async () => {
    const old = await bm(ts, p.admin, 'GET', '/v1/shards', undefined, '1.81');
    expect(old.status).toBe(404);
    expect(JSON.parse(old.body.error_message)).toEqual({
      code: 404,
      title: 'Not Found',
      description: 'The API version does not allow shards',
    });
    const post = await bm(ts, p.admin, 'POST', '/v1/shards', {}, '1.81');
    expect(post.status).toBe(405);
    expect(JSON.parse(post.body.error_message).description).toBe('The API version does not allow shards');
    const now = await bm(ts, p.admin, 'DELETE', '/v1/shards', undefined, V);
    expect(now.status).toBe(405);
    expect(now.headers.get('allow')).toBe('GET');
    expect(JSON.parse(now.body.error_message)).toEqual({ code: 405, title: 'Method Not Allowed', description: '' });
  });
});
