/**
 * External events (`POST /v1/events`, API 1.54, Ironic 21.4 `EventsController`): a valid body of
 * Neutron port events is 204 for admins, 403 for project callers (owner, lessee, another
 * project), 401 anonymous; the body is checked first (400 for every caller, Ironic's validating
 * decorator runs before the policy); 404 before 1.54; other methods 405. Nothing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, expectError } from './helpers.ts';

let ts: TestServer;
let p: Personas;
const V = '1.54';
const EVENT = {
  event: 'network.bind_port',
  port_id: '0b8ae4a2-6c61-4a5e-9f1e-3f4f7b1c2d3e',
  mac_address: '52:54:00:aa:bb:cc',
  status: 'ACTIVE',
};

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
});
afterAll(async () => ts?.close());

describe('POST /v1/events', () => {
  it('admins 204; project callers 403; anonymous 401; 404 before 1.54; other methods 405', async () => {
    const body = { events: [EVENT, { ...EVENT, event: 'network.delete_port', device_id: null, 'binding:host_id': null }] };
    const ok = await bm(ts, p.admin, 'POST', '/v1/events', body, V);
    expect(ok.status, ok.text).toBe(204);
    expect(ok.text).toBe('');
    for (const who of [p.owner, p.lessee, p.other]) expectError(await bm(ts, who, 'POST', '/v1/events', body, V), 403);
    expect((await bm(ts, null, 'POST', '/v1/events', body, V)).status).toBe(401);
    expect((await bm(ts, p.admin, 'POST', '/v1/events', body, '1.53')).status).toBe(404);
    const get = await bm(ts, p.admin, 'GET', '/v1/events', undefined, V);
    expect(get.status).toBe(405);
  });

  it('refuses bodies Ironic refuses (400), before the policy', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ events: [] }, /too short/],
      [{}, /'events' is a required property/],
      [{ events: [EVENT], extra: 1 }, /Additional properties are not allowed \('extra'/],
      [{ events: [{ ...EVENT, event: 'network.other' }] }, /must be one of network\.bind_port/],
      [{ events: [{ ...EVENT, status: undefined }] }, /'status' is a required property/],
      [{ events: [{ ...EVENT, status: 3 }] }, /status is not of type 'string'/],
      [{ events: [{ ...EVENT, colour: 'red' }] }, /Additional properties are not allowed \('colour'/],
      [{ events: [{ ...EVENT, port_id: 'not-a-uuid' }] }, /Expected UUID for port_id/],
      [{ events: [{ ...EVENT, 'binding:host_id': 'host-1' }] }, /Expected UUID for binding:host_id/],
      [{ events: [{ ...EVENT, mac_address: 'zz' }] }, /Expected a MAC address/],
      [{ events: [{ ...EVENT, device_id: 7 }] }, /device_id is not of type 'string', 'null'/],
      [[EVENT], /not of type 'object'/],
      [{ events: [{ ...EVENT, status: 'x'.repeat(256) }] }, /status is longer than 255 characters/],
    ];
    for (const [body, message] of cases) {
      expectError(await bm(ts, p.admin, 'POST', '/v1/events', body, V), 400, message);
      expectError(await bm(ts, p.lessee, 'POST', '/v1/events', body, V), 400, message);
    }
  });
});
