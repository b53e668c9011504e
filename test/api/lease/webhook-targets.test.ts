/**
 * Webhook targets without the operator's `ESI_WEBHOOK_ALLOW_PRIVATE` (the production default):
 * a tenant's webhook may not name a loopback, private, link-local or reserved address, nor the
 * server's own, in any spelling (400, nothing written, on create and on update); a webhook admin
 * may name an internal receiver by IP address; a host name that resolves to a refused address
 * reaches nothing at delivery; and a failed delivery shows the tenant a fixed sentence, never
 * the transport's error with addresses and ports.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.ts';
import { at, countAny, DAY, enrolNode, expectFault, startLeaseEnv, waitUntil, type LeaseEnv } from './support.ts';

let env: LeaseEnv;
let receiver: http.Server;
let port: number;
const received: string[] = [];
const T = Date.now() + 10 * DAY;
const SECRET = 'target-test-secret-0123456789';

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    received.push(req.url ?? '/');
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  port = (receiver.address() as AddressInfo).port;
  env = await startLeaseEnv({
    env: { ESI_WEBHOOK_ALLOW_PRIVATE: 'false', ESI_WEBHOOK_POLL_MS: '40', ESI_WEBHOOK_RETRY_BASE_MS: '50', ESI_WEBHOOK_MAX_ATTEMPTS: '2' },
  });
});
afterAll(async () => {
  await env?.ts.close();
  await new Promise((r) => receiver?.close(r));
});

const hook = (persona: keyof LeaseEnv['p'], url: string, extra: Record<string, unknown> = {}) =>
  call(env.ts, env.p[persona], 'POST', '/lease/v1/webhooks', { url, secret: SECRET, event_types: ['esi_leap.offer.*'], ...extra });
const deliveries = async (persona: keyof LeaseEnv['p'], uuid: string) =>
  (await call(env.ts, env.p[persona], 'GET', `/lease/v1/webhooks/${uuid}/deliveries`)).body.deliveries;

/** Make an event o1's webhooks receive: an offer of a fresh node. */
async function offerEvent(name: string): Promise<void> {
  const r = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
    resource_uuid: await enrolNode(env, name),
    start_time: at(0, T),
    end_time: at(DAY, T),
  });
  expect(r.status, r.text).toBe(201);
}

describe('a tenant’s webhook reaches public addresses only', () => {
  it('refuses loopback, private, link-local, reserved and own addresses in any spelling (400, nothing written)', async () => {
    const before = await countAny(env, 'lease_webhooks');
    const urls = [
      `http://127.0.0.1:${port}/x`,
      'http://127.1/x',
      'http://2130706433/x',
      'http://0x7f000001/x',
      'http://[::1]/x',
      'http://[::ffff:127.0.0.1]/x',
      'http://localhost/x',
      'http://api.localhost./x',
      'http://10.0.0.5/x',
      'http://172.16.3.4/x',
      'http://192.168.1.10/x',
      'http://100.64.0.1/x',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fe80::1]/x',
      'http://[fd12:3456::1]/x',
      'http://0.0.0.0/x',
      'http://[::]/x',
      `${env.ts.url}/identity/v3`,
    ];
    for (const url of urls) {
      for (const p of ['owner', 'lessee'] as const)
        expectFault(await hook(p, url), 400, /Invalid webhook url: its host is .*; webhooks reach public addresses only\./);
    }
    expect(await countAny(env, 'lease_webhooks')).toBe(before);
  });

  it('accepts a public URL, but not a change of it to a private one', async () => {
    const ok = await hook('owner', 'https://hooks.example.com/esi');
    expect(ok.status, ok.text).toBe(201);
    const patch = await call(env.ts, env.p.owner, 'PATCH', `/lease/v1/webhooks/${ok.body.uuid}`, { url: `http://127.0.0.1:${port}/moved` });
    expectFault(patch, 400, /webhooks reach public addresses only/);
    expect((await call(env.ts, env.p.owner, 'GET', `/lease/v1/webhooks/${ok.body.uuid}`)).body.url).toBe('https://hooks.example.com/esi');
    expect((await call(env.ts, env.p.owner, 'DELETE', `/lease/v1/webhooks/${ok.body.uuid}`)).status).toBe(200);
  });
});

describe('webhook admins and deliveries', () => {
  it('an admin may register an internal receiver by IP address; it is delivered to', async () => {
    const r = await hook('admin', `http://127.0.0.1:${port}/admin-internal`, { project_id: 'o1' });
    expect(r.status, r.text).toBe(201);
    await offerEvent('wt-1');
    await waitUntil(async () => received.includes('/admin-internal'), 5000);
    // The delivery is recorded once the receiver's answer is in: wait for that record too.
    await waitUntil(async () => (await deliveries('admin', r.body.uuid))[0]?.status === 'delivered', 5000);
    expect((await deliveries('admin', r.body.uuid))[0]).toMatchObject({ status: 'delivered' });
  });

  it('a host name resolving to a refused address reaches nothing; the tenant sees a fixed sentence', async () => {
    const r = await hook('admin', `http://localhost:${port}/by-name`, { project_id: 'o1' });
    expect(r.status, r.text).toBe(201);
    await offerEvent('wt-2');
    await waitUntil(async () => (await deliveries('owner', r.body.uuid))[0]?.status === 'failed', 10_000);
    const [d] = await deliveries('owner', r.body.uuid);
    expect(d.last_error).toBe(
      "could not connect: the host resolves to an address webhooks may not reach (loopback, private, link-local or reserved, or this server's own)",
    );
    expect(received).not.toContain('/by-name');
  });
});
