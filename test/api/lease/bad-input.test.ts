/**
 * Bad input to the lease API: unknown attributes, read-only attributes, malformed JSON, wrong
 * types, bad times, start ≥ end, unknown ids, oversized bodies, unsupported media types. Every
 * case is a 4xx in esi-leap's error format, and nothing is written (row counts unchanged).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.ts';
import { at, countRows, DAY, enrolNode, expectFault, startLeaseEnv, type LeaseEnv } from './support.ts';

let env: LeaseEnv;
let node: string;
let offerUuid: string;
let leaseUuid: string;
const T = Date.now() + 30 * DAY;

beforeAll(async () => {
  env = await startLeaseEnv({ env: { ESI_MAX_BODY_BYTES: '4096' } });
  node = await enrolNode(env, 'bad-1');
  const o = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
    resource_uuid: node,
    start_time: at(0, T),
    end_time: at(10 * DAY, T),
  });
  offerUuid = o.body.uuid;
  const l = await call(env.ts, env.p.lessee, 'POST', `/lease/v1/offers/${offerUuid}/claim`, { start_time: at(0, T), end_time: at(DAY, T) });
  leaseUuid = l.body.uuid;
});
afterAll(async () => env?.ts.close());

type Case = [
  label: string,
  method: string,
  path: string,
  body: unknown,
  status: number,
  message?: RegExp | string,
  headers?: Record<string, string>,
];

const cases = (): Case[] => {
  const offer = { resource_uuid: node, start_time: at(20 * DAY, T), end_time: at(21 * DAY, T) };
  const lease = { resource_uuid: node, project_id: 'l1', start_time: at(20 * DAY, T), end_time: at(21 * DAY, T) };
  const claim = `/lease/v1/offers/${offerUuid}/claim`;
  return [
    [
      'offer: unknown attribute',
      'POST',
      '/lease/v1/offers',
      { ...offer, colour: 'red' },
      400,
      'Unknown attribute for argument offer: colour',
    ],
    [
      'offer: read-only uuid',
      'POST',
      '/lease/v1/offers',
      { ...offer, uuid: '1c2a2b4e-0000-4000-8000-000000000000' },
      400,
      /field\/attribute uuid.*read-only/,
    ],
    ['offer: read-only status', 'POST', '/lease/v1/offers', { ...offer, status: 'available' }, 400, /status.*read-only/],
    ['offer: read-only project_id', 'POST', '/lease/v1/offers', { ...offer, project_id: 'x' }, 400, /project_id.*read-only/],
    ['offer: missing resource_uuid', 'POST', '/lease/v1/offers', { start_time: at(0, T) }, 400, /resource_uuid.*Mandatory field missing/],
    ['offer: resource_uuid not a string', 'POST', '/lease/v1/offers', { ...offer, resource_uuid: 42 }, 400, /resource_uuid.*Wrong type/],
    ['offer: properties not an object', 'POST', '/lease/v1/offers', { ...offer, properties: [1, 2] }, 400, /properties.*JSON object/],
    ['offer: bad start_time', 'POST', '/lease/v1/offers', { ...offer, start_time: '31/12/2030' }, 400, /start_time.*ISO 8601/],
    ['offer: start_time a number', 'POST', '/lease/v1/offers', { ...offer, start_time: 1893456000 }, 400, /start_time/],
    ['offer: impossible date', 'POST', '/lease/v1/offers', { ...offer, end_time: '2031-02-30T00:00:00' }, 400, /end_time/],
    [
      'offer: start ≥ end',
      'POST',
      '/lease/v1/offers',
      { ...offer, end_time: offer.start_time },
      400,
      /Start Time must be strictly less than End Time/,
    ],
    [
      'offer: unknown resource type',
      'POST',
      '/lease/v1/offers',
      { ...offer, resource_type: 'dummy_node' },
      400,
      'dummy_node resource type unknown.',
    ],
    ['offer: unknown node', 'POST', '/lease/v1/offers', { ...offer, resource_uuid: 'no-such-node' }, 404],
    [
      'offer: unknown lessee project',
      'POST',
      '/lease/v1/offers',
      { ...offer, lessee_id: 'no-such-project' },
      404,
      'No project named no-such-project.',
    ],
    ['offer: name too long', 'POST', '/lease/v1/offers', { ...offer, name: 'n'.repeat(256) }, 400, /name/],
    [
      'offer: UUID-like name',
      'POST',
      '/lease/v1/offers',
      { ...offer, name: '1c2a2b4e-0000-4000-8000-000000000000' },
      400,
      /must not look like a UUID/,
    ],
    ['offer: body is an array', 'POST', '/lease/v1/offers', [offer], 400, /must be a JSON object/],
    ['offer: body is a string', 'POST', '/lease/v1/offers', '"text"', 400, /must be a JSON object/],
    ['offer: malformed JSON', 'POST', '/lease/v1/offers', '{"resource_uuid": ', 400, 'The request body is not valid JSON.'],
    ['offer: empty JSON body', 'POST', '/lease/v1/offers', '', 400],
    ['offer: oversized body', 'POST', '/lease/v1/offers', { ...offer, properties: { blob: 'x'.repeat(5000) } }, 413],
    ['offer: not JSON', 'POST', '/lease/v1/offers', 'resource_uuid=x', 415, undefined, { 'content-type': 'text/plain' }],
    ['claim: read-only offer_uuid', 'POST', claim, { offer_uuid: offerUuid }, 400, /offer_uuid.*read-only/],
    ['claim: read-only resource_uuid', 'POST', claim, { resource_uuid: node }, 400, /resource_uuid.*read-only/],
    ['claim: unknown attribute', 'POST', claim, { start_time: at(DAY, T), colour: 1 }, 400, 'Unknown attribute for argument lease: colour'],
    ['claim: bad end_time', 'POST', claim, { start_time: at(DAY, T), end_time: 'never' }, 400, /end_time/],
    ['claim: start ≥ end', 'POST', claim, { start_time: at(2 * DAY, T), end_time: at(DAY, T) }, 400, /Start Time must be strictly less/],
    [
      'claim: purpose too long',
      'POST',
      claim,
      { start_time: at(2 * DAY, T), end_time: at(3 * DAY, T), purpose: 'p'.repeat(256) },
      400,
      /purpose/,
    ],
    ['claim: unknown offer', 'POST', '/lease/v1/offers/8b7f3c52-0000-4000-8000-000000000000/claim', {}, 404],
    ['lease: unknown attribute', 'POST', '/lease/v1/leases', { ...lease, offer: 1 }, 400, 'Unknown attribute for argument lease: offer'],
    ['lease: read-only owner_id', 'POST', '/lease/v1/leases', { ...lease, owner_id: 'x' }, 400, /owner_id.*read-only/],
    ['lease: read-only fulfill_time', 'POST', '/lease/v1/leases', { ...lease, fulfill_time: at(0, T) }, 400, /fulfill_time.*read-only/],
    ['lease: project_id not a string', 'POST', '/lease/v1/leases', { ...lease, project_id: ['l1'] }, 400, /project_id.*Wrong type/],
    ['lease: start ≥ end', 'POST', '/lease/v1/leases', { ...lease, end_time: lease.start_time }, 400, /Start Time must be strictly less/],
    ['lease: unknown project', 'POST', '/lease/v1/leases', { ...lease, project_id: 'ghost' }, 404, 'No project named ghost.'],
    ['lease: malformed JSON', 'POST', '/lease/v1/leases', '{,}', 400, 'The request body is not valid JSON.'],
    ['patch: unknown lease', 'PATCH', '/lease/v1/leases/8b7f3c52-0000-4000-8000-000000000000', { end_time: at(2 * DAY, T) }, 404],
    [
      'patch: extra field',
      'PATCH',
      `/lease/v1/leases/${leaseUuid}`,
      { end_time: at(2 * DAY, T), status: 'active' },
      400,
      'Only the end_time field may be updated',
    ],
    ['patch: malformed JSON', 'PATCH', `/lease/v1/leases/${leaseUuid}`, '{"end_time"', 400],
    ['console: missing node', 'POST', '/lease/v1/console_auth_tokens', {}, 400, /node_uuid_or_name.*Mandatory/],
    ['console: ttl as string', 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: node, token_ttl: '60' }, 400, /token_ttl/],
    ['console: huge ttl', 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: node, token_ttl: 10 ** 12 }, 400, /Token TTL/],
    [
      'console: read-only token',
      'POST',
      '/lease/v1/console_auth_tokens',
      { node_uuid_or_name: node, token: 'mine' },
      400,
      /token.*read-only/,
    ],
    ['delete: unknown offer', 'DELETE', '/lease/v1/offers/8b7f3c52-0000-4000-8000-000000000000', undefined, 404],
    ['delete: unknown lease name', 'DELETE', '/lease/v1/leases/ghost-lease', undefined, 404],
    ['list: repeated parameter', 'GET', '/lease/v1/leases?status=active&status=created', undefined, 400, /more than once/],
    ['list: bad time filter', 'GET', `/lease/v1/leases?start_time=yesterday&end_time=${at(0, T)}`, undefined, 400, /start_time/],
    ['show: unknown query parameter', 'GET', `/lease/v1/leases/${leaseUuid}?fields=uuid`, undefined, 400, 'Unknown argument: "fields".'],
  ];
};

describe('every bad request is a 4xx in esi-leap format and writes nothing', () => {
  it('runs the matrix as the owner (admin for PATCH)', async () => {
    const tables = ['offers', 'leases', 'lease_events', 'console_auth_tokens'] as const;
    const before = await Promise.all(tables.map((t) => countRows(env, t)));
    const failures: string[] = [];
    for (const [label, method, path, body, status, message, headers] of cases()) {
      const persona = method === 'PATCH' ? env.p.admin : env.p.owner;
      const r = await call(env.ts, persona, method, path, body, headers);
      try {
        expectFault(r, status, message);
      } catch (err) {
        failures.push(`${label}: got ${r.status} ${r.text} (${(err as Error).message.split('\n')[0]})`);
      }
    }
    expect(failures).toEqual([]);
    expect(await Promise.all(tables.map((t) => countRows(env, t)))).toEqual(before);
  });

  it('leaves the offer and lease as they were', async () => {
    const o = await call(env.ts, env.p.owner, 'GET', `/lease/v1/offers/${offerUuid}`);
    expect(o.body).toMatchObject({ status: 'available', end_time: at(10 * DAY, T) });
    const l = await call(env.ts, env.p.owner, 'GET', `/lease/v1/leases/${leaseUuid}`);
    expect(l.body).toMatchObject({ status: 'created', end_time: at(DAY, T) });
  });
});
