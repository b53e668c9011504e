/**
 * Pagination and sorting of node and port lists (https://docs.openstack.org/api-ref/baremetal/#list-nodes): `limit`, `marker`,
 * the `next` link (present only on full pages, carrying the request's other parameters),
 * `sort_key`/`sort_dir`, and the `instance_uuid` special case.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, createNode, createPort, expectError } from './helpers.ts';

let ts: TestServer;
let p: Personas;
const made: any[] = [];

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
  for (let i = 0; i < 7; i++) {
    made.push(
      await createNode(ts, p, {
        name: `page-${String.fromCharCode(103 - i)}`,
        resource_class: i % 2 ? 'odd' : 'even',
        lessee: i < 3 ? p.lessee.projectId : null,
      }),
    );
  }
  for (let i = 0; i < 5; i++) await createPort(ts, p, made[0].uuid, `52:54:00:00:10:0${i}`);
});
afterAll(async () => ts?.close());

/** Follow `next` links from a first page; return every page's names. */
async function walk(first: string): Promise<string[][]> {
  const pages: string[][] = [];
  let url: string | undefined = first;
  while (url !== undefined) {
    const r: { status: number; text: string; body: any } = await bm(ts, p.admin, 'GET', url);
    expect(r.status, r.text).toBe(200);
    pages.push(r.body.nodes.map((n: any) => n.name));
    url = r.body.next ? r.body.next.slice(`${ts.url}/baremetal`.length) : undefined;
    expect(pages.length).toBeLessThan(10);
  }
  return pages;
}

describe('node pagination', () => {
  it('pages in creation order by default and stops when a page is short', async () => {
    const pages = await walk('/v1/nodes?limit=3');
    expect(pages).toEqual([['page-g', 'page-f', 'page-e'], ['page-d', 'page-c', 'page-b'], ['page-a']]);
  });

  it('emits next only on full pages, with limit, marker and the other parameters', async () => {
    const r = await bm(ts, p.admin, 'GET', '/v1/nodes/detail?resource_class=even&limit=2&sort_dir=asc');
    expect(r.body.next).toBe(`${ts.url}/baremetal/v1/nodes/detail?resource_class=even&sort_dir=asc&limit=2&marker=${r.body.nodes[1].uuid}`);
    expect((await walk('/v1/nodes?resource_class=even&limit=2&fields=name')).flat()).toEqual(['page-g', 'page-e', 'page-c', 'page-a']);
    const exact = await bm(ts, p.admin, 'GET', '/v1/nodes?limit=7');
    expect(exact.body.nodes).toHaveLength(7);
    expect(exact.body.next).toBeDefined();
    const empty = await bm(ts, p.admin, 'GET', `/v1/nodes?limit=7&marker=${exact.body.nodes[6].uuid}`);
    expect(empty.body).toEqual({ nodes: [] });
  });

  it('sorts by a key in either direction, with the marker honouring the sort', async () => {
    expect((await walk('/v1/nodes?sort_key=name&limit=3')).flat()).toEqual([
      'page-a',
      'page-b',
      'page-c',
      'page-d',
      'page-e',
      'page-f',
      'page-g',
    ]);
    expect((await walk('/v1/nodes?sort_key=name&sort_dir=desc&limit=4')).flat()).toEqual([
      'page-g',
      'page-f',
      'page-e',
      'page-d',
      'page-c',
      'page-b',
      'page-a',
    ]);
    const byClass = (await walk('/v1/nodes?sort_key=resource_class&limit=2')).flat();
    expect(byClass).toEqual(['page-g', 'page-e', 'page-c', 'page-a', 'page-f', 'page-d', 'page-b']);
  });

  it('caps limit at 1000 and refuses unknown or invisible markers with 404', async () => {
    expect((await bm(ts, p.admin, 'GET', '/v1/nodes?limit=5000')).body.nodes).toHaveLength(7);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?marker=6f1d4c1e-0000-4000-8000-000000000000'), 404);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?marker=not-a-uuid'), 400);
    expectError(await bm(ts, p.lessee, 'GET', `/v1/nodes?marker=${made[6].uuid}`), 404);
    const l = await bm(ts, p.lessee, 'GET', '/v1/nodes?limit=2');
    expect(l.body.nodes.map((n: any) => n.name)).toEqual(['page-g', 'page-f']);
    const l2 = await bm(ts, p.lessee, 'GET', l.body.next.slice(`${ts.url}/baremetal`.length));
    expect(l2.body.nodes.map((n: any) => n.name)).toEqual(['page-e']);
  });

  it('never returns next for an instance_uuid lookup', async () => {
    const iu = '7a7a7a7a-0000-4000-8000-000000000001';
    await bm(ts, p.admin, 'PATCH', `/v1/nodes/${made[3].uuid}`, [{ op: 'add', path: '/instance_uuid', value: iu }]);
    const r = await bm(ts, p.admin, 'GET', `/v1/nodes?instance_uuid=${iu}&limit=1`);
    expect(r.body.nodes.map((n: any) => n.name)).toEqual(['page-d']);
    expect(r.body.next).toBeUndefined();
  });
});

describe('port pagination', () => {
  it('pages ports with next links, also under a node', async () => {
    const first = await bm(ts, p.admin, 'GET', '/v1/ports?limit=2');
    expect(first.body.ports.map((x: any) => x.address)).toEqual(['52:54:00:00:10:00', '52:54:00:00:10:01']);
    expect(first.body.next).toBe(`${ts.url}/baremetal/v1/ports?limit=2&marker=${first.body.ports[1].uuid}`);
    const sub = await bm(ts, p.admin, 'GET', `/v1/nodes/${made[0].uuid}/ports?limit=4&sort_key=address&sort_dir=desc`);
    expect(sub.body.ports.map((x: any) => x.address)).toEqual([
      '52:54:00:00:10:04',
      '52:54:00:00:10:03',
      '52:54:00:00:10:02',
      '52:54:00:00:10:01',
    ]);
    expect(sub.body.next).toContain(`/v1/nodes/${made[0].uuid}/ports?sort_key=address&sort_dir=desc&limit=4&marker=`);
    const rest = await bm(ts, p.admin, 'GET', sub.body.next.slice(`${ts.url}/baremetal`.length));
    expect(rest.body.ports.map((x: any) => x.address)).toEqual(['52:54:00:00:10:00']);
    expectError(await bm(ts, p.admin, 'GET', '/v1/ports?sort_key=extra'), 400);
  });
});

describe('cached renderings stay exact', () => {
  it('a changed node is re-rendered, and each caller keeps its own view', async () => {
    const detail = async (who = p.admin) => (await bm(ts, who, 'GET', '/v1/nodes/detail')).body.nodes;
    const target = made[0]; // leased by l1
    await detail();
    await detail();
    await bm(ts, p.admin, 'PATCH', `/v1/nodes/${target.uuid}`, [{ op: 'add', path: '/extra/round', value: 2 }]);
    expect((await detail()).find((n: any) => n.uuid === target.uuid).extra).toEqual({ round: 2 });
    await ts.server.services.inventory.nodeRepository.reserve(target.uuid, 'cond-cache');
    expect((await detail()).find((n: any) => n.uuid === target.uuid).reservation).toBe('cond-cache');
    const lesseeView = (await detail(p.lessee)).find((n: any) => n.uuid === target.uuid);
    expect(lesseeView.reservation).toMatch(/Redacted/);
    expect((await detail(p.owner)).find((n: any) => n.uuid === target.uuid).reservation).toBe('cond-cache');
    await ts.server.services.inventory.nodeRepository.release(target.uuid, 'cond-cache');
    expect((await detail()).find((n: any) => n.uuid === target.uuid).reservation).toBeNull();
    const old = (await bm(ts, p.admin, 'GET', '/v1/nodes/detail', undefined, '1.40')).body.nodes[0];
    expect(old.lessee).toBeUndefined();
  });
});
