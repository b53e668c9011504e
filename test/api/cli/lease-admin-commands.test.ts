/**
 * `esi lease policy …`, `esi webhook …` and `esi console auth token …` end to end against a test
 * server, for each persona (admin, owner o1, lessee l1, another project o2, and a caller without
 * credentials): what each may do, what each sees, and the one-line refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { esi, esiJson, personaEnv, type LoginName } from './support.ts';

let ts: TestServer;
let personas: Personas;
let node: string;
const env = (name: LoginName) => personaEnv(ts, name);
/** No credentials at all: the anonymous caller. */
const anonymous = () => ({ OS_AUTH_URL: `${ts.url}/identity/v3` });

beforeAll(async () => {
  ts = await startTestServer();
  personas = await createPersonas(ts);
  const res = await call(
    ts,
    personas.admin,
    'POST',
    '/baremetal/v1/nodes',
    { name: 'node-1', driver: 'fake-hardware', owner: personas.owner.projectId, resource_class: 'baremetal' },
    { 'x-openstack-ironic-api-version': '1.78' },
  );
  if (res.status !== 201) throw new Error(res.text);
  node = res.body.uuid;
});
afterAll(async () => ts?.close());

describe('esi lease policy', () => {
  it('the owner creates, shows, sets and lists its policies; -c before the write', async () => {
    const bad = await esi(['lease', 'policy', 'create', '--max-lease-seconds', '3600', '-c', 'nope'], env('owner'));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/No recognized column names/);
    expect((await esiJson(['lease', 'policy', 'list'], env('owner'))) as unknown[]).toEqual([]);

    const created = await esiJson(
      ['lease', 'policy', 'create', '--node', 'node-1', '--max-lease-seconds', '3600', '--allowed-project', 'l1', '--erase-devices'],
      env('owner'),
    );
    expect(created).toMatchObject({
      resource_uuid: node,
      max_lease_seconds: 3600,
      allowed_projects: [personas.lessee.projectId],
      erase_devices: true,
    });
    const uuid: string = created.uuid;
    const set = await esiJson(['lease', 'policy', 'set', uuid, '--max-lease-seconds', 'none', '--any-project'], env('owner'));
    expect(set).toMatchObject({ uuid, max_lease_seconds: null, allowed_projects: null, erase_devices: true });
    const value = await esi(['lease', 'policy', 'list', '-f', 'value', '-c', 'uuid'], env('owner'));
    expect(value.stdout).toBe(`${uuid}\n`);
    expect((await esiJson(['lease', 'policy', 'show', uuid], env('admin'))).uuid).toBe(uuid);

    // step: a lessee may not create one; another project sees none and gets 404; anonymous is refused
    const lessee = await esi(['lease', 'policy', 'create', '--max-lease-seconds', '60'], env('lessee'));
    expect(lessee.code).toBe(1);
    expect(lessee.stderr).toMatch(/^esi: user "lessee1" in project "l1" .*may not POST \/lease\/v1\/lease_policies.*\(HTTP 403\)\n$/);
    const table = await esi(['lease', 'policy', 'list'], env('other'));
    expect(table.stdout.split('\n').filter((l) => l.startsWith('|'))).toEqual([expect.stringMatching(/^\| UUID +\| Project/)]);
    const hidden = await esi(['lease', 'policy', 'show', uuid], env('other'));
    expect(hidden.stderr).toMatch(/\(HTTP 404\)\n$/);
    const anon = await esi(['lease', 'policy', 'list'], anonymous());
    expect(anon.code).toBe(1);
    expect(anon.stderr).toMatch(/^esi: set OS_USERNAME/);

    // step: the owner deletes it
    const r = await esi(['lease', 'policy', 'delete', uuid], env('owner'));
    expect(r.stdout).toBe(`Deleted lease policy ${uuid}\n`);
    expect((await esi(['lease', 'policy', 'show', uuid], env('owner'))).stderr).toMatch(/\(HTTP 404\)/);
  });
});

describe('esi webhook', () => {
  const secret = 'a-secret-of-enough-length-1234';

  it('a lessee registers one for its project; the secret never comes back', async () => {
    const created = await esiJson(
      ['webhook', 'create', 'https://hooks.example.org/esi', '--secret', secret, '--name', 'chat', '--event-type', 'esi_leap.lease.create'],
      env('lessee'),
    );
    expect(created).toMatchObject({ name: 'chat', url: 'https://hooks.example.org/esi', secret: '******', enabled: true });
    expect(JSON.stringify(created)).not.toContain(secret);
    const uuid: string = created.uuid;
    const disabled = await esiJson(['webhook', 'set', uuid, '--disable'], env('lessee'));
    expect(disabled.enabled).toBe(false);
    expect((await esiJson(['webhook', 'list'], env('lessee'))).map((w: any) => w.UUID)).toEqual([uuid]);
    expect(await esiJson(['webhook', 'deliveries', uuid], env('lessee'))).toEqual([]);

    // step: admin sees it; another project neither lists nor shows it; nothing to set is refused before sending
    expect((await esiJson(['webhook', 'list'], env('admin'))).map((w: any) => w.UUID)).toContain(uuid);
    expect(await esiJson(['webhook', 'list'], env('other'))).toEqual([]);
    expect((await esi(['webhook', 'show', uuid], env('other'))).stderr).toMatch(/\(HTTP 404\)\n$/);
    expect((await esi(['webhook', 'delete', uuid], env('other'))).stderr).toMatch(/\(HTTP 404\)\n$/);
    const nothing = await esi(['webhook', 'set', uuid], env('lessee'));
    expect(nothing.stderr).toMatch(/^esi: Nothing to set/);
    expect((await esi(['webhook', 'list'], anonymous())).code).toBe(1);

    // step: the lessee deletes it
    expect((await esi(['webhook', 'delete', uuid], env('lessee'))).stdout).toBe(`Deleted webhook ${uuid}\n`);
    expect(await esiJson(['webhook', 'list'], env('lessee'))).toEqual([]);
  });
});

describe('esi console auth token', () => {
  it('the owner and admin get a token and its websocket URL; it is revoked by delete', async () => {
    const tok = await esiJson(['console', 'auth', 'token', 'create', 'node-1', '--ttl', '120'], env('owner'));
    expect(tok.node_uuid).toBe(node);
    expect(tok.access_url).toMatch(/^ws:\/\/.*\/lease\/console\?token=/);
    const url = await esi(['console', 'auth', 'token', 'create', node, '-f', 'value', '-c', 'access_url'], env('admin'));
    expect(url.stdout).toMatch(/^ws:\/\/\S+\n$/);
    const del = await esi(['console', 'auth', 'token', 'delete', 'node-1'], env('owner'));
    expect(del.stdout).toBe('Deleted console tokens of node node-1\n');
  });

  it('a project without the node gets 404; a bad --ttl is refused before sending; anonymous is refused', async () => {
    for (const who of ['lessee', 'other'] as const) {
      const r = await esi(['console', 'auth', 'token', 'create', 'node-1'], env(who));
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/\(HTTP 404\)\n$/);
    }
    expect((await esi(['console', 'auth', 'token', 'create', 'node-1', '--ttl', '0'], env('owner'))).stderr).toMatch(/--ttl takes/);
    expect((await esi(['console', 'auth', 'token', 'delete', 'node-1'], anonymous())).code).toBe(1);
  });
});
