/**
 * Request logs carry the request id the API returns (issue 19, item 2): at debug level each
 * request is logged on arrival and on completion with `reqId`, the value of the response's
 * `X-Openstack-Request-Id` — the caller's own id when it sent a valid one (as OpenStack's
 * request-id middleware does), else a new `req-<uuid>`. At info level requests are not logged
 * (the API's hot paths stay quiet). Personas: an authenticated owner and an anonymous caller.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLog } from '../../helpers/log-capture.ts';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';

let ts: TestServer;
let p: Personas;
const { logger, lines } = captureLog('debug');

beforeAll(async () => {
  ts = await startTestServer({ logger, env: { ESI_LOG_LEVEL: 'debug' } });
  p = await createPersonas(ts);
});
afterAll(async () => ts?.close());

describe('request ids in the request log', () => {
  it("logs the caller's id, and the one it made, as the response's X-Openstack-Request-Id", async () => {
    const mine = 'req-3f1c2b9e-1f0a-4b7e-9a51-2f7d1c0e8a11';
    const r = await call(ts, p.owner, 'GET', '/baremetal/v1/nodes', undefined, { 'x-openstack-request-id': mine });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-openstack-request-id')).toBe(mine);
    const anon = await call(ts, null, 'GET', '/baremetal/v1/nodes');
    expect(anon.status).toBe(401);
    const made = String(anon.headers.get('x-openstack-request-id'));
    expect(made).toMatch(/^req-[0-9a-f-]{36}$/);
    for (const id of [mine, made]) {
      const about = lines.filter((l) => l.reqId === id).map((l) => l.msg);
      expect(about).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
    }
    // A malformed id is not taken: a new one is made (no log injection through the header).
    const bad = await call(ts, p.owner, 'GET', '/baremetal/v1/nodes', undefined, { 'x-openstack-request-id': 'forged id; user=admin' });
    expect(bad.headers.get('x-openstack-request-id')).toMatch(/^req-[0-9a-f-]{36}$/);
  });
});
