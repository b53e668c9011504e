/**
 * `esi lease request` and `esi quota …` end to end against a test server: the personas drive
 * `node bin/esi.js …` with their OS_* credentials. A request by `--property` filters or by
 * several `--group`s leases all or nothing; an unsatisfiable one fails with the earliest window;
 * quotas are set by admins and shown to the project.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { esi, esiJson, personaEnv, type LoginName } from './support.ts';

let ts: TestServer;
let personas: Personas;
const env = (name: LoginName) => personaEnv(ts, name);
const DAY = 86_400_000;
const start = Math.ceil((Date.now() + 5 * DAY) / 3_600_000) * 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19);

// Each test gets a server of its own (nodes cr-gpu-1, cr-gpu-2, cr-disk-1 of o1, offered for 30 days
// from `start`): what one test leases would change the windows and the usage the others see.
beforeEach(async () => {
  ts = await startTestServer();
  personas = await createPersonas(ts);
  const hw: Array<[string, Record<string, unknown>]> = [
    ['cr-gpu-1', { memory_mb: 65536, gpus: 1 }],
    ['cr-gpu-2', { memory_mb: 65536, gpus: 2 }],
    ['cr-disk-1', { memory_mb: 32768, local_gb: 2000 }],
  ];
  for (const [name, properties] of hw) {
    const n = await call(
      ts,
      personas.admin,
      'POST',
      '/baremetal/v1/nodes',
      { name, driver: 'fake-hardware', owner: personas.owner.projectId, properties },
      { 'x-openstack-ironic-api-version': '1.78' },
    );
    const o = await call(ts, personas.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: n.body.uuid,
      start_time: iso(start),
      end_time: iso(start + 30 * DAY),
    });
    expect(o.status).toBe(201);
  }
});
afterEach(async () => ts?.close());

/** l1 holds both GPU nodes for the first day (a lease request through the API). */
async function lesseeHoldsBothGpus(): Promise<void> {
  const r = await call(ts, personas.lessee, 'POST', '/lease/v1/lease_requests', {
    start_time: iso(start),
    end_time: iso(start + DAY),
    groups: [{ count: 2, properties: 'memory_mb >= 49152 and gpus >= 1' }],
  });
  expect(r.status, r.text).toBe(201);
}

describe('esi lease request', () => {
  it('one group from --count and --property filters, with --duration', async () => {
    const leases = await esiJson(
      [
        'lease',
        'request',
        '--count',
        '2',
        '--property',
        'memory_mb>=49152',
        '--property',
        'gpus>=1',
        '--start-time',
        iso(start),
        '--duration',
        '1d',
        '--name',
        'cli-req',
      ],
      env('lessee'),
    );
    expect(leases.map((l: any) => l.Resource).sort()).toEqual(['cr-gpu-1', 'cr-gpu-2']);
    expect(Object.keys(leases[0])).toEqual([
      'UUID',
      'Resource',
      'Resource Class',
      'Project',
      'Start Time',
      'End Time',
      'Offer UUID',
      'Status',
      'Purpose',
    ]);
    expect(leases[0]).toMatchObject({ Project: 'l1', 'Start Time': iso(start), 'End Time': iso(start + DAY), Status: 'created' });
  });

  it('several --group specs: all or nothing; a refusal names the group and the earliest window', async () => {
    await lesseeHoldsBothGpus();
    const groups = ['--group', '1: memory_mb >= 49152 and gpus >= 2', '--group', '1 : local_gb >= 1000'];
    const refused = await esi(
      ['lease', 'request', ...groups, '--start-time', iso(start + 12 * 3_600_000), '--duration', '12h'],
      env('other'),
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('group 1 (1 node, "memory_mb >= 49152 and gpus >= 2")');
    expect(refused.stderr).toContain(
      `The earliest window for the whole request is ${iso(start + DAY)} to ${iso(start + DAY + 12 * 3_600_000)}.`,
    );
    const ok = await esiJson(['lease', 'request', ...groups, '--start-time', iso(start + DAY), '--duration', '12h'], env('other'));
    expect(ok.map((l: any) => l.Resource)).toEqual(['cr-gpu-2', 'cr-disk-1']);
  });

  it('bad options fail before any request', async () => {
    const r = await esi(['lease', 'request', '--group', 'three: gpus >= 1'], env('lessee'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Invalid --group "three: gpus >= 1"/);
    const both = await esi(['lease', 'request', '--group', '1', '--count', '2'], env('lessee'));
    expect(both.stderr).toMatch(/Use either --group/);
  });
});

describe('esi quota', () => {
  it('admin sets limits (keeping the others), a project reads its own, others cannot set', async () => {
    await lesseeHoldsBothGpus();
    const set = await esiJson(['quota', 'set', 'l1', '--max-nodes', '5'], env('admin'));
    expect(set).toMatchObject({ project: 'l1', max_nodes: 5, max_node_hours: null, window_hours: 720 });
    const more = await esiJson(['quota', 'set', 'l1', '--max-node-hours', '100', '--window-hours', '24'], env('admin'));
    expect(more).toMatchObject({ max_nodes: 5, max_node_hours: 100, window_hours: 24 });
    const mine = await esiJson(['quota', 'show', 'l1'], env('lessee'));
    expect(mine).toMatchObject({ project: 'l1', max_nodes: 5, usage_peak_nodes: 2 });
    const listed = await esiJson(['quota', 'list'], env('lessee'));
    expect(listed).toEqual([
      {
        Project: 'l1',
        'Max Nodes': 5,
        'Max Node Hours': 100,
        'Window Hours': 24,
        'Nodes Now': 0,
        'Peak Nodes': 2,
        'Node Hours In Window': 0,
      },
    ]);
    const denied = await esi(['quota', 'set', 'l1', '--max-nodes', '50'], env('lessee'));
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain('Access was denied to esi_leap:quota:set.');
    const cleared = await esiJson(['quota', 'set', 'l1', '--max-nodes', 'none'], env('admin'));
    expect(cleared).toMatchObject({ max_nodes: null, max_node_hours: 100 });
    const del = await esi(['quota', 'delete', 'l1'], env('admin'));
    expect(del.stdout).toBe('Deleted quota of project l1\n');
    expect(await esiJson(['quota', 'list'], env('admin'))).toEqual([]);
  });
});
