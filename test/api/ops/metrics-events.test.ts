/**
 * The metrics that events feed and the process gauges (src/server/metrics-events.ts,
 * src/server/metrics-scrape.ts; docs/operations.md), scraped from `GET /metrics` without a token
 * and parsed by the Prometheus project's text parser (./prometheus.ts): a lease the lease
 * manager starts and ends is one skew observation each; a power request on a `fake-hardware`
 * node is a timed BMC call of that driver and a timed conductor stage; a redfish BMC that is
 * down is a counted error; the conductor's task gauge is there (not on an API-only process);
 * the database pool gauges are there on PostgreSQL only; every metric the Grafana dashboard
 * (docs/grafana/esi.json) queries is exported.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, testDb, type Personas, type TestServer } from '../../helpers/harness.ts';
import { deadUrl } from '../conductor/support.ts';
import { at, waitUntil } from '../lease/support.ts';
import { samples, scrape, value, type Sample } from './prometheus.ts';

const IRONIC = { 'x-openstack-ironic-api-version': '1.82' };

let ts: TestServer;
let p: Personas;

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
});
afterAll(async () => ts?.close());

/** Enrol a node as admin, owned by the owner persona; returns its JSON. */
async function enrol(body: Record<string, unknown>): Promise<any> {
  const r = await call(ts, p.admin, 'POST', '/baremetal/v1/nodes', { owner: p.owner.projectId, ...body }, IRONIC);
  expect(r.status, r.text).toBe(201);
  return r.body;
}

/** Ask for a power change as admin and wait for the conductor to finish it (lock released). */
async function powerAndSettle(uuid: string, target: string): Promise<any> {
  const r = await call(ts, p.admin, 'PUT', `/baremetal/v1/nodes/${uuid}/states/power`, { target }, IRONIC);
  expect(r.status, r.text).toBe(202);
  let node: any = null;
  await waitUntil(async () => {
    node = (await call(ts, p.admin, 'GET', `/baremetal/v1/nodes/${uuid}`, undefined, IRONIC)).body;
    return node.target_power_state === null && node.reservation === null;
  });
  return node;
}

const familyType = (all: readonly Sample[], family: string): string | undefined => all.find((s) => s.family === family)?.type;

describe('event metrics', () => {
  it('a lease the lease manager starts and ends: one activation skew observation each, measured in seconds', async () => {
    const node = await enrol({ driver: 'fake-hardware', name: 'skew-1' });
    const before = await scrape(ts.url);
    const lease = await call(ts, p.owner, 'POST', '/lease/v1/leases', {
      resource_uuid: node.uuid,
      project_id: p.lessee.projectId,
      start_time: at(-1000),
      end_time: at(2500),
    });
    expect(lease.status, lease.text).toBe(201);
    await waitUntil(async () => (await call(ts, p.owner, 'GET', `/lease/v1/leases/${lease.body.uuid}`)).body.status === 'expired', 20_000);
    const after = await scrape(ts.url);
    expect(familyType(after, 'esi_lease_activation_skew_seconds')).toBe('histogram');
    for (const action of ['start', 'end']) {
      const count =
        value(after, 'esi_lease_activation_skew_seconds_count', { action }) -
        value(before, 'esi_lease_activation_skew_seconds_count', { action });
      expect(count, action).toBe(1);
      const sum =
        value(after, 'esi_lease_activation_skew_seconds_sum', { action }) -
        value(before, 'esi_lease_activation_skew_seconds_sum', { action });
      // Late by the manager's work only (the start counts from the lease's creation, its start being in the past).
      expect(sum, action).toBeGreaterThanOrEqual(0);
      expect(sum, action).toBeLessThan(30);
      expect(value(after, 'esi_lease_activation_skew_seconds_bucket', { action, le: '+Inf' })).toBe(
        value(after, 'esi_lease_activation_skew_seconds_count', { action }),
      );
    }
  });

  it('a power request on a fake-hardware node: timed BMC calls of driver fake-hardware and a timed power stage, no identifiers', async () => {
    const node = await enrol({ driver: 'fake-hardware', name: 'bmc-1' });
    const before = await scrape(ts.url);
    const done = await powerAndSettle(node.uuid, 'power on');
    expect(done.power_state, done.last_error).toBe('power on');
    const after = await scrape(ts.url);
    const set = { driver: 'fake-hardware', interface: 'power', operation: 'set_power_state' };
    expect(familyType(after, 'esi_bmc_call_duration_seconds')).toBe('histogram');
    expect(
      value(after, 'esi_bmc_call_duration_seconds_count', set) - value(before, 'esi_bmc_call_duration_seconds_count', set),
    ).toBeGreaterThanOrEqual(1);
    expect(value(after, 'esi_bmc_call_duration_seconds_sum', set)).toBeGreaterThanOrEqual(0);
    const stage = { kind: 'power', stage: 'power on' };
    expect(familyType(after, 'esi_conductor_stage_duration_seconds')).toBe('histogram');
    expect(
      value(after, 'esi_conductor_stage_duration_seconds_count', stage) -
        value(before, 'esi_conductor_stage_duration_seconds_count', stage),
    ).toBe(1);
    expect(value(after, 'esi_bmc_call_errors_total', { driver: 'fake-hardware' })).toBe(0);
    const text = await (await fetch(`${ts.url}/metrics`)).text();
    for (const id of [node.uuid, 'bmc-1']) expect(text).not.toContain(id);
  });

  it('a redfish BMC that is down: its failed power change is timed and counted as an error, reason unreachable', async () => {
    const node = await enrol({
      driver: 'redfish',
      name: 'bmc-down',
      driver_info: {
        redfish_address: await deadUrl(),
        redfish_system_id: '/redfish/v1/Systems/x',
        redfish_username: 'admin',
        redfish_password: 'password',
      },
    });
    const done = await powerAndSettle(node.uuid, 'power on');
    expect(done.last_error).toMatch(/reach|connect|refused/i);
    const after = await scrape(ts.url);
    const failed = samples(after, 'esi_bmc_call_errors_total', { driver: 'redfish', interface: 'power', reason: 'unreachable' });
    expect(failed.reduce((n, s) => n + s.value, 0)).toBeGreaterThanOrEqual(1);
    // The parser names a counter's family without `_total`.
    expect(familyType(after, 'esi_bmc_call_errors')).toBe('counter');
    for (const s of failed)
      expect(
        value(after, 'esi_bmc_call_duration_seconds_count', { driver: 'redfish', operation: s.labels.operation! }),
      ).toBeGreaterThanOrEqual(s.value);
  });
});

describe('process gauges', () => {
  it("the conductor's task gauge (queued, running); the database pool gauges on PostgreSQL only; no task gauge without a conductor", async () => {
    const all = await scrape(ts.url);
    expect(familyType(all, 'esi_conductor_tasks')).toBe('gauge');
    for (const state of ['queued', 'running']) {
      const [s] = samples(all, 'esi_conductor_tasks', { state });
      expect(s, state).toBeDefined();
      expect(s!.value).toBeGreaterThanOrEqual(0);
    }
    const pool = all.filter((s) => s.family.startsWith('esi_database_pool_'));
    if (testDb() === 'postgres') {
      // The test harness opens PostgreSQL with a pool of 4 (test/helpers/harness.ts).
      expect(value(all, 'esi_database_pool_max_connections')).toBe(4);
      const open = value(all, 'esi_database_pool_connections');
      expect(open).toBeGreaterThanOrEqual(1);
      expect(open).toBeLessThanOrEqual(4);
      expect(value(all, 'esi_database_pool_idle_connections')).toBeLessThanOrEqual(open);
      expect(value(all, 'esi_database_pool_waiting_requests')).toBeGreaterThanOrEqual(0);
      expect(new Set(pool.map((s) => s.family))).toEqual(
        new Set([
          'esi_database_pool_connections',
          'esi_database_pool_idle_connections',
          'esi_database_pool_waiting_requests',
          'esi_database_pool_max_connections',
        ]),
      );
    } else {
      // SQLite: one connection, no pool, nothing said.
      expect(pool).toEqual([]);
    }
    const api = await startTestServer({ roles: 'api' });
    try {
      expect((await scrape(api.url)).some((s) => s.family === 'esi_conductor_tasks')).toBe(false);
    } finally {
      await api.close();
    }
  });
});

describe('the Grafana dashboard', () => {
  it('queries only metrics that esi exports (the PostgreSQL pool gauges on PostgreSQL)', async () => {
    const file = path.resolve(import.meta.dirname, '../../../docs/grafana/esi.json');
    const dashboard = JSON.parse(fs.readFileSync(file, 'utf8')) as { panels: Array<{ targets?: Array<{ expr: string }> }> };
    const queried = new Set(
      dashboard.panels
        .flatMap((panel) => (panel.targets ?? []).flatMap((t) => t.expr.match(/esi_[a-z_]+/g) ?? []))
        .map((n) => n.replace(/_(bucket|count|sum)$/, '')),
    );
    expect(queried.size).toBeGreaterThan(10);
    const text = await (await fetch(`${ts.url}/metrics`)).text();
    for (const name of queried) {
      if (name.startsWith('esi_database_pool_') && testDb() === 'sqlite') continue;
      expect(text, name).toContain(`# TYPE ${name} `);
    }
  });
});
