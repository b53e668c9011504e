/**
 * Identity API: version discovery and the Keystone error format for every kind of failure
 * (unknown routes, malformed JSON, wrong content type, oversized bodies, missing tokens).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { expectKeystoneError, expectStatuses, tokenPersona } from './support.ts';

let ts: TestServer;
let personas: Personas;

beforeAll(async () => {
  ts = await startTestServer({ env: { ESI_MAX_BODY_BYTES: '4096' } });
  personas = await createPersonas(ts);
});
afterAll(async () => ts?.close());

describe('version discovery', () => {
  it('GET /identity and /identity/ answer 300 with the v3 document, for every caller', async () => {
    for (const path of ['/identity', '/identity/']) {
      const res = await expectStatuses(ts, personas, 'GET', () => ({ path }), {
        admin: 300,
        owner: 300,
        lessee: 300,
        other: 300,
        anonymous: 300,
      });
      const values = res.anonymous.body.versions.values;
      expect(values).toHaveLength(1);
      expect(values[0]).toMatchObject({ id: 'v3.14', status: 'stable', links: [{ rel: 'self', href: `${ts.url}/identity/v3/` }] });
    }
  });

  it('GET /identity/v3 describes v3 with its media type', async () => {
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: '/identity/v3' }), {
      admin: 200,
      owner: 200,
      lessee: 200,
      other: 200,
      anonymous: 200,
    });
    expect(res.anonymous.body).toEqual({
      version: {
        id: 'v3.14',
        status: 'stable',
        updated: '2020-04-07T00:00:00Z',
        links: [{ rel: 'self', href: `${ts.url}/identity/v3/` }],
        'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }],
      },
    });
  });

  it('a bad token does not matter on public routes', async () => {
    const res = await call(ts, tokenPersona('not-a-token'), 'GET', '/identity/v3');
    expect(res.status).toBe(200);
  });
});

describe('errors in Keystone format', () => {
  it('unknown routes are 404 with or without a token', async () => {
    for (const path of ['/identity/v3/nothing-here', '/identity/v2.0/tenants', '/identity/v3/projects/x/y/z']) {
      const res = await expectStatuses(ts, personas, 'GET', () => ({ path }), {
        admin: 404,
        owner: 404,
        lessee: 404,
        other: 404,
        anonymous: 404,
      });
      expect(res.anonymous.body.error).toEqual({ code: 404, title: 'Not Found', message: 'The resource could not be found.' });
    }
  });

  it('a protected route without a token is 401 with WWW-Authenticate', async () => {
    const res = await call(ts, personas.anonymous, 'GET', '/identity/v3/projects');
    expectKeystoneError(res, 401, /requires authentication/);
    expect(res.body.error.title).toBe('Unauthorized');
    expect(res.headers.get('www-authenticate')).toBe(`Keystone uri="${ts.url}/identity"`);
  });

  it('an invalid token is 401', async () => {
    expectKeystoneError(await call(ts, tokenPersona('x'.repeat(43)), 'GET', '/identity/v3/projects'), 401);
    expectKeystoneError(await call(ts, tokenPersona('y'.repeat(600)), 'GET', '/identity/v3/projects'), 401);
  });

  it('malformed JSON is 400 ValidationError and creates nothing', async () => {
    for (const body of ['{"project": {"name": "broken"', '{"project": {"name": "broken"}} trailing']) {
      const res = await call(ts, personas.admin, 'POST', '/identity/v3/projects', body);
      expectKeystoneError(res, 400, /Expecting to find valid JSON in request body/);
      expect(res.body.error.title).toBe('Bad Request');
    }
    // An empty body is no body (as Keystone's JSON middleware takes it): the schema refuses it.
    expectKeystoneError(await call(ts, personas.admin, 'POST', '/identity/v3/projects', ''), 400);
    const list = await call(ts, personas.admin, 'GET', '/identity/v3/projects?name=broken');
    expect(list.body.projects).toEqual([]);
  });

  it('a prototype-poisoning body is refused', async () => {
    const res = await call(ts, null, 'POST', '/identity/v3/auth/tokens', '{"__proto__": {"admin": true}}');
    expectKeystoneError(res, 400);
  });

  it('a body that is not JSON is refused', async () => {
    const res = await call(ts, personas.admin, 'POST', '/identity/v3/projects', 'name=x', { 'content-type': 'text/plain' });
    expectKeystoneError(res, 415, /application\/json/);
  });

  it('an oversized body is 413 and creates nothing', async () => {
    const body = JSON.stringify({ project: { name: 'huge', description: 'x'.repeat(8192) } });
    const res = await call(ts, personas.admin, 'POST', '/identity/v3/projects', body);
    expectKeystoneError(res, 413);
    expect(res.body.error.title).toBe('Request Entity Too Large');
    const list = await call(ts, personas.admin, 'GET', '/identity/v3/projects?name=huge');
    expect(list.body.projects).toEqual([]);
  });

  it('responses carry OpenStack request ids', async () => {
    const res = await call(ts, personas.admin, 'GET', '/identity/v3/projects');
    expect(res.headers.get('x-openstack-request-id')).toMatch(/^req-[0-9a-f-]{36}$/);
  });
});
