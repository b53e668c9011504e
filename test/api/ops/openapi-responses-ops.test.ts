/**
 * The documented answers of the operations endpoints, esi's root, the OpenAPI documents, the
 * boot files and the version documents of the network, image, compute and lease APIs
 * (src/api/ops/response-schemas.ts, src/api/common/version-schemas.ts) compared with real
 * answers, as openapi-responses.test.ts does for the resources: JSON answers against their
 * schemas (anonymous, as load balancers, firmware and discovering clients call them, and with a
 * token, which changes nothing), non-JSON ones by their media type, and each route's documented
 * answer in the document.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, type Personas, startTestServer, type TestServer } from '../../helpers/harness.ts';
import { HealthResponse, OpenApiDocumentResponse, ReadinessResponse, RootResponse } from '../../../src/api/ops/response-schemas.ts';
import {
  ComputeVersionResponse,
  ComputeVersionsResponse,
  ImageVersionsResponse,
  LeaseRootResponse,
  LeaseVersionsResponse,
  NetworkResourcesResponse,
  NetworkVersionsResponse,
} from '../../../src/api/common/version-schemas.ts';
import { DOC_SERVICES } from '../../../src/api/docs/services.ts';
import { signBootMediaUrl } from '../../../src/domain/deploy/boot-media.ts';
import { loadSecretBox } from '../../../src/server/secret-key.ts';
import { asDocumented, expectValid } from './openapi-support.ts';

let ts: TestServer;
let p: Personas;

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
});
afterAll(async () => ts?.close());

/** GET anonymously (or as a persona), with the status, media type and body. */
async function get(url: string, who = p.anonymous): Promise<{ status: number; type: string; body: unknown }> {
  const r = await call(ts, who, 'GET', url);
  return { status: r.status, type: r.headers.get('content-type') ?? '', body: r.body };
}

describe('documented ops and discovery answers match real ones', () => {
  it('the root, health and readiness, anonymous and with a token', async () => {
    const cases: Array<[string, TSchema]> = [
      ['/', RootResponse],
      ['/healthz', HealthResponse],
      ['/readyz', ReadinessResponse],
    ];
    for (const who of [p.anonymous, p.owner])
      for (const [url, schema] of cases) {
        const r = await get(url, who);
        expect(r.status, url).toBe(200);
        expectValid(schema, r.body, `${who.name} GET ${url}`);
      }
  });

  it('metrics are Prometheus text', async () => {
    const r = await get('/metrics');
    expect(r.status).toBe(200);
    expect(r.type).toMatch(/^text\/plain/);
    expect(String(r.body)).toContain('# TYPE');
  });

  it('the OpenAPI documents, whole and per service', async () => {
    for (const url of ['/openapi.json', ...DOC_SERVICES.map((s) => `/openapi/${s.name}.json`)]) {
      const r = await get(url);
      expect(r.status, url).toBe(200);
      expectValid(OpenApiDocumentResponse, r.body, `GET ${url}`);
    }
  });

  it('the version documents of the network, image, compute and lease APIs, anonymous and with a token', async () => {
    const cases: Array<[string, number, TSchema]> = [
      ['/network', 200, NetworkVersionsResponse],
      ['/image', 300, ImageVersionsResponse],
      ['/image/versions', 200, ImageVersionsResponse],
      ['/compute', 200, ComputeVersionsResponse],
      ['/lease', 200, LeaseRootResponse],
      ['/compute/v2.1', 200, ComputeVersionResponse],
      ['/lease/v1', 300, LeaseVersionsResponse],
    ];
    for (const who of [p.anonymous, p.lessee])
      for (const [url, status, schema] of cases) {
        const r = await get(url, who);
        expect(r.status, url).toBe(status);
        expectValid(schema, r.body, `${who.name} GET ${url}`);
      }
    // The list of Neutron's resources needs a token, as every v2.0 route.
    for (const who of [p.admin, p.lessee]) {
      const r = await get('/network/v2.0', who);
      expect(r.status).toBe(200);
      expectValid(NetworkResourcesResponse, r.body, `${who.name} GET /network/v2.0`);
    }
  });

  it('boot scripts are text; signed boot media are bytes', async () => {
    for (const url of ['/boot/boot.ipxe', '/boot/node.ipxe?mac=52:54:00:00:00:99']) {
      const r = await get(url);
      expect([r.status, r.type.split(';')[0]], url).toEqual([200, 'text/plain']);
      expect(String(r.body), url).toMatch(/^#!ipxe\n/);
    }
    const uuid = '0b0c0d0e-1111-4222-8333-444455556666';
    const dir = path.join(ts.dataDir, 'boot-media');
    fs.mkdirSync(path.join(dir, uuid), { recursive: true });
    fs.writeFileSync(path.join(dir, `${uuid}.iso`), 'an iso');
    fs.writeFileSync(path.join(dir, uuid, 'kernel'), 'a kernel');
    const expires = Math.floor(Date.now() / 1000) + 600;
    for (const [file, content] of [
      ['iso', 'an iso'],
      ['kernel', 'a kernel'],
    ] as const) {
      const url = signBootMediaUrl(loadSecretBox(ts.config), ts.url, uuid, expires, file);
      const r = await fetch(url);
      expect([r.status, r.headers.get('content-type')], file).toEqual([200, 'application/octet-stream']);
      expect(await r.text()).toBe(content);
    }
  });

  it("the lease console answers a websocket's upgrade (101), whatever the token says afterwards", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${ts.url}/lease/console?token=not-a-token`, {
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        },
      });
      req.on('upgrade', (res, socket) => {
        socket.destroy();
        resolve(res.statusCode ?? 0);
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(101);
  });
});

describe('the ops and discovery response schemas', () => {
  it('are in the document, as the success answer of their routes', async () => {
    const doc = (await call(ts, p.anonymous, 'GET', '/openapi.json')).body;
    const json: Array<[string, TSchema, string]> = [
      ['/', RootResponse, '2XX'],
      ['/healthz', HealthResponse, '2XX'],
      ['/readyz', ReadinessResponse, '2XX'],
      ['/openapi.json', OpenApiDocumentResponse, '2XX'],
      ['/openapi/identity.json', OpenApiDocumentResponse, '2XX'],
      ['/network', NetworkVersionsResponse, '2XX'],
      ['/image', ImageVersionsResponse, '300'],
      ['/image/versions', ImageVersionsResponse, '2XX'],
      ['/compute', ComputeVersionsResponse, '2XX'],
      ['/lease', LeaseRootResponse, '2XX'],
      ['/network/v2.0', NetworkResourcesResponse, '2XX'],
      ['/compute/v2.1', ComputeVersionResponse, '2XX'],
      ['/lease/v1', LeaseVersionsResponse, '300'],
    ];
    for (const [url, schema, status] of json)
      expect(doc.paths[url]?.get?.responses?.[status]?.content?.['application/json']?.schema, url).toEqual(asDocumented(schema));
    const media: Array<[string, string]> = [
      ['/metrics', 'text/plain'],
      ['/boot/boot.ipxe', 'text/plain'],
      ['/boot/node.ipxe', 'text/plain'],
      ['/boot/media/{name}', 'application/octet-stream'],
      ['/boot/media/{uuid}/{file}', 'application/octet-stream'],
    ];
    for (const [url, type] of media) expect(Object.keys(doc.paths[url]?.get?.responses?.['2XX']?.content ?? {}), url).toEqual([type]);
    expect(doc.paths['/lease/console'].get.responses['101']).toEqual({ description: 'Success, without a body' });
    for (const url of ['/lease', '/lease/console']) expect(doc.paths[url].get.security, url).toEqual([]);
  });
});
