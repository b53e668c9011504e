/**
 * `/lease/v1/webhooks`: per-project webhooks for every persona, delivered to a real HTTP receiver
 * on 127.0.0.1 started by the test — HMAC-SHA256 signed, retried with exponential back-off,
 * marked failed after the last attempt, delivery status visible through the API — for lease
 * created / started / ending soon / ended and offer changes. Secrets are write-only: never in a
 * response, sealed at rest. Bad input is 400 and writes nothing.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { call } from '../../helpers/harness.ts';
import { at, countAny, DAY, enrolNode, expectFault, startLeaseEnv, waitUntil, type LeaseEnv } from './support.ts';

let env: LeaseEnv;
const T = Date.now() + 10 * DAY;
const SECRET = 'lessee-webhook-secret-0123456789';
const RETRY_BASE_MS = 150;

interface Received {
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  readonly at: number;
}

/** A receiver: records every POST; answers with the status `plan(path, n)` gives the n-th call of a path. */
let receiver: http.Server;
let base: string;
const received: Received[] = [];
const plans = new Map<string, number[]>();

function byPath(path: string): Received[] {
  return received.filter((r) => r.path === path);
}

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body, at: Date.now() });
      const plan = plans.get(path);
      res.statusCode = plan && plan.length > 0 ? plan.shift()! : 200;
      res.end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => receiver?.close(r));
});

/** Start a server of its own (the receiver's record starts empty) for what runs next. */
async function startServer(): Promise<void> {
  received.length = 0;
  plans.clear();
  env = await startLeaseEnv({
    env: {
      ESI_WEBHOOK_POLL_MS: '40',
      ESI_WEBHOOK_RETRY_BASE_MS: String(RETRY_BASE_MS),
      ESI_WEBHOOK_MAX_ATTEMPTS: '3',
      ESI_LEASE_WARNING_TIME: '60',
    },
  });
}

/** A server of its own for the tests of one describe block (`eachTest`: for each test), then `fixture`. */
function freshServer(fixture: () => Promise<void> = async () => {}, options: { eachTest?: boolean } = {}): void {
  (options.eachTest ? beforeEach : beforeAll)(async () => {
    await startServer();
    await fixture();
  });
  (options.eachTest ? afterEach : afterAll)(async () => env?.ts.close());
}

const post = (persona: keyof LeaseEnv['p'], body: unknown) => call(env.ts, env.p[persona], 'POST', '/lease/v1/webhooks', body);
const deliveries = async (persona: keyof LeaseEnv['p'], uuid: string) =>
  (await call(env.ts, env.p[persona], 'GET', `/lease/v1/webhooks/${uuid}/deliveries`)).body.deliveries;

let lesseeHook: string;
let ownerHook: string;

/**
 * The webhooks the other tests use: l1's (lease events only, signed with SECRET), o1's (every
 * event), o2's, and one an admin made for l1, disabled.
 */
async function withHooks(): Promise<void> {
  const made = async (persona: keyof LeaseEnv['p'], body: Record<string, unknown>): Promise<string> => {
    const r = await post(persona, body);
    expect(r.status, r.text).toBe(201);
    return r.body.uuid as string;
  };
  lesseeHook = await made('lessee', { url: `${base}/l1`, secret: SECRET, name: 'l1-hook', event_types: ['esi_leap.lease.*'] });
  ownerHook = await made('owner', { url: `${base}/o1`, secret: 'owner-webhook-secret-0123456789' });
  await made('other', { url: `${base}/o2`, secret: 'other-webhook-secret-0123456789' });
  await made('admin', { url: `${base}/admin-for-l1`, secret: 'admin-webhook-secret-0123456789', project_id: 'l1', enabled: false });
}

describe('webhook API for every persona', () => {
  describe('creating', () => {
    freshServer();

    it('lessee: 201; the secret is write-only (****** in every answer, sealed in the database)', async () => {
      const r = await post('lessee', { url: `${base}/l1`, secret: SECRET, name: 'l1-hook', event_types: ['esi_leap.lease.*'] });
      expect(r.status, r.text).toBe(201);
      expect(r.body).toMatchObject({
        project_id: env.p.lessee.projectId,
        name: 'l1-hook',
        url: `${base}/l1`,
        secret: '******',
        event_types: ['esi_leap.lease.*'],
        enabled: true,
      });
      const hook = r.body.uuid;
      expect(JSON.stringify((await call(env.ts, env.p.lessee, 'GET', '/lease/v1/webhooks')).body)).not.toContain(SECRET);
      expect(JSON.stringify((await call(env.ts, env.p.lessee, 'GET', `/lease/v1/webhooks/${hook}`)).body)).not.toContain(SECRET);
      const row = await env.ts.server.services.store.db
        .selectFrom('lease_webhooks')
        .select('secret')
        .where('uuid', '=', hook)
        .executeTakeFirstOrThrow();
      expect(row.secret).toMatch(/^enc:v1:/);
      expect(row.secret).not.toContain(SECRET);
    });

    it('owner and another project: 201 for their own project; naming another project needs an admin', async () => {
      const r = await post('owner', { url: `${base}/o1`, secret: 'owner-webhook-secret-0123456789' });
      expect(r.status, r.text).toBe(201);
      expect((await post('other', { url: `${base}/o2`, secret: 'other-webhook-secret-0123456789' })).status).toBe(201);
      expectFault(
        await post('owner', { url: `${base}/x`, secret: 'owner-webhook-secret-0123456789', project_id: 'l1' }),
        403,
        'Access was denied to esi_leap:webhook:webhook_admin.',
      );
      const admin = await post('admin', {
        url: `${base}/admin-for-l1`,
        secret: 'admin-webhook-secret-0123456789',
        project_id: 'l1',
        enabled: false,
      });
      expect(admin.status, admin.text).toBe(201);
      expect(admin.body).toMatchObject({ project_id: env.p.lessee.projectId, enabled: false });
      expectFault(await post('anonymous', { url: `${base}/x`, secret: 'anonymous-secret-0123456789' }), 401);
    });
  });

  describe('with the webhooks of l1, o1, o2 and the admin’s for l1', () => {
    freshServer(withHooks);

    it('GET: a project sees its own; admin all; another project gets 404 on one; anonymous 401', async () => {
      const names = async (p: keyof LeaseEnv['p'], q = '') =>
        (await call(env.ts, env.p[p], 'GET', `/lease/v1/webhooks${q}`)).body.webhooks.map((w: any) => w.url.slice(base.length));
      expect((await names('lessee')).sort()).toEqual(['/admin-for-l1', '/l1']);
      expect(await names('owner')).toEqual(['/o1']);
      expect((await names('admin')).sort()).toEqual(['/admin-for-l1', '/l1', '/o1', '/o2']);
      expect(await names('admin', '?project_id=o2')).toEqual(['/o2']);
      expectFault(await call(env.ts, env.p.lessee, 'GET', '/lease/v1/webhooks?project_id=o1'), 403);
      for (const p of ['owner', 'other'] as const) {
        expectFault(
          await call(env.ts, env.p[p], 'GET', `/lease/v1/webhooks/${lesseeHook}`),
          404,
          `Webhook ${lesseeHook} could not be found.`,
        );
        expectFault(await call(env.ts, env.p[p], 'PATCH', `/lease/v1/webhooks/${lesseeHook}`, { enabled: false }), 404);
        expectFault(await call(env.ts, env.p[p], 'DELETE', `/lease/v1/webhooks/${lesseeHook}`), 404);
        expectFault(await call(env.ts, env.p[p], 'GET', `/lease/v1/webhooks/${lesseeHook}/deliveries`), 404);
      }
      expectFault(await call(env.ts, env.p.anonymous, 'GET', '/lease/v1/webhooks'), 401);
      expect((await call(env.ts, env.p.admin, 'GET', `/lease/v1/webhooks/${lesseeHook}`)).status).toBe(200);
    });
  });
});

describe('deliveries', () => {
  // Each test counts what the receiver got and what the webhooks delivered: a server for each.
  freshServer(withHooks, { eachTest: true });

  it('a claim is delivered to the lessee (lease events) and the owner (all events), signed', async () => {
    const node = await enrolNode(env, 'wh-1');
    const sent = Date.now();
    const offer = (
      await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', { resource_uuid: node, start_time: at(0, T), end_time: at(DAY, T) })
    ).body.uuid;
    const claim = await call(env.ts, env.p.lessee, 'POST', `/lease/v1/offers/${offer}/claim`, {
      start_time: at(0, T),
      end_time: at(3_600_000, T),
    });
    expect(claim.status).toBe(201);
    await waitUntil(async () => byPath('/l1').length >= 1 && byPath('/o1').length >= 2);
    const [got] = byPath('/l1');
    const body = JSON.parse(got!.body);
    expect(body.event).toMatchObject({
      event_type: 'esi_leap.lease.create',
      object_type: 'lease',
      object_uuid: claim.body.uuid,
      resource_uuid: node,
      lessee_id: env.p.lessee.projectId,
      owner_id: env.p.owner.projectId,
    });
    expect(body.object).toMatchObject({ uuid: claim.body.uuid, status: 'created', offer_uuid: offer, start_time: at(0, T) });
    expect(got!.headers['x-esi-event']).toBe('esi_leap.lease.create');
    expect(got!.headers['content-type']).toBe('application/json');
    const ts = got!.headers['x-esi-timestamp'] as string;
    // The signing time (whole seconds): after the claim was sent, no later than its arrival.
    expect(Number(ts)).toBeGreaterThanOrEqual(Math.floor(sent / 1000));
    expect(Number(ts) * 1000).toBeLessThanOrEqual(got!.at);
    const expected = `sha256=${createHmac('sha256', SECRET).update(`${ts}.${got!.body}`).digest('hex')}`;
    expect(got!.headers['x-esi-signature']).toBe(expected);
    // The owner receives both the offer creation and the claim (it subscribed to everything).
    expect(
      byPath('/o1')
        .map((r) => JSON.parse(r.body).event)
        .sort((a, b) => a.id - b.id)
        .map((e) => e.event_type),
    ).toEqual(['esi_leap.offer.create', 'esi_leap.lease.create']);
    // A disabled webhook got nothing; the other project got nothing.
    expect(byPath('/admin-for-l1')).toEqual([]);
    expect(byPath('/o2')).toEqual([]);
    const d = await deliveries('lessee', lesseeHook);
    expect(d).toHaveLength(1);
    expect(d[0]).toMatchObject({
      event_type: 'esi_leap.lease.create',
      status: 'delivered',
      attempts: 1,
      last_status_code: 200,
      last_error: null,
      next_attempt_at: null,
    });
    expect(got!.headers['x-esi-delivery']).toBe(String(d[0].id));
  });

  it('a failing receiver is retried with exponential back-off until it answers 2xx', async () => {
    const hook = await post('other', { url: `${base}/flaky`, secret: 'flaky-webhook-secret-0123456789' });
    plans.set('/flaky', [500, 503, 204]);
    const o = await call(env.ts, env.p.other, 'POST', '/lease/v1/offers', {
      resource_uuid: await enrolNode(env, 'wh-2', { owner: env.p.other.projectId }),
      start_time: at(0, T),
      end_time: at(DAY, T),
    });
    expect(o.status, o.text).toBe(201);
    await waitUntil(async () => byPath('/flaky').length >= 3);
    await waitUntil(async () => (await deliveries('other', hook.body.uuid))[0]?.status === 'delivered');
    const [a, b, c] = byPath('/flaky');
    expect(b!.at - a!.at).toBeGreaterThanOrEqual(RETRY_BASE_MS - 20);
    expect(c!.at - b!.at).toBeGreaterThanOrEqual(2 * RETRY_BASE_MS - 20);
    expect(new Set(byPath('/flaky').map((r) => r.headers['x-esi-delivery'])).size).toBe(1); // the same delivery id each time
    expect((await deliveries('other', hook.body.uuid))[0]).toMatchObject({ status: 'delivered', attempts: 3, last_status_code: 204 });
  });

  it('an unreachable receiver ends failed after the last attempt, with the kind of error visible (not the raw one)', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const hook = await post('owner', {
      url: `http://127.0.0.1:${port}/gone`,
      secret: 'gone-webhook-secret-0123456789',
      event_types: ['esi_leap.offer.delete'],
    });
    await call(
      env.ts,
      env.p.owner,
      'DELETE',
      `/lease/v1/offers/${(await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', { resource_uuid: await enrolNode(env, 'wh-3'), start_time: at(0, T), end_time: at(DAY, T) })).body.uuid}`,
    );
    await waitUntil(async () => (await deliveries('owner', hook.body.uuid))[0]?.status === 'failed');
    const [d] = await deliveries('owner', hook.body.uuid);
    expect(d).toMatchObject({
      event_type: 'esi_leap.offer.delete',
      status: 'failed',
      attempts: 3,
      last_status_code: null,
      delivered_at: null,
    });
    // A fixed sentence: the transport's own error names addresses and ports (a network map).
    expect(d.last_error).toBe('could not connect: the connection was refused');
  });

  it('lease started, ending soon and ended reach the lessee, each once', async () => {
    const n = await enrolNode(env, 'wh-4');
    // Started 40 s ago, ends in 30 s: 70 s long, longer than the 60 s warning → an ending-soon notice.
    const now = Date.now();
    const lease = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
      resource_uuid: n,
      project_id: 'l1',
      start_time: at(-40_000, now),
      end_time: at(30_000, now),
    });
    expect(lease.status, lease.text).toBe(201);
    // Deliveries are sent concurrently, so they may arrive out of order: order them by event id.
    const typesFor = () =>
      byPath('/l1')
        .map((r) => JSON.parse(r.body))
        .filter((b) => b.event.object_uuid === lease.body.uuid)
        .sort((a, b) => a.event.id - b.event.id)
        .map((b) => b.event.event_type);
    await waitUntil(async () => ['esi_leap.lease.fulfill.end', 'esi_leap.lease.ending_soon'].every((t) => typesFor().includes(t)));
    expect(typesFor()).toEqual(['esi_leap.lease.create', 'esi_leap.lease.fulfill.end', 'esi_leap.lease.ending_soon']);
    await call(env.ts, env.p.owner, 'DELETE', `/lease/v1/leases/${lease.body.uuid}`);
    await waitUntil(async () => typesFor().includes('esi_leap.lease.delete.end'));
    // Two more notice scans (each pass delivers what its scan recorded before the next pass
    // starts) must not repeat the notice.
    const scans = vi.spyOn(env.ts.server.services.leasing.notices, 'scan');
    await waitUntil(async () => scans.mock.settledResults.length >= 2);
    expect(typesFor()).toEqual([
      'esi_leap.lease.create',
      'esi_leap.lease.fulfill.end',
      'esi_leap.lease.ending_soon',
      'esi_leap.lease.delete.end',
    ]);
    const events = await call(env.ts, env.p.lessee, 'GET', `/lease/v1/events?event_type=esi_leap.lease.ending_soon`);
    expect(events.body.events.filter((e: any) => e.object_uuid === lease.body.uuid)).toHaveLength(1);
  });

  it('a disabled webhook gets no new deliveries; a deleted one loses its history', async () => {
    const node = await enrolNode(env, 'wh-5');
    const offer = (
      await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', { resource_uuid: node, start_time: at(0, T), end_time: at(DAY, T) })
    ).body.uuid;
    const first = await call(env.ts, env.p.lessee, 'POST', `/lease/v1/offers/${offer}/claim`, {
      start_time: at(0, T),
      end_time: at(3_600_000, T),
    });
    expect(first.status).toBe(201);
    await waitUntil(async () => (await deliveries('lessee', lesseeHook)).length >= 1);
    await call(env.ts, env.p.lessee, 'PATCH', `/lease/v1/webhooks/${lesseeHook}`, { enabled: false });
    const before = (await deliveries('lessee', lesseeHook)).length;
    await call(env.ts, env.p.lessee, 'POST', `/lease/v1/offers/${offer}/claim`, {
      start_time: at(2 * 3_600_000, T),
      end_time: at(3 * 3_600_000, T),
    });
    expect((await deliveries('lessee', lesseeHook)).length).toBe(before);
    expect((await call(env.ts, env.p.lessee, 'DELETE', `/lease/v1/webhooks/${lesseeHook}`)).status).toBe(200);
    expectFault(await call(env.ts, env.p.lessee, 'GET', `/lease/v1/webhooks/${lesseeHook}/deliveries`), 404);
  });
});

describe('bad input: 400, nothing written', () => {
  freshServer(withHooks);

  it('refuses bad URLs, secrets, event types and bodies', async () => {
    const ok = { url: `${base}/x`, secret: 'a-good-enough-secret-123' };
    const before = await countAny(env, 'lease_webhooks');
    const cases: Array<[unknown, RegExp | string]> = [
      [{ ...ok, url: 'ftp://example.com/' }, /scheme must be http or https/],
      [{ ...ok, url: 'https://u:p@example.com/' }, /user information/],
      [{ ...ok, url: 'example.com' }, /not an absolute URL/],
      [{ ...ok, secret: 'short' }, /16 to 256 characters/],
      [{ ...ok, event_types: ['esi_leap.lease.explode'] }, /Invalid event type esi_leap\.lease\.explode/],
      [{ ...ok, event_types: 'esi_leap.lease.create' }, /event_types.*list of strings/],
      [{ ...ok, enabled: 'yes' }, /enabled.*true or false/],
      [{ url: ok.url }, /secret.*Mandatory field missing/],
      [{ ...ok, uuid: 'x' }, /uuid.*read-only/],
      [{ ...ok, colour: 1 }, 'Unknown attribute for argument webhook: colour'],
      ['{"url":', 'The request body is not valid JSON.'],
    ];
    for (const [body, message] of cases) {
      const r = await post('owner', body);
      expectFault(r, 400, message);
      expect(r.text).not.toContain('a-good-enough-secret-123');
    }
    expectFault(await call(env.ts, env.p.owner, 'PATCH', `/lease/v1/webhooks/${ownerHook}`, {}), 400, /Nothing to update/);
    expectFault(
      await call(env.ts, env.p.owner, 'PATCH', `/lease/v1/webhooks/${ownerHook}`, { project_id: 'l1' }),
      400,
      /project_id.*read-only/,
    );
    expectFault(
      await call(env.ts, env.p.owner, 'GET', `/lease/v1/webhooks/${ownerHook}/deliveries?status=lost`),
      400,
      /Invalid status lost/,
    );
    expectFault(await call(env.ts, env.p.owner, 'GET', `/lease/v1/webhooks/${ownerHook}/deliveries?limit=0`), 400, /Invalid limit 0/);
    expectFault(await call(env.ts, env.p.owner, 'GET', `/lease/v1/webhooks/${ownerHook}/deliveries?limit=abc`), 400, /limit/);
    expect(await countAny(env, 'lease_webhooks')).toBe(before);
  });
});
