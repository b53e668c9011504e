/**
 * The dashboard's pages (src/api/dashboard/pages.ts): a browser at `/` and at every view URL gets
 * the app's index.html with a strict Content-Security-Policy, the same for every caller (the
 * pages hold no data); a JSON client at `/` still gets esi's service list; the bundle's files are
 * served with a year's cache and nothing outside the bundle is; unknown dashboard API paths are
 * 404s, not the app; without a build the pages say how to build it (503).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerDashboardPages, DEFAULT_WEB_ROOT } from '../../../src/api/dashboard/pages.ts';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';

const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

describe('served by esi (a built web/dist)', () => {
  let ts: TestServer;
  let p: Personas;
  beforeAll(async () => {
    ts = await startTestServer();
    p = await createPersonas(ts);
  });
  afterAll(async () => ts?.close());

  it('gives every caller the same app at / and at view URLs, with a strict CSP and no caching of the page', async () => {
    expect(existsSync(path.join(DEFAULT_WEB_ROOT, 'index.html')), 'npm run build:web').toBe(true);
    const bodies = new Set<string>();
    for (const who of [p.admin, p.owner, p.lessee, p.other, p.anonymous]) {
      for (const url of ['/', '/dashboard', '/dashboard/nodes', '/dashboard/nodes/abc', '/dashboard/admin/nodes/abc/history']) {
        const r = await call(ts, who, 'GET', url, undefined, HTML);
        expect(r.status, `${who.name} ${url}`).toBe(200);
        expect(r.headers.get('content-type')).toMatch(/^text\/html/);
        expect(r.headers.get('content-security-policy')).toMatch(/default-src 'self'; script-src 'self';.*frame-ancestors 'none'/);
        expect(r.headers.get('cache-control')).toBe('no-cache');
        bodies.add(r.text);
      }
    }
    expect(bodies.size).toBe(1);
    expect([...bodies][0]).toMatch(/<div id="root"><\/div>/);
  });

  it('keeps the JSON service list at / for API clients', async () => {
    const r = await call(ts, p.anonymous, 'GET', '/');
    expect(r.status).toBe(200);
    expect(r.body.name).toBe('esi');
    expect(r.body.services.identity).toMatch(/\/identity\/v3$/);
  });

  it('serves the bundle with a long cache and nothing outside it', async () => {
    const files = readdirSync(path.join(DEFAULT_WEB_ROOT, 'assets'));
    const js = files.find((f) => f.endsWith('.js'))!;
    const r = await fetch(`${ts.url}/dashboard/assets/${js}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/javascript/);
    expect(r.headers.get('cache-control')).toMatch(/max-age=31536000.*immutable/);
    for (const bad of ['..%2F..%2Fpackage.json', '.hidden', 'nope.js', '%2e%2e%2findex.html', '..%2Fassets'])
      expect((await fetch(`${ts.url}/dashboard/assets/${bad}`)).status, bad).toBe(404);
    expect((await fetch(`${ts.url}/dashboard/assets/../../package.json`)).status).not.toBe(200);
  });

  it('answers unknown dashboard API paths with a 404, not the app', async () => {
    for (const url of ['/dashboard/v1', '/dashboard/v1/nothing', '/dashboard/v1/nothing/more']) {
      const r = await call(ts, p.admin, 'GET', url, undefined, HTML);
      expect(r.status, url).toBe(404);
      expect(r.body.error.code).toBe(404);
    }
  });
});

describe('without a build', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'esi-web-'));
    mkdirSync(path.join(dir, 'assets'));
    writeFileSync(path.join(dir, 'assets', 'x.js'), 'x');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('says how to build the dashboard (503), and the view URLs say the same', async () => {
    const app = Fastify();
    await registerDashboardPages(app, dir);
    await app.ready();
    for (const url of ['/dashboard', '/dashboard/nodes']) {
      const r = await app.inject({ method: 'GET', url, headers: HTML });
      expect(r.statusCode, url).toBe(503);
      expect(r.body).toMatch(/npm run build:web/);
    }
    await app.close();
  });
});
