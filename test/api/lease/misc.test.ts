/**
 * The remaining lease API endpoints for every persona: the version documents (public),
 * `GET /v1/nodes`, `GET /v1/events` and the console auth tokens; and unknown paths.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.ts';
import { at, countRows, DAY, enrolNode, expectFault, startLeaseEnv, type LeaseEnv } from './support.ts';

let env: LeaseEnv;
let n1: string;
let n2: string;
const T = Date.now() + 30 * DAY;

/** o1's offer of mi-1 and o1 → l1 lease of mi-2, both for [T, T + 1 d): every lease event of this file. */
let offerUuid: string;
let leaseUuid: string;

beforeAll(async () => {
  env = await startLeaseEnv();
  n1 = await enrolNode(env, 'mi-1', { resource_class: 'gpu', properties: { cpus: 4 } });
  n2 = await enrolNode(env, 'mi-2');
  const offer = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
    resource_uuid: n1,
    start_time: at(0, T),
    end_time: at(DAY, T),
  });
  const lease = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
    resource_uuid: n2,
    project_id: 'l1',
    start_time: at(0, T),
    end_time: at(DAY, T),
  });
  expect(offer.status).toBe(201);
  expect(lease.status).toBe(201);
  offerUuid = offer.body.uuid;
  leaseUuid = lease.body.uuid;
});
afterAll(async () => env?.ts.close());

describe('version documents', () => {
  it('GET /lease is public: esi-leap root document with a v1 link under /lease', async () => {
    for (const p of [env.p.anonymous, env.p.owner]) {
      const r = await call(env.ts, p, 'GET', '/lease');
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        name: 'ESI Leap API',
        default_version: {
          id: 'v1',
          status: 'CURRENT',
          min_version: '1.0',
          version: '1.0',
          links: [{ href: `${env.ts.url}/lease/v1`, rel: 'self' }],
        },
      });
      expect(r.body.versions).toHaveLength(1);
    }
  });

  it('GET /lease/v1 is public and answers 300 with the versions, as esi-leap', async () => {
    const r = await call(env.ts, env.p.anonymous, 'GET', '/lease/v1');
    expect(r.status).toBe(300);
    expect(r.body).toEqual({ versions: [{ id: 'v1.0', status: 'CURRENT', links: [{ href: `${env.ts.url}/lease/v1`, rel: 'self' }] }] });
  });

  it('unknown paths are 404 in WSME format, with or without a token', async () => {
    expectFault(await call(env.ts, env.p.anonymous, 'GET', '/lease/v1/contracts'), 404);
    expectFault(await call(env.ts, env.p.owner, 'GET', '/lease/v2'), 404);
  });
});

describe('GET /v1/nodes', () => {
  it('owner: its nodes with project names, offers and leases; properties without lease data', async () => {
    const r = await call(env.ts, env.p.owner, 'GET', '/lease/v1/nodes');
    expect(r.status).toBe(200);
    const byName = Object.fromEntries(r.body.nodes.map((n: any) => [n.name, n]));
    expect(Object.keys(byName).sort()).toEqual(['mi-1', 'mi-2']);
    expect(byName['mi-1']).toMatchObject({
      uuid: n1,
      owner: 'o1',
      lessee: null,
      resource_class: 'gpu',
      maintenance: 'False',
      properties: { cpus: 4 },
      offer_uuid: null,
      lease_uuid: null,
      future_offers: [offerUuid],
      future_leases: [],
    });
    expect(Object.keys(byName['mi-1']).sort()).toEqual(
      [
        'future_leases',
        'future_offers',
        'lease_uuid',
        'lessee',
        'maintenance',
        'name',
        'offer_uuid',
        'owner',
        'power_state',
        'properties',
        'provision_state',
        'resource_class',
        'target_power_state',
        'target_provision_state',
        'uuid',
      ].sort(),
    );
    expect(byName['mi-2'].future_leases).toEqual([leaseUuid]);
  });

  it('filters by owner and resource class; admin sees every node; lessee and another project see none they do not hold', async () => {
    expect((await call(env.ts, env.p.owner, 'GET', '/lease/v1/nodes?resource_class=gpu')).body.nodes.map((n: any) => n.name)).toEqual([
      'mi-1',
    ]);
    expect((await call(env.ts, env.p.admin, 'GET', '/lease/v1/nodes?owner=o1')).body.nodes).toHaveLength(2);
    expect((await call(env.ts, env.p.admin, 'GET', '/lease/v1/nodes')).body.nodes.length).toBeGreaterThanOrEqual(2);
    expect((await call(env.ts, env.p.lessee, 'GET', '/lease/v1/nodes')).body.nodes).toEqual([]);
    expect((await call(env.ts, env.p.other, 'GET', '/lease/v1/nodes')).body.nodes).toEqual([]);
    expectFault(await call(env.ts, env.p.anonymous, 'GET', '/lease/v1/nodes'), 401);
    // A non-admin's filter naming an unknown project lists nothing, as one naming a project that
    // exists does (no existence oracle); admins, who may see every project, get 404.
    expect((await call(env.ts, env.p.owner, 'GET', '/lease/v1/nodes?owner=nobody')).body.nodes).toEqual([]);
    expect((await call(env.ts, env.p.owner, 'GET', '/lease/v1/nodes?owner=o2')).body.nodes).toEqual([]);
    expectFault(await call(env.ts, env.p.admin, 'GET', '/lease/v1/nodes?owner=nobody'), 404, 'No project named nobody.');
  });
});

describe('GET /v1/events', () => {
  it('admin sees all; owner and lessee their own; another project nothing of theirs; anonymous 401', async () => {
    const all = (await call(env.ts, env.p.admin, 'GET', '/lease/v1/events')).body.events;
    expect(all.map((e: any) => e.event_type)).toEqual(['esi_leap.offer.create', 'esi_leap.lease.create']);
    expect((await call(env.ts, env.p.owner, 'GET', '/lease/v1/events')).body.events).toHaveLength(2);
    expect((await call(env.ts, env.p.lessee, 'GET', '/lease/v1/events')).body.events.map((e: any) => e.event_type)).toEqual([
      'esi_leap.lease.create',
    ]);
    expect((await call(env.ts, env.p.other, 'GET', '/lease/v1/events')).body.events).toEqual([]);
    expect((await call(env.ts, env.p.admin, 'GET', '/lease/v1/events?lessee_or_owner_id=l1')).body.events).toHaveLength(1);
    expectFault(await call(env.ts, env.p.anonymous, 'GET', '/lease/v1/events'), 401);
    expectFault(await call(env.ts, env.p.admin, 'GET', '/lease/v1/events?last_event_id=abc'), 400, /last_event_id/);
  });
});

describe('console auth tokens', () => {
  it('owner: 201 with a websocket access URL; only the token hash is stored', async () => {
    const r = await call(env.ts, env.p.owner, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: 'mi-1' });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ node_uuid: n1 });
    expect(r.body.access_url).toBe(`${env.ts.url.replace(/^http/, 'ws')}/lease/console?token=${encodeURIComponent(r.body.token)}`);
    const rows = await env.ts.server.services.store.db.selectFrom('console_auth_tokens').selectAll().where('node_uuid', '=', n1).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).toBe(createHash('sha256').update(r.body.token).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(r.body.token);
    const valid = await env.ts.server.services.leasing.consoleTokens.validate(r.body.token);
    expect(valid?.node_uuid).toBe(n1);
    expect(Number(rows[0]!.expires_at) - Number(rows[0]!.created_at)).toBe(600_000);
  });

  it('admin: any node, with a TTL; TTL ≤ 0 or not an integer is 400', async () => {
    const r = await call(env.ts, env.p.admin, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: n2, token_ttl: 30 });
    expect(r.status, r.text).toBe(201);
    expectFault(
      await call(env.ts, env.p.admin, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: n2, token_ttl: 0 }),
      400,
      /Token TTL 0 invalid/,
    );
    expectFault(
      await call(env.ts, env.p.admin, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: n2, token_ttl: 1.5 }),
      400,
      /token_ttl/,
    );
  });

  it('lessee and another project: 404 for nodes they cannot see; anonymous: 401', async () => {
    const before = await countRows(env, 'console_auth_tokens');
    expectFault(await call(env.ts, env.p.lessee, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: n1 }), 404);
    expectFault(await call(env.ts, env.p.other, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: n1 }), 404);
    expectFault(await call(env.ts, env.p.anonymous, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: n1 }), 401);
    expectFault(await call(env.ts, env.p.owner, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: 'no-such-node' }), 404);
    expect(await countRows(env, 'console_auth_tokens')).toBe(before);
  });

  it('DELETE revokes every token of the node; the same visibility rules apply', async () => {
    for (let i = 0; i < 2; i++)
      expect((await call(env.ts, env.p.owner, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: 'mi-1' })).status).toBe(201);
    expectFault(await call(env.ts, env.p.other, 'DELETE', `/lease/v1/console_auth_tokens/${n1}`), 404);
    expectFault(await call(env.ts, env.p.lessee, 'DELETE', '/lease/v1/console_auth_tokens/mi-1'), 404);
    expectFault(await call(env.ts, env.p.anonymous, 'DELETE', '/lease/v1/console_auth_tokens/mi-1'), 401);
    const r = await call(env.ts, env.p.owner, 'DELETE', '/lease/v1/console_auth_tokens/mi-1');
    expect(r.status).toBe(200);
    expect(r.body).toBeNull();
    const left = await env.ts.server.services.store.db.selectFrom('console_auth_tokens').selectAll().where('node_uuid', '=', n1).execute();
    expect(left).toEqual([]);
    expect((await call(env.ts, env.p.admin, 'DELETE', `/lease/v1/console_auth_tokens/${n2}`)).status).toBe(200);
  });
});
