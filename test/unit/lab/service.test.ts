/**
 * The lab's Redfish service over real HTTP: protocol documents, authentication (Basic and
 * sessions), error bodies, 404/405 (DSP0266).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../src/lab/index.ts';
import { ADMIN, call, messageIds } from './helpers.ts';

let lab: Lab;

beforeAll(async () => {
  lab = await startLab({ nodes: 2, port: 0 });
});
afterAll(async () => {
  await lab.close();
});

describe('protocol documents', () => {
  it('serves the service root without credentials, with links sushy needs', async () => {
    for (const path of ['/redfish/v1/', '/redfish/v1']) {
      const r = await call(lab, 'GET', path, null);
      expect(r.status).toBe(200);
      expect(r.headers.get('odata-version')).toBe('4.0');
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(r.body).toMatchObject({
        '@odata.id': '/redfish/v1/',
        Id: 'RootService',
        RedfishVersion: '1.11.0',
        Systems: { '@odata.id': '/redfish/v1/Systems' },
        Managers: { '@odata.id': '/redfish/v1/Managers' },
        Chassis: { '@odata.id': '/redfish/v1/Chassis' },
        SessionService: { '@odata.id': '/redfish/v1/SessionService' },
        Links: { Sessions: { '@odata.id': '/redfish/v1/SessionService/Sessions' } },
      });
      expect(r.body['@odata.type']).toMatch(/^#ServiceRoot\.v1_\d+_\d+\.ServiceRoot$/);
      expect(r.body.UUID).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('serves /redfish, the OData service document and $metadata without credentials', async () => {
    expect((await call(lab, 'GET', '/redfish', null)).body).toEqual({ v1: '/redfish/v1/' });
    const odata = await call(lab, 'GET', '/redfish/v1/odata', null);
    expect(odata.status).toBe(200);
    expect(odata.body.value.map((v: { name: string }) => v.name)).toContain('Systems');
    const meta = await call(lab, 'GET', '/redfish/v1/$metadata', null);
    expect(meta.status).toBe(200);
    expect(meta.headers.get('content-type')).toMatch(/^application\/xml/);
    expect(meta.text).toContain('ServiceRoot.v1_11_0');
  });
});

describe('authentication', () => {
  it('refuses every other resource without credentials with a Redfish 401 body', async () => {
    for (const path of ['/redfish/v1/Systems', '/redfish/v1/Systems/node-0', '/redfish/v1/Managers', '/redfish/v1/SessionService']) {
      const r = await call(lab, 'GET', path, null);
      expect(r.status).toBe(401);
      expect(r.headers.get('odata-version')).toBe('4.0');
      expect(r.body.error.code).toMatch(/^Base\.1\.\d+\.GeneralError$/);
      expect(typeof r.body.error.message).toBe('string');
      expect(messageIds(r.body)).toEqual(['Base.1.11.NoValidSession']);
    }
    const post = await call(lab, 'POST', '/redfish/v1/Systems/node-0/Actions/ComputerSystem.Reset', null, { ResetType: 'On' });
    expect(post.status).toBe(401);
    expect(lab.systems.powerState('node-0')).toBe('Off');
  });

  it('refuses wrong Basic credentials and a bogus token', async () => {
    expect((await call(lab, 'GET', '/redfish/v1/Systems', { basic: ['admin', 'wrong'] })).status).toBe(401);
    expect((await call(lab, 'GET', '/redfish/v1/Systems', { basic: ['root', 'password'] })).status).toBe(401);
    expect((await call(lab, 'GET', '/redfish/v1/Systems', { token: 'bogus' })).status).toBe(401);
  });

  it('accepts HTTP Basic admin/password', async () => {
    const r = await call(lab, 'GET', '/redfish/v1/Systems', ADMIN);
    expect(r.status).toBe(200);
  });

  it('creates, uses, lists, reads and deletes a session', async () => {
    const created = await call(lab, 'POST', '/redfish/v1/SessionService/Sessions', null, { UserName: 'admin', Password: 'password' });
    expect(created.status).toBe(201);
    const token = created.headers.get('x-auth-token');
    const location = created.headers.get('location');
    expect(token).toBeTruthy();
    expect(location).toMatch(/^\/redfish\/v1\/SessionService\/Sessions\/[0-9a-f]+$/);
    expect(created.body).toMatchObject({ '@odata.id': location, UserName: 'admin', Password: null });
    expect(created.text).not.toContain('password');
    expect(created.text).not.toContain(token!);

    const auth = { token: token! };
    expect((await call(lab, 'GET', '/redfish/v1/Systems/node-0', auth)).status).toBe(200);
    const svc = await call(lab, 'GET', '/redfish/v1/SessionService', auth);
    expect(svc.body).toMatchObject({
      ServiceEnabled: true,
      SessionTimeout: 1800,
      Sessions: { '@odata.id': '/redfish/v1/SessionService/Sessions' },
    });
    const list = await call(lab, 'GET', '/redfish/v1/SessionService/Sessions', auth);
    expect(list.body.Members).toContainEqual({ '@odata.id': location });
    expect(list.body['Members@odata.count']).toBe(list.body.Members.length);
    const one = await call(lab, 'GET', location!, auth);
    expect(one.body).toMatchObject({ UserName: 'admin', Password: null });

    expect((await call(lab, 'DELETE', location!, auth)).status).toBe(204);
    expect((await call(lab, 'GET', '/redfish/v1/Systems', auth)).status).toBe(401);
    expect((await call(lab, 'DELETE', location!, ADMIN)).status).toBe(404);
  });

  it('refuses a session for wrong credentials (401) or a body without them (400)', async () => {
    const wrong = await call(lab, 'POST', '/redfish/v1/SessionService/Sessions', null, { UserName: 'admin', Password: 'nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('x-auth-token')).toBeNull();
    const missing = await call(lab, 'POST', '/redfish/v1/SessionService/Sessions', null, { UserName: 'admin' });
    expect(missing.status).toBe(400);
    expect(messageIds(missing.body)).toEqual(['Base.1.11.PropertyMissing']);
  });

  it('ends every session on expireSessions()', async () => {
    const created = await call(lab, 'POST', '/redfish/v1/SessionService/Sessions', null, { UserName: 'admin', Password: 'password' });
    const auth = { token: created.headers.get('x-auth-token')! };
    expect((await call(lab, 'GET', '/redfish/v1/Systems', auth)).status).toBe(200);
    lab.expireSessions();
    expect((await call(lab, 'GET', '/redfish/v1/Systems', auth)).status).toBe(401);
  });

  it('uses configured credentials', async () => {
    const other = await startLab({ nodes: 1, username: 'root', password: 's3cret' });
    try {
      expect((await call(other, 'GET', '/redfish/v1/Systems', ADMIN)).status).toBe(401);
      expect((await call(other, 'GET', '/redfish/v1/Systems', { basic: ['root', 's3cret'] })).status).toBe(200);
    } finally {
      await other.close();
    }
  });
});

describe('errors', () => {
  it('answers 404 with a Redfish body for unknown resources', async () => {
    for (const path of [
      '/redfish/v1/Systems/node-7',
      '/redfish/v1/Systems/node-0/EthernetInterfaces/nic9',
      '/redfish/v1/Systems/node-0/Processors/CPU9',
      '/redfish/v1/Managers/bmc-node-9',
      '/redfish/v1/Chassis/nope',
      '/redfish/v1/NoSuchThing',
      '/redfish/v1/SessionService/Sessions/nope',
    ]) {
      const r = await call(lab, 'GET', path);
      expect(r.status, path).toBe(404);
      expect(messageIds(r.body), path).toEqual(['Base.1.11.ResourceMissingAtURI']);
      expect(r.headers.get('odata-version')).toBe('4.0');
    }
    const reset = await call(lab, 'POST', '/redfish/v1/Systems/node-9/Actions/ComputerSystem.Reset', ADMIN, { ResetType: 'On' });
    expect(reset.status).toBe(404);
  });

  it('answers 405 with Allow for unsupported methods', async () => {
    const put = await call(lab, 'PUT', '/redfish/v1/Systems/node-0', ADMIN, {});
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, PATCH, HEAD');
    expect((await call(lab, 'GET', '/redfish/v1/Systems/node-0/Actions/ComputerSystem.Reset')).status).toBe(405);
    expect((await call(lab, 'DELETE', '/redfish/v1/Systems')).status).toBe(405);
  });

  it('answers 400 MalformedJSON for a body that is not JSON', async () => {
    const r = await call(lab, 'POST', '/redfish/v1/Systems/node-0/Actions/ComputerSystem.Reset', ADMIN, '{"ResetType":');
    expect(r.status).toBe(400);
    expect(messageIds(r.body)).toEqual(['Base.1.11.MalformedJSON']);
  });
});
