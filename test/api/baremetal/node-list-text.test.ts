/**
 * Full node lists rendered from stored display documents (migration 0006, src/api/baremetal/node-document.ts, spliced
 * into a template by src/api/baremetal/render-text.ts) on a real database, SQLite and
 * PostgreSQL:
 *
 * - every node of `GET /v1/nodes?detail=True` (and `/v1/nodes/detail`) equals, key for key and
 *   in order, the same node shown with every field through the straightforward renderer
 *   (`GET /v1/nodes/{uuid}?fields=…`, never cached), for every persona and several
 *   microversions — secrets masked, redaction notices for the lessee;
 * - every write keeps a node's document valid (field changes rewrite it; reservations and port
 *   changes keep it), and a document that is stale, made by other code or missing (rows from
 *   before the migration) is never shown: reads rebuild the node's text from its columns, and
 *   `refreshDisplays` rewrites such documents.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_TEXT_REVISION } from '../../../src/api/baremetal/node-document.ts';
import { readFullNodePage } from '../../../src/api/baremetal/node-list-read.ts';
import { NodeRenderCache } from '../../../src/api/baremetal/render-cache.ts';
import type { KyselyNodeRepository } from '../../../src/store/inventory/node-repository.ts';
import { createPersonas, startTestServer, type Persona, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, createNode, createPort, forceNode, nodeRow } from './helpers.ts';

const SECRET = 'Sup3r-Secret-Value-42';
const LINK_LISTS = ['ports', 'states', 'portgroups', 'volume'];
let ts: TestServer;
let p: Personas;
const uuids: string[] = [];
const repo = () => ts.server.services.inventory.nodeRepository as KyselyNodeRepository;

/** True when the node's stored document is the one readers may use. */
async function documentValid(uuid: string): Promise<boolean> {
  const row = (await nodeRow(ts, uuid))!;
  return row.display_version === row.version && row.display_rev === NODE_TEXT_REVISION && typeof row.display === 'string';
}

/** Bump a node's row version straight in the database (so no cached rendering can answer). */
async function touchRow(uuid: string, set: Record<string, unknown> = {}): Promise<void> {
  await ts.server.services.store.db
    .updateTable('nodes')
    .set({ ...set, version: sql`version + 1` } as never)
    .where('uuid', '=', uuid)
    .execute();
}

/** The detail list as `persona` at `version`, by uuid; the raw text must hold no secret. */
async function detail(persona: Persona | null, version: string, path = '/v1/nodes?detail=True'): Promise<Map<string, any>> {
  const res = await bm(ts, persona, 'GET', path, undefined, version);
  expect(res.status, res.text).toBe(200);
  expect(res.text).not.toContain(SECRET);
  return new Map((res.body.nodes as any[]).map((n) => [n.uuid, n]));
}

beforeAll(async () => {
  ts = await startTestServer({ env: { ESI_CONDUCTOR_WORKERS: '0' } });
  p = await createPersonas(ts);
  const a = await createNode(ts, p, {
    name: 'text-a',
    description: 'naïve "quoted" \\ back\u0001slash 漢字',
    driver_info: {
      redfish_address: 'https://10.0.0.1',
      redfish_username: 'root',
      redfish_password: SECRET,
      nested: { api_token: SECRET },
      note: `password=${SECRET} user=x`,
    },
    instance_info: { image_source: 'http://img', configdrive: SECRET, image_url: SECRET, admin_password: SECRET },
    properties: { cpus: 8, memory_mb: 4096, capabilities: 'boot_mode:uefi' },
    extra: { rack: 'r1', list: [1, 'two', { three: null }] },
  });
  const b = await createNode(ts, p, { name: 'text-b', lessee: null });
  const c = await createNode(ts, p, { name: 'text-c', driver_info: {} });
  uuids.push(a.uuid, b.uuid, c.uuid);
  await forceNode(ts, a.uuid, {
    driver_internal_info: { agent_secret_token: SECRET, clean_steps: [{ step: 'erase' }] },
    last_error: 'boom "bad"',
    provision_state: 'inspect wait',
  });
  await forceNode(ts, c.uuid, {
    reservation: 'conductor-1',
    maintenance: true,
    maintenance_reason: 'fix',
    automated_clean: false,
    secure_boot: true,
    inspection_started_at: 1_700_000_000_123,
  });
  await bm(ts, p.admin, 'PUT', `/v1/nodes/${b.uuid}/traits`, { traits: ['CUSTOM_B', 'CUSTOM_A'] });
});
afterAll(async () => ts?.close());

describe('detail lists from display forms', () => {
  it.each([
    ['admin', '1.82'],
    ['admin', '1.78'],
    ['admin', '1.50'],
    ['admin', '1.43'],
    ['owner', '1.82'],
    ['lessee', '1.82'],
    ['lessee', '1.65'],
    ['other', '1.82'],
  ] as const)('as %s at %s: each node equals its straightforward rendering', async (who, version) => {
    const persona = p[who];
    const listed = await detail(persona, version);
    const expectedVisible = who === 'other' ? [] : who === 'lessee' ? [uuids[0], uuids[2]] : uuids;
    expect([...listed.keys()].filter((u) => uuids.includes(u)).sort()).toEqual([...expectedVisible].sort());
    const fields = Object.keys(listed.get(uuids[0]!) ?? listed.values().next().value ?? {}).filter(
      (k) => k !== 'links' && !LINK_LISTS.includes(k),
    );
    for (const [uuid, node] of listed) {
      if (!uuids.includes(uuid)) continue;
      const shown = await bm(ts, persona, 'GET', `/v1/nodes/${uuid}?fields=${fields.join(',')}`, undefined, version);
      expect(shown.status, shown.text).toBe(200);
      const { ports: _p, states: _s, portgroups: _g, volume: _v, ...rest } = node;
      expect(rest).toEqual(shown.body);
      expect(Object.keys(rest)).toEqual(Object.keys(shown.body));
    }
    if (who === 'lessee') {
      const a = listed.get(uuids[0]!);
      expect(a.driver_info).toEqual({ content: expect.stringMatching(/Redacted/) });
      expect(a.last_error).toMatch(/Redacted/);
    }
    if (who === 'admin' && version === '1.82') {
      const a = listed.get(uuids[0]!);
      expect(a.driver_info.redfish_password).toBe('******');
      expect(a.driver_info.nested.api_token).toBe('******');
      expect(a.driver_info.note).toBe('password=****** user=x');
      expect(a.instance_info).toMatchObject({
        configdrive: '******',
        image_url: '******',
        admin_password: '******',
        image_source: 'http://img',
      });
      expect(a.driver_internal_info.agent_secret_token).toBe('******');
      expect(a.provision_state).toBe('inspect wait');
    }
  });

  it('old versions use /v1/nodes/detail with legacy states, and anonymous callers get 401', async () => {
    const listed = await detail(p.admin, '1.38', '/v1/nodes/detail');
    expect(listed.get(uuids[0]!).provision_state).toBe('inspecting');
    expect(Object.keys(listed.get(uuids[0]!))).not.toContain('owner');
    expect((await bm(ts, null, 'GET', '/v1/nodes?detail=True', undefined, '1.82')).status).toBe(401);
  });
});

describe('stored display documents', () => {
  it('are written with every change and stay valid across reservations and port changes', async () => {
    const uuid = uuids[1]!;
    expect(await documentValid(uuid)).toBe(true);
    expect(
      (await bm(ts, p.admin, 'PATCH', `/v1/nodes/${uuid}`, [{ op: 'add', path: '/extra/colour', value: 'teal' }], '1.82')).status,
    ).toBe(200);
    expect(await documentValid(uuid)).toBe(true);
    expect((await nodeRow(ts, uuid))!.display).toContain('"colour":"teal"');
    const port = await createPort(ts, p, uuid, '52:54:00:aa:bb:01');
    expect(await documentValid(uuid)).toBe(true);
    expect((await bm(ts, p.admin, 'DELETE', `/v1/ports/${port.uuid}`)).status).toBe(204);
    expect(await documentValid(uuid)).toBe(true);
    expect(await repo().reserve(uuid, 'conductor-9')).toBe(true);
    expect(await documentValid(uuid)).toBe(true);
    expect((await detail(p.admin, '1.82')).get(uuid).reservation).toBe('conductor-9');
    await repo().release(uuid, 'conductor-9');
    expect(await documentValid(uuid)).toBe(true);
    const listed = (await detail(p.admin, '1.82')).get(uuid);
    expect(listed.reservation).toBeNull();
    expect(listed.extra.colour).toBe('teal');
    for (const u of uuids) {
      const row = (await nodeRow(ts, u))!;
      expect(row.display).not.toContain(SECRET);
    }
  });

  it.each([
    ['made by other code', (v: number) => ({ display_rev: 'other-code', display_version: v + 1 })],
    [
      'made for an older version (a write interrupted between its statements)',
      (v: number) => ({ display_rev: NODE_TEXT_REVISION, display_version: v }),
    ],
    ['missing (a row from before migration 0006)', () => ({ display: null, display_rev: null, display_version: null })],
  ] as const)('%s: never shown, rebuilt by the refresh', async (_what, stale) => {
    const uuid = uuids[0]!;
    const before = (await detail(p.admin, '1.82')).get(uuid);
    const version = (await nodeRow(ts, uuid))!.version as number;
    // A planted document that would leak a secret and lie about the node, were it used.
    await touchRow(uuid, { display: `"uuid":"${uuid}"\u0001"driver_info":{"redfish_password":"${SECRET}"}`, ...stale(version) });
    const after = (await detail(p.admin, '1.82')).get(uuid);
    expect(after).toEqual({ ...before, updated_at: after.updated_at });
    expect(after.driver_info.redfish_password).toBe('******');
    expect(await documentValid(uuid)).toBe(false);
    expect(await repo().refreshDisplays()).toBe(1);
    expect(await documentValid(uuid)).toBe(true);
    expect((await nodeRow(ts, uuid))!.display).not.toContain(SECRET);
    expect(await repo().refreshDisplays()).toBe(0);
  });

  it('read in one query (expected misses) or two, a page holds the same node texts, a stale document rebuilt either way', async () => {
    const uuid = uuids[2]!;
    const version = (await nodeRow(ts, uuid))!.version as number;
    await touchRow(uuid, {
      display: `"uuid":"${uuid}","driver_info":{"redfish_password":"${SECRET}"}`,
      display_rev: 'other-code',
      display_version: version + 1,
    });
    const list = (expectMisses: boolean) => {
      // An empty cache: every node is rendered, read in one query when the cache expects it.
      const cache = new NodeRenderCache();
      if (expectMisses) cache.notePage(1, 1);
      const request = { filters: {}, limit: 1000, marker: null, sortKey: 'id', sortDir: 'asc', fields: null, withConductor: true } as const;
      const { inventory, nodeDocuments } = ts.server.services;
      return readFullNodePage(inventory.nodes, nodeDocuments, cache, p.admin.context!, request, 82);
    };
    const one = await list(true);
    const two = await list(false);
    expect(one.map((v) => v.node.uuid)).toEqual(two.map((v) => v.node.uuid));
    expect(one.map((v) => v.text)).toEqual(two.map((v) => v.text));
    expect(one.map((v) => [v.redaction, v.conductor])).toEqual(two.map((v) => [v.redaction, v.conductor]));
    const stale = one.find((v) => v.node.uuid === uuid)!;
    expect(stale.text!.members).not.toContain(SECRET);
    expect(stale.text!.members).toContain('"resource_class"');
    expect(await repo().refreshDisplays()).toBe(1);
  });
});
