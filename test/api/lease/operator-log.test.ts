/**
 * What an operator reads in the server log about leases (issue 19, item 2): one info line for
 * each status change the lease manager makes — started, ended — naming the lease, its node and
 * project, and carrying them as fields (`lease`, `node`, `project`, `from`, `to`). The lease is
 * made by the owner for the lessee and deleted by the owner; another project's calls change
 * nothing and log nothing about it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLog } from '../../helpers/log-capture.ts';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { at, enrolNode, HOUR, waitUntil } from './support.ts';

let ts: TestServer;
let p: Personas;
const { logger, lines } = captureLog('info');

beforeAll(async () => {
  ts = await startTestServer({ logger });
  p = await createPersonas(ts);
});
afterAll(async () => ts?.close());

describe('lease lines in the server log', () => {
  it('says when a lease starts and ends, with its node and project', async () => {
    const node = await enrolNode({ ts, p }, 'logged-1');
    const r = await call(ts, p.owner, 'POST', '/lease/v1/leases', {
      resource_uuid: node,
      project_id: p.lessee.projectId,
      start_time: at(-1000),
      end_time: at(HOUR),
    });
    expect(r.status, r.text).toBe(201);
    const lease = r.body.uuid as string;
    const about = (): Array<Record<string, unknown>> => lines.filter((l) => l.lease === lease);
    await waitUntil(async () => about().some((l) => l.to === 'active'));
    const started = about().find((l) => l.to === 'active')!;
    expect(started).toMatchObject({ level: 30, node, project: p.lessee.projectId, from: 'created', action: 'fulfill' });
    expect(started.msg).toBe(`lease ${lease} started: node ${node}, project ${p.lessee.projectId}`);

    // Another project can neither see nor end it: nothing is logged about it.
    expect((await call(ts, p.other, 'DELETE', `/lease/v1/leases/${lease}`)).status).toBe(404);
    expect(about().filter((l) => l.to !== 'active')).toEqual([]);

    expect((await call(ts, p.owner, 'DELETE', `/lease/v1/leases/${lease}`)).status).toBeLessThan(300);
    await waitUntil(async () => about().some((l) => l.to === 'deleted'));
    const ended = about().find((l) => l.to === 'deleted')!;
    expect(ended.msg).toBe(`lease ${lease} ended (deleted): node ${node}, project ${p.lessee.projectId}`);
    expect(ended).toMatchObject({ level: 30, node, project: p.lessee.projectId, action: 'cancel' });
  });
});

describe('node lines in the server log', () => {
  const V = { 'x-openstack-ironic-api-version': '1.82' };

  it('says each provision and power state change with its cause and duration; refused calls log nothing', async () => {
    const node = await enrolNode({ ts, p }, 'logged-2');
    const about = (): Array<Record<string, unknown>> => lines.filter((l) => l.node === node && typeof l.cause === 'string');

    // Another project and the anonymous caller cannot see the node: nothing changes, nothing is logged.
    expect((await call(ts, p.other, 'PUT', `/baremetal/v1/nodes/${node}/states/power`, { target: 'power on' }, V)).status).toBe(404);
    expect((await call(ts, null, 'PUT', `/baremetal/v1/nodes/${node}/states/power`, { target: 'power on' }, V)).status).toBe(401);

    expect((await call(ts, p.admin, 'PUT', `/baremetal/v1/nodes/${node}/states/provision`, { target: 'manage' }, V)).status).toBe(202);
    await waitUntil(async () => about().some((l) => l.to === 'manageable'));
    const managed = about().find((l) => l.to === 'manageable')!;
    expect(managed).toMatchObject({ level: 30, name: 'logged-2', from: 'verifying', cause: 'verifying stage' });
    expect(managed.msg).toMatch(/^node logged-2: verifying → manageable \(verifying stage, \d+(\.\d)? m?s\)$/);
    expect(typeof managed.ms).toBe('number');

    // The owner powers its node on: one line, the cause is the request.
    expect((await call(ts, p.owner, 'PUT', `/baremetal/v1/nodes/${node}/states/power`, { target: 'power on' }, V)).status).toBe(202);
    await waitUntil(async () => about().some((l) => l.to === 'power on'));
    const on = about().find((l) => l.to === 'power on')!;
    expect(on).toMatchObject({ level: 30, name: 'logged-2', cause: 'power on requested' });
    expect(on.msg).toMatch(/^node logged-2: .* → power on \(power on requested, /);
  });
});
