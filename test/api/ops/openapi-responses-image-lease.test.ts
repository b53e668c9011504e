/**
 * The documented answers of the image API's members and schemas
 * (src/api/image/response-schemas.ts) and of the lease API beyond offers, leases and nodes
 * (src/api/lease/response-schemas-extra.ts: events, console tokens, quotas, owner lease
 * policies, webhooks and deliveries, lease requests, the `null` of a DELETE) compared with real
 * ones: an owner's node offered and leased to a lessee (lease active), an image shared with
 * another project; each read as the personas that may see it (admin, owner, lessee, another
 * project) and each create and update checked, with TypeBox's `Value.Check` against strict
 * schemas (see openapi-responses.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, ManualClock, startTestServer, type Persona, type Personas, type TestServer } from '../../helpers/harness.ts';
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import { MemberCollection, MemberResponse, SchemaDocumentResponse } from '../../../src/api/image/response-schemas.ts';
import { LeaseCollection, LeaseResponse } from '../../../src/api/lease/response-schemas.ts';
import {
  ConsoleTokenResponse,
  EventCollection,
  LeasePolicyCollection,
  LeasePolicyResponse,
  LeaseQuotaCollection,
  LeaseQuotaResponse,
  NullAnswer,
  WebhookCollection,
  WebhookDeliveryCollection,
  WebhookResponse,
} from '../../../src/api/lease/response-schemas-extra.ts';
import { expectValid } from './openapi-support.ts';

const T0 = Date.UTC(2030, 0, 1, 12);
const HOUR = 3_600_000;
const IRONIC = { 'x-openstack-ironic-api-version': '1.82' };

let ts: TestServer;
let p: Personas;
let clock: ManualClock;
/** The node (leased to the lessee, lease active), its offer and lease, an image of the owner. */
const w = { node: '', offer: '', lease: '', image: '' };

/** An answer that must succeed, as parsed JSON. */
async function ok(who: Persona, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const r = await call(ts, who, method, url, body, headers);
  expect(r.status, `${who.name} ${method} ${url}: ${r.text}`).toBeLessThan(300);
  return r.body;
}

/** A node of the owner (fake hardware), of `resource_class` when given. */
async function ownerNode(name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const body = { driver: 'fake-hardware', name, owner: p.owner.projectId, ...extra };
  return ((await ok(p.admin, 'POST', '/baremetal/v1/nodes', body, IRONIC)) as { uuid: string }).uuid;
}

beforeAll(async () => {
  clock = new ManualClock(T0);
  ts = await startTestServer({ clock, env: { ESI_TOKEN_TTL: String(7 * 24 * 3600) } });
  p = await createPersonas(ts);
  w.node = await ownerNode('doc-il1');
  w.offer = (
    await ok(p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: w.node,
      start_time: formatLeaseTime(T0),
      end_time: formatLeaseTime(T0 + 4 * HOUR),
    })
  ).uuid;
  w.lease = (
    await ok(p.lessee, 'POST', `/lease/v1/offers/${w.offer}/claim`, {
      start_time: formatLeaseTime(T0),
      end_time: formatLeaseTime(T0 + 2 * HOUR),
    })
  ).uuid;
  clock.advance(1000);
  await ts.server.services.leaseManager.runDue();
  w.image = (await ok(p.owner, 'POST', '/image/v2/images', { name: 'doc-shared', disk_format: 'raw', container_format: 'bare' })).id;
  await ok(p.owner, 'PATCH', `/image/v2/images/${w.image}`, [{ op: 'replace', path: '/visibility', value: 'shared' }], {
    'content-type': 'application/openstack-images-v2.1-json-patch',
  });
});
afterAll(async () => ts?.close());

describe('documented image and lease answers match real ones', () => {
  it('image: members (add, list, show, accept) as the owner, the member and admin; the schema documents', async () => {
    const added = await ok(p.owner, 'POST', `/image/v2/images/${w.image}/members`, { member: p.other.projectId });
    expectValid(MemberResponse, added, 'POST /members');
    const url = `/image/v2/images/${w.image}/members/${p.other.projectId}`;
    expectValid(MemberResponse, await ok(p.other, 'PUT', url, { status: 'accepted' }), 'PUT /members/{member}');
    for (const who of [p.owner, p.admin]) {
      const list = await ok(who, 'GET', `/image/v2/images/${w.image}/members`);
      expectValid(MemberCollection, list, `${who.name} members`);
      expect(list.members.length, who.name).toBe(1);
    }
    for (const who of [p.owner, p.other, p.admin]) expectValid(MemberResponse, await ok(who, 'GET', url), `${who.name} member`);
    for (const name of ['image', 'images', 'member', 'members'])
      for (const who of [p.admin, p.lessee])
        expectValid(SchemaDocumentResponse, await ok(who, 'GET', `/image/v2/schemas/${name}`), `${who.name} schemas/${name}`);
  });

  it('image: answers without JSON — upload, download (bytes), tags, (de)activation, member and image deletes', async () => {
    const img = (await ok(p.owner, 'POST', '/image/v2/images', { name: 'doc-bytes', disk_format: 'raw', container_format: 'bare' })).id;
    const base = `${ts.url}/image/v2/images/${img}`;
    const token = { 'x-auth-token': p.owner.token! };
    const up = await fetch(`${base}/file`, {
      method: 'PUT',
      headers: { ...token, 'content-type': 'application/octet-stream' },
      body: new Uint8Array([1, 2, 3, 4]),
    });
    expect([up.status, await up.text()]).toEqual([204, '']);
    const down = await fetch(`${base}/file`, { headers: token });
    expect([down.status, down.headers.get('content-type')]).toEqual([200, 'application/octet-stream']);
    expect([...new Uint8Array(await down.arrayBuffer())]).toEqual([1, 2, 3, 4]);
    const empty = async (who: Persona, method: string, url: string): Promise<void> => {
      const r = await call(ts, who, method, url);
      expect([r.status, r.text], `${who.name} ${method} ${url}`).toEqual([204, '']);
    };
    await empty(p.owner, 'PUT', `/image/v2/images/${img}/tags/doc`);
    await empty(p.owner, 'DELETE', `/image/v2/images/${img}/tags/doc`);
    await empty(p.admin, 'POST', `/image/v2/images/${img}/actions/deactivate`);
    await empty(p.admin, 'POST', `/image/v2/images/${img}/actions/reactivate`);
    await ok(p.owner, 'POST', `/image/v2/images/${w.image}/members`, { member: p.lessee.projectId });
    await empty(p.owner, 'DELETE', `/image/v2/images/${w.image}/members/${p.lessee.projectId}`);
    await empty(p.owner, 'DELETE', `/image/v2/images/${img}`);
  });

  it('lease: events and console tokens as admin, owner and lessee; the null of a DELETE', async () => {
    for (const who of [p.admin, p.owner, p.lessee]) {
      const events = await ok(who, 'GET', '/lease/v1/events');
      expectValid(EventCollection, events, `${who.name} events`);
      expect(events.events.length, who.name).toBeGreaterThan(0);
    }
    expectValid(EventCollection, await ok(p.other, 'GET', '/lease/v1/events'), 'other events');
    const token = await ok(p.lessee, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: w.node });
    expectValid(ConsoleTokenResponse, token, 'POST /console_auth_tokens');
    expectValid(NullAnswer, await ok(p.lessee, 'DELETE', `/lease/v1/console_auth_tokens/${w.node}`), 'DELETE /console_auth_tokens');
    // A second offer and lease, cancelled.
    const node = await ownerNode('doc-il2');
    const offer = await ok(p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: node,
      start_time: formatLeaseTime(T0 + HOUR),
      end_time: formatLeaseTime(T0 + 5 * HOUR),
    });
    const lease = await ok(p.lessee, 'POST', `/lease/v1/offers/${offer.uuid}/claim`, {
      start_time: formatLeaseTime(T0 + 2 * HOUR),
      end_time: formatLeaseTime(T0 + 3 * HOUR),
    });
    const patched = await ok(p.admin, 'PATCH', `/lease/v1/leases/${lease.uuid}`, { end_time: formatLeaseTime(T0 + 4 * HOUR) });
    expectValid(LeaseResponse, patched, 'PATCH /leases/{uuid}');
    expectValid(NullAnswer, await ok(p.lessee, 'DELETE', `/lease/v1/leases/${lease.uuid}`), 'DELETE /leases');
    expectValid(NullAnswer, await ok(p.owner, 'DELETE', `/lease/v1/offers/${offer.uuid}`), 'DELETE /offers');
  });

  it('lease: quotas, owner lease policies and lease requests, as admin, owner, lessee and another project', async () => {
    const quota = await ok(p.admin, 'PUT', `/lease/v1/quotas/${p.lessee.projectId}`, { max_nodes: 5, window_hours: 24 });
    expectValid(LeaseQuotaResponse, quota, 'PUT /quotas/{project}');
    expectValid(LeaseQuotaCollection, await ok(p.admin, 'GET', '/lease/v1/quotas'), 'admin quotas');
    for (const who of [p.admin, p.lessee])
      expectValid(LeaseQuotaResponse, await ok(who, 'GET', `/lease/v1/quotas/${p.lessee.projectId}`), `${who.name} quota`);
    expectValid(LeaseQuotaResponse, await ok(p.other, 'GET', `/lease/v1/quotas/${p.other.projectId}`), 'other quota (defaults)');

    const all = await ok(p.owner, 'POST', '/lease/v1/lease_policies', { max_lease_seconds: 7 * 24 * 3600, erase_devices: true });
    expectValid(LeasePolicyResponse, all, 'POST /lease_policies (all nodes)');
    const one = await ok(p.owner, 'POST', '/lease/v1/lease_policies', { resource_uuid: w.node, allowed_projects: [p.lessee.projectId] });
    expectValid(LeasePolicyResponse, one, 'POST /lease_policies (one node)');
    const patched = await ok(p.owner, 'PATCH', `/lease/v1/lease_policies/${one.uuid}`, { min_gap_seconds: 600 });
    expectValid(LeasePolicyResponse, patched, 'PATCH /lease_policies/{uuid}');
    for (const who of [p.admin, p.owner]) {
      expectValid(LeasePolicyCollection, await ok(who, 'GET', '/lease/v1/lease_policies'), `${who.name} lease_policies`);
      expectValid(LeasePolicyResponse, await ok(who, 'GET', `/lease/v1/lease_policies/${one.uuid}`), `${who.name} lease_policy`);
    }
    expectValid(LeasePolicyCollection, await ok(p.other, 'GET', '/lease/v1/lease_policies'), 'other lease_policies');
    expectValid(NullAnswer, await ok(p.owner, 'DELETE', `/lease/v1/lease_policies/${all.uuid}`), 'DELETE /lease_policies');
    expectValid(NullAnswer, await ok(p.admin, 'DELETE', `/lease/v1/quotas/${p.lessee.projectId}`), 'DELETE /quotas');

    const node = await ownerNode('doc-il3', { resource_class: 'doc-class' });
    await ok(p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: node,
      start_time: formatLeaseTime(T0),
      end_time: formatLeaseTime(T0 + 10 * HOUR),
    });
    const requested = await ok(p.lessee, 'POST', '/lease/v1/lease_requests', {
      start_time: formatLeaseTime(T0 + 6 * HOUR),
      end_time: formatLeaseTime(T0 + 7 * HOUR),
      groups: [{ count: 1, resource_class: 'doc-class' }],
    });
    expectValid(LeaseCollection, requested, 'POST /lease_requests');
    expect(requested.leases.length).toBe(1);
  });

  it('lease: webhooks and their deliveries, as their project, admin and another project', async () => {
    const hook = await ok(p.owner, 'POST', '/lease/v1/webhooks', {
      url: 'http://127.0.0.1:9/doc',
      secret: 'doc-webhook-secret-0123456789',
    });
    expectValid(WebhookResponse, hook, 'POST /webhooks');
    const named = await ok(p.admin, 'POST', '/lease/v1/webhooks', {
      url: 'http://127.0.0.1:9/doc-l1',
      secret: 'doc-webhook-secret-9876543210',
      name: 'for l1',
      project_id: p.lessee.projectId,
      event_types: ['esi_leap.lease.*'],
      enabled: false,
    });
    expectValid(WebhookResponse, named, 'POST /webhooks (admin, for a project)');
    expectValid(WebhookResponse, await ok(p.owner, 'PATCH', `/lease/v1/webhooks/${hook.uuid}`, { name: 'renamed' }), 'PATCH');
    // An event for the owner's hook: a new offer.
    const node = await ownerNode('doc-il4');
    await ok(p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: node,
      start_time: formatLeaseTime(T0 + HOUR),
      end_time: formatLeaseTime(T0 + 2 * HOUR),
    });
    for (const who of [p.owner, p.admin]) {
      expectValid(WebhookCollection, await ok(who, 'GET', '/lease/v1/webhooks'), `${who.name} webhooks`);
      expectValid(WebhookResponse, await ok(who, 'GET', `/lease/v1/webhooks/${hook.uuid}`), `${who.name} webhook`);
      const deliveries = await ok(who, 'GET', `/lease/v1/webhooks/${hook.uuid}/deliveries`);
      expectValid(WebhookDeliveryCollection, deliveries, `${who.name} deliveries`);
      expect(deliveries.deliveries.length, who.name).toBeGreaterThan(0);
    }
    expectValid(WebhookResponse, await ok(p.lessee, 'GET', `/lease/v1/webhooks/${named.uuid}`), 'lessee webhook made for it');
    expectValid(WebhookCollection, await ok(p.other, 'GET', '/lease/v1/webhooks'), 'other webhooks');
    expectValid(NullAnswer, await ok(p.owner, 'DELETE', `/lease/v1/webhooks/${hook.uuid}`), 'DELETE /webhooks');
  });
});
