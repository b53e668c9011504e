/**
 * The operations endpoints (src/api/ops; docs/operations.md): `/healthz`, `/readyz` and
 * `/metrics`, answered alike to every persona (admin, owner, lessee, another project,
 * anonymous: load balancers and Prometheus carry no token) and holding no identifiers. The
 * scrape is parsed by the Prometheus project's own text-format parser (Debian's
 * python3-prometheus-client), and its figures move when a lease starts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { at, HOUR, waitUntil } from '../lease/support.ts';
import { scrape as scrapeUrl, value, type Sample } from './prometheus.ts';

let ts: TestServer;
let p: Personas;

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
});
afterAll(async () => ts?.close());

const scrape = (): Promise<Sample[]> => scrapeUrl(ts.url);

describe('health and readiness', () => {
  it('every persona gets the same liveness and readiness answers, without identifiers', async () => {
    for (const who of [p.admin, p.owner, p.lessee, p.other, p.anonymous]) {
      const live = await call(ts, who, 'GET', '/healthz');
      expect(live.status).toBe(200);
      expect(live.body).toEqual({ status: 'ok' });
      const ready = await call(ts, who, 'GET', '/readyz');
      expect(ready.status, ready.text).toBe(200);
      expect(ready.body.status).toBe('ready');
      expect(ready.body.checks.database).toMatchObject({ ok: true, detail: expect.stringMatching(/^answered in [\d.]+ ms$/) });
      expect(ready.body.checks.migrations).toEqual({ ok: true, detail: 'every migration applied' });
      expect(ready.body.checks.conductor).toMatchObject({ ok: true, detail: expect.stringMatching(/heartbeating/) });
    }
  });

  it('a conductor whose stored heartbeat is stale is not ready (503, the check says why), and ready again once it beats', async () => {
    const inventory = ts.server.services.inventory;
    const me = ts.server.services.config.conductor.hostname;
    const [mine] = (await inventory.conductorRepository.list()).filter((c) => c.hostname === me);
    await inventory.conductorRepository.upsert(me, mine!.conductor_group, mine!.drivers, Date.now() - 10 * 60_000);
    try {
      const r = await call(ts, p.anonymous, 'GET', '/readyz');
      expect(r.status).toBe(503);
      expect(r.body.status).toBe('not ready');
      expect(r.body.checks.conductor).toEqual({
        ok: false,
        detail: `conductor ${me} has not heartbeated within its dead-after (ESI_CONDUCTOR_DEAD_AFTER)`,
      });
      expect(r.body.checks.database.ok).toBe(true);
    } finally {
      await inventory.conductorRepository.upsert(me, mine!.conductor_group, mine!.drivers, Date.now());
    }
    expect((await call(ts, p.anonymous, 'GET', '/readyz')).status).toBe(200);
  });

  it('an API-only process is ready without a conductor of its own, and says how many it sees', async () => {
    const api = await startTestServer({ roles: 'api' });
    try {
      const r = await call(api, null, 'GET', '/readyz');
      expect(r.status, r.text).toBe(200);
      expect(r.body.checks.conductor).toEqual({ ok: true, detail: 'API only; 0 live conductor(s)' });
    } finally {
      await api.close();
    }
  });
});

describe('metrics', () => {
  it('counts requests by route template and status, and shows nodes and leases that move when a lease starts', async () => {
    const node = await call(
      ts,
      p.admin,
      'POST',
      '/baremetal/v1/nodes',
      { driver: 'fake-hardware', name: 'metrics-1', owner: p.owner.projectId },
      { 'x-openstack-ironic-api-version': '1.82' },
    );
    expect(node.status, node.text).toBe(201);
    await call(ts, p.other, 'GET', `/baremetal/v1/nodes/${node.body.uuid}`, undefined, { 'x-openstack-ironic-api-version': '1.82' });
    const before = await scrape();
    // Requests are counted under the route's template, never the URL (bounded series).
    expect(
      value(before, 'esi_http_requests_total', { route: '/baremetal/v1/nodes', method: 'POST', status: '201' }),
    ).toBeGreaterThanOrEqual(1);
    expect(value(before, 'esi_http_requests_total', { route: '/baremetal/v1/nodes/:ident', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(before.some((s) => s.name === 'esi_http_request_duration_seconds_bucket')).toBe(true);
    expect(before.find((s) => s.family === 'esi_http_request_duration_seconds')?.type).toBe('histogram');
    expect(value(before, 'esi_nodes', { provision_state: 'enroll' })).toBeGreaterThanOrEqual(1);
    expect(value(before, 'esi_conductors', { alive: 'true' })).toBe(1);
    expect(value(before, 'esi_leases', { status: 'active' })).toBe(0);
    expect(before.some((s) => s.family.startsWith('esi_process_') || s.family.startsWith('esi_nodejs_'))).toBe(true);

    const lease = await call(ts, p.owner, 'POST', '/lease/v1/leases', {
      resource_uuid: node.body.uuid,
      project_id: p.lessee.projectId,
      start_time: at(-1000),
      end_time: at(HOUR),
    });
    expect(lease.status, lease.text).toBe(201);
    await waitUntil(async () => value(await scrape(), 'esi_leases', { status: 'active' }) === 1);

    // No identifiers: node UUIDs and names, project ids and URLs with ids stay out.
    const text = await (await fetch(`${ts.url}/metrics`)).text();
    for (const id of [node.body.uuid, 'metrics-1', p.owner.projectId!, p.lessee.projectId!, lease.body.uuid])
      expect(text).not.toContain(id);
  });

  it('every persona may scrape (Prometheus carries no token); ESI_METRICS=false serves no /metrics', async () => {
    for (const who of [p.admin, p.owner, p.lessee, p.other, p.anonymous]) expect((await call(ts, who, 'GET', '/metrics')).status).toBe(200);
    const off = await startTestServer({ env: { ESI_METRICS: 'false' } });
    try {
      expect((await call(off, null, 'GET', '/metrics')).status).toBe(404);
      expect((await call(off, null, 'GET', '/healthz')).status).toBe(200);
    } finally {
      await off.close();
    }
  });
});
