/**
 * Differential test: esi's baremetal API against the real OpenStack Ironic 21.4 (Debian's
 * ironic-api and ironic-conductor: noauth, SQLite, fake-hardware; test/helpers/ironic-peer.ts),
 * driven with the same request sequences (table-*.ts) and compared answer by answer
 * (compare.ts: status, keys and value types, Location and version headers, error shape).
 *
 * Every difference is either accepted (accepted.ts, mirrored in docs/compatibility.md, each with
 * its reason) or fails the test. The run prints a summary line — requests compared, endpoint ×
 * microversion combinations, differences by resource (accepted / unexpected) — and says which
 * accepted entries no longer match anything (a resource that has landed: remove its mark).
 *
 * Run alone: `npx vitest run --project differential` (about 45 s; needs ironic-api and
 * ironic-conductor, which `.ci/run` installs); `ESI_DIFF_VERBOSE=1` prints every difference with
 * the accepted entry that covers it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type TestServer } from '../helpers/harness.ts';
import { startIronic, type IronicPeer } from '../helpers/ironic-peer.ts';
import { describeNeeding, TOOLS } from '../helpers/tools.ts';
import { ACCEPTED, acceptedFor } from './accepted.ts';
import { diffAnswers } from './compare.ts';
import { ALL_SEQUENCES, endpointNamer, esiRoutesNotCovered, esiV1Routes } from './coverage.ts';
import { report } from './report.ts';
import { runSequences, type Side } from './runner.ts';

const HERE = path.dirname(new URL(import.meta.url).pathname);
const DOC = path.join(HERE, '..', '..', 'docs', 'compatibility.md');

describe('differential harness', () => {
  it('sees differences of status, keys, types, headers and error shape', () => {
    const id = (s: string): string => s;
    const ok = { status: 200, headers: { 'x-openstack-ironic-api-version': '1.82' }, body: { a: 1, b: 'x', c: [{ d: null }] } };
    expect(diffAnswers(ok, ok, id, id)).toEqual([]);
    const other = { status: 201, headers: {}, body: { a: '1', c: [{ d: null, e: 1 }], f: true } };
    const wheres = diffAnswers(ok, other, id, id).map((d) => d.where);
    expect(wheres).toEqual(['status', 'header x-openstack-ironic-api-version', 'body.a', 'body.b', 'body.c[].e', 'body.f']);
    const fault = (inner: object) => ({ status: 404, headers: {}, body: { error_message: JSON.stringify(inner) } });
    const wsme = fault({ faultcode: 'Client', faultstring: 'x', debuginfo: null });
    expect(diffAnswers(wsme, fault({ faultcode: 'Server', faultstring: 'y', debuginfo: null }), id, id)).toEqual([
      { where: 'body.error_message.faultcode', ironic: '"Client"', esi: '"Server"' },
    ]);
    expect(diffAnswers(fault({ code: 404, title: 'Not Found', description: '' }), wsme, id, id).map((d) => d.where)).toEqual([
      'error format',
    ]);
  });

  it('lists every accepted difference in docs/compatibility.md, and nothing else', () => {
    const doc = fs.readFileSync(DOC, 'utf8');
    const section = doc.slice(doc.indexOf('## Differences from Ironic 21.4 found by the differential tests'));
    expect(section.length, 'docs/compatibility.md lacks the section').toBeLessThan(doc.length);
    const listed = [...section.matchAll(/^\| `([a-z0-9.-]+)`\s+\|/gm)].map((m) => m[1]);
    expect(new Set(listed)).toEqual(new Set(ACCEPTED.map((e) => e.id)));
  });
});

describeNeeding([TOOLS.ironicApi, TOOLS.ironicConductor, TOOLS.ironicDbsync], 'esi answers as Ironic 21.4 does', () => {
  let ironic: IronicPeer | undefined;
  let ts: TestServer | undefined;
  let esi: Side;

  beforeAll(async () => {
    const conf = path.join(HERE, 'ironic.conf.in');
    const [i, e] = await Promise.allSettled([
      startIronic(() => {}, { confTemplate: conf }),
      // esi with Ironic's set-up: only fake-hardware, a conductor named as Ironic's (`host = localhost`)
      startTestServer({ env: { ESI_ENABLED_HARDWARE_TYPES: 'fake-hardware', ESI_CONDUCTOR_HOSTNAME: 'localhost' } }),
    ]);
    // keep whichever started, so that afterAll stops it even when the other failed
    if (i.status === 'fulfilled') ironic = i.value;
    if (e.status === 'fulfilled') ts = e.value;
    if (i.status === 'rejected') throw i.reason;
    if (e.status === 'rejected') throw e.reason;
    if (ts === undefined) throw new Error('unreachable: esi did not start');
    const p = await createPersonas(ts);
    esi = { name: 'esi', base: `${ts.url}/baremetal`, headers: { 'x-auth-token': p.admin.token! } };
  }, 120_000);

  afterAll(async () => {
    await Promise.all([ironic?.stop(), ts?.close()]);
  });

  it('covers every endpoint esi serves under /v1', () => {
    expect(esiRoutesNotCovered(esiV1Routes(ts!.server.app!))).toEqual([]);
  });

  it('differs from Ironic only where docs/compatibility.md says so', async () => {
    const run = await runSequences(ALL_SEQUENCES, { name: 'ironic', base: ironic!.url, headers: {} }, esi);
    const { summary, combinations, unexpected, stale } = report(run, endpointNamer(esiV1Routes(ts!.server.app!)));
    console.log(summary);
    // ESI_DIFF_VERBOSE=1: every difference with the entry that accepts it
    if (process.env.ESI_DIFF_VERBOSE)
      for (const d of run.differences)
        console.log(`${acceptedFor(d)?.id ?? 'UNEXPECTED'}: ${d.step}: ${d.where}: Ironic ${d.ironic}, esi ${d.esi}`);
    for (const id of stale)
      console.log(`NO LONGER DIFFERS: accepted difference \`${id}\` matched nothing; remove it (accepted.ts, docs/compatibility.md)`);
    const lines = unexpected.map((d) => `${d.step}: ${d.where}: Ironic ${d.ironic}, esi ${d.esi}${d.note ? ` (${d.note})` : ''}`);
    expect(lines, summary).toEqual([]);
    // a run that compared (almost) nothing must not pass
    expect(run.requests.length).toBeGreaterThan(400);
    expect(combinations).toBeGreaterThan(250);
  }, 240_000);
});
