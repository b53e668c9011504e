/**
 * `POST /lease/v1/lease_requests`: lease requests by hardware (docs/leasing.md "Lease requests by hardware") for every persona —
 * "3 nodes with memory_mb ≥ 49152 and ≥ 1 GPU, plus 1 node with memory_mb ≥ 16384 and
 * local_gb ≥ 1000, for 3 days starting tomorrow" — all or nothing, honouring offer visibility,
 * owner policies, traits and resource classes; a refusal names the failed group and the
 * earliest window; parallel requests never share a node; bad input is 400 and writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.ts';
import { at, countRows, DAY, enrolNode, expectFault, HOUR, setTraits, startLeaseEnv, type LeaseEnv } from './support.ts';

let env: LeaseEnv;
/** Offers run [T, T + 30 days); requests start a day in. */
const T = Math.ceil((Date.now() + 10 * DAY) / HOUR) * HOUR;
const nodes: Record<string, string> = {};
const offers: Record<string, string> = {};

const GPU = 'memory_mb >= 49152 and gpus >= 1';
const DISK = 'memory_mb >= 16384 and local_gb >= 1000';
const seed004 = (start: number, days = 3, extra: Record<string, unknown> = {}) => ({
  start_time: at(start, T),
  end_time: at(start + days * DAY, T),
  groups: [
    { count: 3, properties: GPU },
    { count: 1, properties: DISK },
  ],
  ...extra,
});
const request = (persona: keyof LeaseEnv['p'], body: unknown) => call(env.ts, env.p[persona], 'POST', '/lease/v1/lease_requests', body);

beforeAll(async () => {
  env = await startLeaseEnv();
  const hw: Array<[string, Record<string, unknown>, string?]> = [
    ['g1', { memory_mb: 65536, gpus: 1, local_gb: 500 }, 'gpu'],
    ['g2', { memory_mb: 65536, gpus: 1, local_gb: 500 }, 'gpu'],
    ['g3', { memory_mb: 98304, gpus: 2, local_gb: 500 }, 'gpu'],
    ['g4', { memory_mb: 65536, gpus: 4, local_gb: 500 }, 'gpu'],
    ['d1', { memory_mb: 32768, local_gb: 2000 }],
    ['s1', { memory_mb: 8192, local_gb: 100 }],
  ];
  for (const [name, properties, rc] of hw) {
    nodes[name] = await enrolNode(env, `rq-${name}`, { properties, ...(rc ? { resource_class: rc } : {}) });
    const o = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: nodes[name],
      start_time: at(0, T),
      end_time: at(30 * DAY, T),
      name: `rq-offer-${name}`,
    });
    expect(o.status, o.text).toBe(201);
    offers[name] = o.body.uuid;
  }
  await setTraits(env, nodes.g3!, ['CUSTOM_GPU_A100']);
});
afterAll(async () => env?.ts.close());

describe('a multi-group request by hardware (the lease request example of docs/leasing.md)', () => {
  it('lessee: 201 with four leases on distinct matching nodes, all or nothing, as claims of their offers; another project asking for the same window then gets 409 naming the failed group and the earliest window', async () => {
    const r = await request('lessee', seed004(DAY, 3, { name: 'seed-004', purpose: 'training', properties: { ticket: 42 } }));
    expect(r.status, r.text).toBe(201);
    const first: any[] = r.body.leases;
    expect(first).toHaveLength(4);
    const resources = first.map((l: any) => l.resource);
    expect(new Set(resources).size).toBe(4);
    expect(resources.slice(0, 3).every((n: string) => /^rq-g\d$/.test(n))).toBe(true);
    expect(resources[3]).toBe('rq-d1');
    for (const l of first) {
      expect(l).toMatchObject({
        status: 'created',
        project: 'l1',
        owner: 'o1',
        name: 'seed-004',
        purpose: 'training',
        properties: { ticket: 42 },
        start_time: at(DAY, T),
        end_time: at(4 * DAY, T),
        parent_lease_uuid: null,
      });
      expect(l.offer_uuid).toBe(offers[l.resource.slice(3)]);
    }
    // Each lease is an ordinary lease: visible through the lease API and on its offer.
    const listed = await call(env.ts, env.p.lessee, 'GET', '/lease/v1/leases?name=seed-004');
    expect(listed.body.leases).toHaveLength(4);
    const events = await call(env.ts, env.p.lessee, 'GET', '/lease/v1/events?event_type=esi_leap.lease.create');
    expect(events.body.events.filter((e: any) => first.some((l: any) => l.uuid === e.object_uuid))).toHaveLength(4);

    // Another project asking for the same window gets 409 naming the failed group and the earliest window.
    const before = await countRows(env, 'leases');
    const refused = await request('other', seed004(DAY));
    expectFault(refused, 409);
    expect(refused.body.faultstring).toBe(
      `Lease request cannot be satisfied from ${at(DAY, T)} to ${at(4 * DAY, T)}: group 1 (3 nodes, "${GPU}"): 4 offered nodes match it, 1 free in that window. The earliest window for the whole request is ${at(4 * DAY, T)} to ${at(7 * DAY, T)}.`,
    );
    expect(refused.body).toMatchObject({ failed_group: 1, earliest_start_time: at(4 * DAY, T), earliest_end_time: at(7 * DAY, T) });
    expect(await countRows(env, 'leases')).toBe(before);
    // The earliest window it named does work.
    const again = await request('other', seed004(4 * DAY));
    expect(again.status, again.text).toBe(201);
  });

  it('a group that fits while another does not: nothing is leased (all or none)', async () => {
    const before = await countRows(env, 'leases');
    const r = await request('lessee', {
      start_time: at(10 * DAY, T),
      end_time: at(11 * DAY, T),
      groups: [
        { count: 1, properties: GPU },
        { count: 2, properties: DISK },
      ],
    });
    expectFault(
      r,
      409,
      /group 2 \(2 nodes, "memory_mb >= 16384 and local_gb >= 1000"\): 1 offered node matches it, 1 free in that window\. No later window fits the whole request either\./,
    );
    expect(r.body).toMatchObject({ failed_group: 2, earliest_start_time: null });
    expect(await countRows(env, 'leases')).toBe(before);
  });

  it('nodes fitting several groups are shared out so that every group is served', async () => {
    // g* match "memory_mb >= 49152"; only g3 has the A100 trait. Group order puts the wide group first.
    const r = await request('lessee', {
      start_time: at(12 * DAY, T),
      end_time: at(13 * DAY, T),
      groups: [
        { count: 3, properties: 'memory_mb >= 49152' },
        { count: 1, resource_class: 'gpu', traits: ['CUSTOM_GPU_A100'] },
      ],
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.leases.map((l: any) => l.resource)).toContain('rq-g3');
    expect(r.body.leases[3].resource).toBe('rq-g3');
  });

  it("Blazar's JSON form and resource classes select nodes too", async () => {
    const r = await request('lessee', {
      start_time: at(14 * DAY, T),
      end_time: at(15 * DAY, T),
      groups: [{ count: 1, properties: ['and', ['>=', '$local_gb', '1000'], ['<', '$memory_mb', '65536']] }],
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.leases[0].resource).toBe('rq-d1');
    const none = await request('lessee', {
      start_time: at(14 * DAY, T),
      end_time: at(15 * DAY, T),
      groups: [{ count: 1, resource_class: 'fpga' }],
    });
    expectFault(none, 409, /group 1 \(1 node, resource_class fpga\): no offered node you may lease matches it/);
  });
});

describe('visibility and owner policies', () => {
  it('offers limited to another project are not used', async () => {
    const node = await enrolNode(env, 'rq-private', { properties: { special: 'yes' } });
    const o = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: node,
      start_time: at(0, T),
      end_time: at(30 * DAY, T),
      lessee_id: 'l1',
    });
    expect(o.status).toBe(201);
    const body = { start_time: at(DAY, T), end_time: at(2 * DAY, T), groups: [{ count: 1, properties: 'special == yes' }] };
    expectFault(await request('other', body), 409, /no offered node you may lease matches it/);
    const mine = await request('lessee', body);
    expect(mine.status, mine.text).toBe(201);
  });

  it("the owner's maximum lease length and allowed projects filter the offers", async () => {
    const p = await call(env.ts, env.p.owner, 'POST', '/lease/v1/lease_policies', {
      max_lease_seconds: 5 * 86_400,
      allowed_projects: ['l1', 'admin'],
    });
    expect(p.status, p.text).toBe(201);
    try {
      const long = await request('lessee', {
        start_time: at(20 * DAY, T),
        end_time: at(26 * DAY, T),
        groups: [{ count: 1, properties: DISK }],
      });
      expectFault(long, 409, /no offered node you may lease matches it \(hardware, owner lease policies, length\)/);
      const notAllowed = await request('other', {
        start_time: at(20 * DAY, T),
        end_time: at(21 * DAY, T),
        groups: [{ count: 1, properties: DISK }],
      });
      expectFault(notAllowed, 409, /no offered node you may lease matches it/);
      const fine = await request('lessee', {
        start_time: at(20 * DAY, T),
        end_time: at(25 * DAY, T),
        groups: [{ count: 1, properties: DISK }],
      });
      expect(fine.status, fine.text).toBe(201);
    } finally {
      await call(env.ts, env.p.owner, 'DELETE', `/lease/v1/lease_policies/${p.body.uuid}`);
    }
  });
});

describe('every persona', () => {
  const small = (day: number) => ({
    start_time: at(day * DAY, T),
    end_time: at(day * DAY + HOUR, T),
    groups: [{ count: 1, properties: 'memory_mb <= 8192' }],
  });

  it('admin, owner, lessee and another project may request (each for its own project); anonymous gets 401', async () => {
    for (const [i, persona] of (['admin', 'owner', 'lessee', 'other'] as const).entries()) {
      const r = await request(persona, small(16 + i));
      expect(r.status, `${persona}: ${r.text}`).toBe(201);
      expect(r.body.leases[0]).toMatchObject({ resource: 'rq-s1', project_id: env.p[persona].projectId });
    }
    expectFault(await request('anonymous', small(21)), 401);
  });

  it('a user without a leasing role gets 403', async () => {
    const { directory, grants, tokens } = env.ts.server.services.identity;
    const admin = env.p.admin.context!;
    const user = await directory.createUser(admin, { name: 'norole', password: 'pw-norole-1', defaultProjectId: env.p.lessee.projectId! });
    const member = (await grants.listRoles(admin, { name: 'member' }))[0] ?? (await grants.createRole(admin, { name: 'member' }));
    await grants.grant(admin, { user_id: user.id, role_id: member.id, target: { type: 'project', id: env.p.lessee.projectId! } });
    const issued = await tokens.authenticatePassword(
      { userId: user.id, password: 'pw-norole-1' },
      { kind: 'project', projectId: env.p.lessee.projectId! },
    );
    const r = await call(env.ts, { ...env.p.lessee, token: issued.secret }, 'POST', '/lease/v1/lease_requests', small(22));
    expectFault(r, 403, 'Access was denied to esi_leap:lease:request.');
  });
});

describe('parallel requests', () => {
  it('two requests for 3 of the 4 GPU nodes in the same window: one 201, one 409, no node leased twice', async () => {
    const body = { start_time: at(27 * DAY, T), end_time: at(28 * DAY, T), groups: [{ count: 3, properties: GPU }] };
    const results = await Promise.all([request('lessee', body), request('other', body)]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    const leased = await call(
      env.ts,
      env.p.admin,
      'GET',
      `/lease/v1/leases?view=all&start_time=${at(27 * DAY, T)}&end_time=${at(28 * DAY - 1, T)}`,
    );
    const resources = leased.body.leases.map((l: any) => l.resource);
    expect(resources).toHaveLength(3);
    expect(new Set(resources).size).toBe(3);
  });
});

describe('bad input: 400 in esi-leap format, nothing written', () => {
  it('refuses malformed requests', async () => {
    const ok = seed004(20 * DAY);
    const cases: Array<[unknown, RegExp | string]> = [
      [{ ...ok, groups: undefined }, /groups.*Mandatory field missing/],
      [{ ...ok, groups: 'three gpus' }, /groups.*list of JSON objects/],
      [{ ...ok, groups: [] }, /at least one group/],
      [{ ...ok, groups: [{ count: 0 }] }, /Invalid count in group 1/],
      [{ ...ok, groups: [{ count: 1.5 }] }, /count.*Expected an integer/],
      [{ ...ok, groups: [{}] }, /count.*Mandatory field missing/],
      [{ ...ok, groups: [{ count: 1, colour: 'red' }] }, 'Unknown attribute for argument group: colour'],
      [{ ...ok, groups: [{ count: 1, properties: 'memory_mb >>= 4' }] }, /Group 1: Invalid hardware expression at character 12/],
      [{ ...ok, groups: [{ count: 1, properties: 42 }] }, /properties.*expression/],
      [{ ...ok, groups: [{ count: 1, traits: 'CUSTOM_X' }] }, /traits.*list of strings/],
      [{ ...ok, groups: [{ count: 1001 }] }, /Invalid count/],
      [{ ...ok, end_time: ok.start_time }, /Start Time must be strictly less than End Time/],
      [{ ...ok, start_time: 'tomorrow' }, /start_time.*ISO 8601/],
      [{ ...ok, leases: [] }, /leases.*read-only/],
      [{ ...ok, colour: 1 }, 'Unknown attribute for argument lease_request: colour'],
      ['{"groups": [', 'The request body is not valid JSON.'],
      [[ok], /must be a JSON object/],
    ];
    const before = await countRows(env, 'leases');
    for (const [body, message] of cases) expectFault(await request('lessee', body), 400, message);
    expectFault(await request('lessee', { ...ok, end_time: at(60 * DAY, T) }), 403, /The max time range is 21 days/);
    expect(await countRows(env, 'leases')).toBe(before);
  });
});
