/**
 * Node and driver vendor passthru (Ironic 21.4 `NodeVendorPassthruController`,
 * `DriverPassthruController`): the fake-hardware node's fake vendor methods (Ironic's
 * `FakeVendorB`: async 202, sync 200 with the result, argument checks, HTTP verbs), a node with
 * `no-vendor` and the real drivers (no methods; "No handler for method …"), the errors of a call
 * without a method, the personas (node vendor passthru is the admin's: owner and lessee 403, a
 * node another project may not see 404), and driver-level passthru.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, createNode, expectError, forceNode } from './helpers.ts';

let ts: TestServer;
let p: Personas;
let fake: any;
let novendor: any;

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
  fake = await createNode(ts, p, { name: 'vp-fake' });
  novendor = await createNode(ts, p, { name: 'vp-none', vendor_interface: 'no-vendor' });
});
afterAll(async () => ts?.close());

const methods = (ident: string, who = p.admin) => bm(ts, who, 'GET', `/v1/nodes/${ident}/vendor_passthru/methods`);
const call = (ident: string, method: string | null, body?: unknown, verb = 'POST', who = p.admin) =>
  bm(ts, who, verb, `/v1/nodes/${ident}/vendor_passthru${method === null ? '' : `?method=${method}`}`, body);

describe('node vendor passthru', () => {
  it('lists the fake vendor interface’s methods as Ironic describes them', async () => {
    expect(fake.vendor_interface).toBe('fake');
    const r = await methods(fake.uuid);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({
      fourth_method_shared_lock: {
        http_methods: ['POST'],
        async: true,
        description: 'Test if the value of bar is woof',
        attach: false,
        require_exclusive_lock: false,
      },
      second_method: {
        http_methods: ['POST'],
        async: true,
        description: 'Test if the value of bar is kazoo',
        attach: false,
        require_exclusive_lock: true,
      },
      third_method_sync: {
        http_methods: ['POST'],
        async: false,
        description: 'Test if the value of bar is meow',
        attach: false,
        require_exclusive_lock: true,
      },
    });
    expect((await methods('vp-fake')).body).toEqual(r.body);
  });

  it('calls them: async 202 without a body, sync 200 with the result; checks arguments and HTTP verbs', async () => {
    const async = await call(fake.uuid, 'second_method', { bar: 'kazoo' });
    expect(async.status, async.text).toBe(202);
    expect(async.text).toBe('');
    const yes = await call(fake.uuid, 'third_method_sync', { bar: 'meow' });
    expect(yes.status).toBe(200);
    expect(yes.body).toBe(true);
    expect((await call(fake.uuid, 'third_method_sync', { bar: 'woof' })).body).toBe(false);
    expectError(await call(fake.uuid, 'second_method', {}), 400, /^Parameter 'bar' not passed to method 'second_method'\.$/);
    expectError(await call(fake.uuid, 'second_method'), 400, /Parameter 'bar' not passed/);
    expectError(
      await call(fake.uuid, 'third_method_sync', { bar: 'meow' }, 'PUT'),
      400,
      /^The method third_method_sync does not support HTTP PUT$/,
    );
    expectError(await call(fake.uuid, 'second_method', undefined, 'GET'), 400, /does not support HTTP GET/);
    expectError(await call(fake.uuid, 'nope', {}), 400, /^No handler for method nope$/);
    expectError(await call(fake.uuid, 'third_method_sync', [1]), 400, /must be a JSON object/);
  });

  it('names the method in the path too, as python-ironicclient calls it (not both ways at once)', async () => {
    const r = await bm(ts, p.admin, 'POST', `/v1/nodes/${fake.uuid}/vendor_passthru/third_method_sync`, { bar: 'meow' });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toBe(true);
    expect((await bm(ts, p.admin, 'POST', `/v1/nodes/vp-fake/vendor_passthru/second_method`, { bar: 'kazoo' })).status).toBe(202);
    expectError(await bm(ts, p.admin, 'GET', `/v1/nodes/${fake.uuid}/vendor_passthru/nope`), 400, /^No handler for method nope$/);
    expectError(await bm(ts, p.admin, 'POST', `/v1/nodes/${fake.uuid}/vendor_passthru/methods`, {}), 400, /No handler for method methods/);
    expectError(
      await bm(ts, p.admin, 'POST', `/v1/nodes/${fake.uuid}/vendor_passthru/second_method?method=third_method_sync`, { bar: 'x' }),
      400,
      /named twice/,
    );
    expectError(await bm(ts, p.admin, 'POST', '/v1/drivers/fake-hardware/vendor_passthru/x', {}), 400, /^No handler for method x$/);
    expectError(await bm(ts, p.owner, 'POST', `/v1/nodes/${fake.uuid}/vendor_passthru/second_method`, { bar: 'kazoo' }), 403);
    expectError(await bm(ts, p.other, 'POST', `/v1/nodes/${fake.uuid}/vendor_passthru/second_method`, { bar: 'kazoo' }), 404);
  });

  it('a method that needs the exclusive lock is 409 while a conductor holds the node; a shared-lock one runs', async () => {
    const n = await createNode(ts, p, { name: 'vp-locked' });
    await forceNode(ts, n.uuid, { reservation: 'another-conductor' });
    expectError(await call(n.uuid, 'third_method_sync', { bar: 'meow' }), 409, /is locked by host another-conductor/);
    expect((await call(n.uuid, 'fourth_method_shared_lock', { bar: 'woof' })).status).toBe(202);
    await forceNode(ts, n.uuid, { reservation: null });
  });

  it('a node without a vendor interface, and the real drivers, have no methods: {} and "No handler for method …"', async () => {
    expect((await methods(novendor.uuid)).body).toEqual({});
    expectError(await call(novendor.uuid, 'second_method', { bar: 'kazoo' }), 400, /^No handler for method second_method$/);
    const redfish = await createNode(ts, p, {
      name: 'vp-redfish',
      driver: 'redfish',
      driver_info: { redfish_address: 'http://127.0.0.1:1' },
    });
    expect(redfish.vendor_interface).toBe('no-vendor');
    expect((await methods(redfish.uuid)).body).toEqual({});
    expectError(await call(redfish.uuid, 'anything', {}), 400, /No handler for method anything/);
  });

  it('a call names its method: absent 400 "Missing mandatory parameter", empty 400 "Method not specified"; other parameters 400', async () => {
    expectError(await call(fake.uuid, null, {}), 400, /^Missing mandatory parameter: method$/);
    expectError(await call(fake.uuid, '', {}), 400, /^Method not specified$/);
    expectError(
      await bm(ts, p.admin, 'POST', `/v1/nodes/${fake.uuid}/vendor_passthru?method=second_method&x=1`, { bar: 'x' }),
      400,
      /Unexpected arguments: x/,
    );
    expectError(await bm(ts, p.admin, 'GET', `/v1/nodes/${fake.uuid}/vendor_passthru/methods?x=1`), 400, /Unexpected arguments: x/);
    expectError(await methods('a%20b'), 400);
    expectError(await methods('no-such-node'), 404, /Node no-such-node could not be found/);
  });

  it('is the admin’s: the owner and the lessee 403, another project 404 (as a missing node), anonymous 401', async () => {
    for (const who of [p.owner, p.lessee]) {
      expectError(await methods(fake.uuid, who), 403);
      expectError(await call(fake.uuid, 'third_method_sync', { bar: 'meow' }, 'POST', who), 403);
    }
    expectError(await methods(fake.uuid, p.other), 404, /could not be found/);
    expectError(await call(fake.uuid, 'third_method_sync', { bar: 'meow' }, 'POST', p.other), 404);
    expectError(await methods(fake.uuid, p.anonymous), 401);
    expectError(await call(fake.uuid, 'third_method_sync', { bar: 'meow' }, 'POST', p.anonymous), 401);
  });
});

describe('driver vendor passthru', () => {
  it('no driver has driver-level methods: {} and "No handler for method …"; unknown driver 404; admin only', async () => {
    for (const driver of ['fake-hardware', 'ipmi', 'redfish']) {
      const r = await bm(ts, p.admin, 'GET', `/v1/drivers/${driver}/vendor_passthru/methods`);
      expect(r.status, r.text).toBe(200);
      expect(r.body).toEqual({});
      expectError(await bm(ts, p.admin, 'POST', `/v1/drivers/${driver}/vendor_passthru?method=x`, {}), 400, /^No handler for method x$/);
    }
    expectError(await bm(ts, p.admin, 'GET', '/v1/drivers/fake-hardware/vendor_passthru'), 400, /Missing mandatory parameter: method/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/drivers/fake-hardware/vendor_passthru?method='), 400, /^Method not specified$/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/drivers/nope/vendor_passthru/methods'), 404, /^The driver 'nope' is unknown\.$/);
    expectError(await bm(ts, p.admin, 'POST', '/v1/drivers/nope/vendor_passthru?method=x', {}), 404);
    for (const who of [p.owner, p.lessee, p.other]) {
      expectError(await bm(ts, who, 'GET', '/v1/drivers/fake-hardware/vendor_passthru/methods'), 403);
      expectError(await bm(ts, who, 'POST', '/v1/drivers/fake-hardware/vendor_passthru?method=x', {}), 403);
    }
    expectError(await bm(ts, p.anonymous, 'GET', '/v1/drivers/fake-hardware/vendor_passthru/methods'), 401);
  });
});
