/**
 * Benchmark `dashboard` (issue 20): what a dashboard user waits for, in headless Chromium
 * (Debian's `/usr/bin/chromium`, playwright-core) against an esi server in a child process
 * (./lib/esi-process.ts) with 1,000 fake-hardware nodes (`--quick` 200).
 *
 * - **Bundle**: bytes of the first page (index.html, its entry script and style sheet), raw and
 *   gzip-compressed (level 9), from web/dist (`npm run build:web`); chunks loaded later (the
 *   console) are listed apart.
 * - **Node list, time to interactive**: from the sign-in button's click until the node list
 *   shows every node (a row each) — sign-in, the token request, the bundle already cached, the
 *   list request, rendering — 5 runs (`--quick` 2) in fresh browser contexts; beside it the
 *   same list read by `fetch` in the page (the API alone), as the baseline of the ratio.
 * - **Lease start → node on the lessee's page**: a lessee is signed in on its (empty) node list;
 *   the admin creates a lease of one node to the lessee's project starting 2 s later; measured
 *   from the lease's start time until the node's row is on the page (the lease manager's timer,
 *   the change stream, the page's refetch and render), 5 leases (`--quick` 2).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser, type Page } from 'playwright-core';
import { formatLeaseTime } from '../src/domain/leasing/time.ts';
import { startEsiProcess, type EsiProcess } from './lib/esi-process.ts';
import { sendJson } from './lib/http.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, formatBytes, formatMs, printTable, writeResults } from './lib/report.ts';
import { summarize } from './lib/stats.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'web/dist');
const CHROMIUM = process.env.ESI_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Sizes of the first page's files and of the later chunks. */
function bundleSizes(): {
  first: Array<{ file: string; raw: number; gzip: number }>;
  later: Array<{ file: string; raw: number; gzip: number }>;
} {
  const html = readFileSync(path.join(DIST, 'index.html'));
  const entry = [...html.toString('utf8').matchAll(/(?:src|href)="\/dashboard\/(assets\/[^"]+)"/g)].map((m) => m[1]!);
  const size = (file: string): { file: string; raw: number; gzip: number } => {
    const bytes = readFileSync(path.join(DIST, file));
    return { file, raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  };
  const first = [{ file: 'index.html', raw: html.length, gzip: gzipSync(html, { level: 9 }).length }, ...entry.map(size)];
  const all = readdirSync(path.join(DIST, 'assets')).map((f) => `assets/${f}`);
  return { first, later: all.filter((f) => !entry.includes(f)).map(size) };
}

/** A JSON call as the admin of the child server. */
async function api(server: EsiProcess, method: string, p: string, expect: number, body?: unknown): Promise<any> {
  const r = await sendJson(
    method,
    `${server.url}${p}`,
    { 'x-auth-token': server.adminToken, 'x-openstack-ironic-api-version': '1.82' },
    body,
  );
  if (r.status !== expect) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  return r.body;
}

/** Create a project and a user with `role` in it; returns the project id. */
async function personaOf(server: EsiProcess, project: string, user: string, password: string, role: string): Promise<string> {
  const p = (await api(server, 'POST', '/identity/v3/projects', 201, { project: { name: project } })).project.id as string;
  const u = (await api(server, 'POST', '/identity/v3/users', 201, { user: { name: user, password, default_project_id: p } })).user
    .id as string;
  const roles = (await api(server, 'GET', `/identity/v3/roles?name=${role}`, 200)).roles as Array<{ id: string }>;
  const roleId = roles[0]?.id ?? ((await api(server, 'POST', '/identity/v3/roles', 201, { role: { name: role } })).role.id as string);
  await api(server, 'PUT', `/identity/v3/projects/${p}/users/${u}/roles/${roleId}`, 204);
  return p;
}

/** Sign in on the dashboard; returns the click time (ms, performance clock of this process). */
async function signIn(page: Page, url: string, user: string, password: string, project: string): Promise<number> {
  await page.goto(`${url}/dashboard/sign-in`);
  await page.getByLabel('User').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByLabel('Project').fill(project);
  const t0 = performance.now();
  await page.getByRole('button', { name: 'Sign in' }).click();
  return t0;
}

async function run(options: BenchOptions): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
  if (!existsSync(path.join(DIST, 'index.html'))) throw new Error('the dashboard is not built: npm run build:web');
  const nodes = options.quick ? 200 : 1000;
  const runs = options.quick ? 2 : 5;
  const bundle = bundleSizes();
  options.log(`dashboard: starting esi with ${nodes} nodes`);
  const server = await startEsiProcess('esi (dashboard)', { nodes });
  let browser: Browser | null = null;
  try {
    await personaOf(server, 'bench-ops', 'bench-admin', 'pw-bench-admin', 'admin');
    const lesseeProject = await personaOf(server, 'bench-l', 'bench-lessee', 'pw-bench-lessee', 'lessee');
    const all = (await api(server, 'GET', '/baremetal/v1/nodes?fields=uuid,name', 200)).nodes as Array<{ uuid: string; name: string }>;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });

    // Time to interactive of the node list (admin sees every node), and the API alone.
    const tti: number[] = [];
    const apiOnly: number[] = [];
    const signIns: number[] = [];
    for (let i = 0; i < runs + 1; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const t0 = await signIn(page, server.url, 'bench-admin', 'pw-bench-admin', 'bench-ops');
      await page.getByRole('navigation', { name: 'Main' }).waitFor({ timeout: 60_000 });
      const signedInMs = performance.now() - t0;
      await page
        .locator('tr[data-node]')
        .nth(nodes - 1)
        .waitFor({ timeout: 60_000 });
      const ms = performance.now() - t0;
      const fetchMs = await page.evaluate(async (token) => {
        const t = performance.now();
        const fields = 'uuid,name,owner,lessee,provision_state,power_state,target_power_state,maintenance,resource_class,fault,last_error';
        const r = await fetch(`/baremetal/v1/nodes?fields=${fields}`, {
          headers: { 'X-Auth-Token': token, 'X-OpenStack-Ironic-API-Version': 'latest' },
        });
        await r.json();
        return performance.now() - t;
      }, server.adminToken);
      if (i > 0) {
        tti.push(ms);
        signIns.push(signedInMs);
        apiOnly.push(fetchMs);
      }
      options.log(`dashboard: node list run ${i}${i === 0 ? ' (warm-up)' : ''}: ${ms.toFixed(0)} ms`);
      await context.close();
    }

    // Lease start → the node on the lessee's page.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, server.url, 'bench-lessee', 'pw-bench-lessee', 'bench-l');
    await page.getByRole('heading', { name: 'Nodes' }).waitFor();
    const shown: number[] = [];
    for (let i = 0; i < runs; i++) {
      const node = all[i + 1]!;
      const start = Date.now() + 2000;
      await api(server, 'POST', '/lease/v1/leases', 201, {
        resource_uuid: node.uuid,
        project_id: lesseeProject,
        start_time: formatLeaseTime(start),
        end_time: formatLeaseTime(start + 3_600_000),
      });
      await page.locator(`tr[data-node="${node.name}"]`).waitFor({ timeout: 30_000 });
      shown.push(Date.now() - start);
      options.log(`dashboard: lease ${i + 1}/${runs}: node on the page ${Date.now() - start} ms after the lease start`);
    }
    await context.close();

    const firstRaw = bundle.first.reduce((s, f) => s + f.raw, 0);
    const firstGzip = bundle.first.reduce((s, f) => s + f.gzip, 0);
    printTable(
      'dashboard: the first page (web/dist)',
      ['file', 'bytes', 'gzip'],
      [
        ...bundle.first.map((f) => [f.file, formatBytes(f.raw), formatBytes(f.gzip)]),
        ['first page, total', formatBytes(firstRaw), formatBytes(firstGzip)],
        ...bundle.later.map((f) => [`${f.file} (loaded later)`, formatBytes(f.raw), formatBytes(f.gzip)]),
      ],
    );
    const t = summarize(tti);
    const a = summarize(apiOnly);
    const g = summarize(signIns);
    const s = summarize(shown);
    printTable(
      `dashboard: headless Chromium, ${nodes} nodes (medians of ${runs})`,
      ['what', 'median', 'max'],
      [
        [`node list, sign-in click → ${nodes} rows shown`, formatMs(t.medianMs), formatMs(t.maxMs)],
        ['  of which: sign-in click → signed in (Keystone password check, token)', formatMs(g.medianMs), formatMs(g.maxMs)],
        ['  the list request alone (fetch in the page)', formatMs(a.medianMs), formatMs(a.maxMs)],
        ['lease start → node on the lessee’s page', formatMs(s.medianMs), formatMs(s.maxMs)],
      ],
    );
    const busy = busyWarning('during the run');
    if (busy) console.log(busy);
    writeResults('dashboard', { nodes, bundle, ttiMs: tti, signInMs: signIns, apiMs: apiOnly, leaseToPageMs: shown });
  } finally {
    await browser?.close();
    await server.close();
  }
}

/** The dashboard benchmark. */
export const dashboardBenchmark: Benchmark = {
  name: 'dashboard',
  description: 'dashboard: first-page bundle size, node list time to interactive (1,000 nodes), lease start → node on the page',
  run,
};
