/**
 * The dashboard's live channel, `GET /dashboard/v1/changes` (issue 20, item 6), through a real
 * server on SQLite and PostgreSQL: changes of nodes, leases and offers reach the streams of the
 * projects that may see them (owner, lessee — also the lessee a change removed — admin; public
 * offers every project) and no other; events carry `{kind, id, op, seq}` only; anonymous and bad
 * tokens get Keystone's 401; an expired or revoked token ends the stream with `expired`;
 * `Last-Event-ID` resumes, or resets when the log no longer holds it; shutdown ends streams.
 *
 * "Nothing reached this stream" is checked with a marker: a later change that stream may see;
 * once it arrived, every earlier change it was sent had arrived too (events are in `seq` order).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KyselyChangeLog } from '../../../src/store/changes/change-log.ts';
import {
  ADMIN_PASSWORD,
  call,
  createPersonas,
  ManualClock,
  startTestServer,
  type Personas,
  type TestServer,
} from '../../helpers/harness.ts';
import { at, HOUR } from '../lease/support.ts';
import { closeStreams, openChanges, openLive, SseStream, type SseEvent, type SseStream as Stream } from './sse-client.ts';

const V = { 'x-openstack-ironic-api-version': '1.82' };
let ts: TestServer;
let p: Personas;
const open: Stream[] = [];

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
});
afterAll(async () => {
  for (const s of open) s.close();
  await closeStreams();
  await ts?.close();
});

/** A stream that this file closes at the end. */
async function live(token: string | null, lastEventId?: string): Promise<Stream> {
  const s = await openLive(ts, token, lastEventId);
  open.push(s);
  return s;
}

/** Enrol a fake-hardware node owned by `owner` (a project id), as admin. */
async function enrol(name: string, owner: string): Promise<string> {
  const r = await call(ts, p.admin, 'POST', '/baremetal/v1/nodes', { driver: 'fake-hardware', name, owner }, V);
  expect(r.status, r.text).toBe(201);
  return r.body.uuid as string;
}

const change =
  (kind: string, id: string, op?: string, after = 0) =>
  (e: SseEvent) =>
    e.event === 'change' && e.data.kind === kind && e.data.id === id && (op === undefined || e.data.op === op) && Number(e.id) > after;

/** The marker of {@link assertNothingElse}: a node of the other project, seen by it (and admins). */
async function otherMarker(s: Stream): Promise<void> {
  const marker = await enrol(`marker-${Math.random().toString(36).slice(2, 8)}`, p.other.projectId!);
  await s.next(change('node', marker, 'create'), 'the marker node');
}

describe('GET /dashboard/v1/changes', () => {
  it('node and lease changes reach the owner, the admin and the lessee (while it holds the node, and the change that removes it), never another project', async () => {
    const [admin, owner, lessee, other] = [
      await live(p.admin.token),
      await live(p.owner.token),
      await live(p.lessee.token),
      await live(p.other.token),
    ];
    expect(owner.status).toBe(200);
    expect(owner.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(owner.headers.get('cache-control')).toMatch(/no-cache/);
    expect(owner.events[0]).toMatchObject({ event: 'ready', data: { seq: expect.any(Number) } });
    expect(owner.events[0]!.id).toBe(String(owner.events[0]!.data.seq));

    const node = await enrol('live-1', p.owner.projectId!);
    const created = await owner.next(change('node', node, 'create'), 'node create (owner)');
    expect(created.data).toEqual({ kind: 'node', id: node, op: 'create', seq: Number(created.id) });
    await admin.next(change('node', node, 'create'), 'node create (admin)');

    expect((await call(ts, p.admin, 'PUT', `/baremetal/v1/nodes/${node}/states/provision`, { target: 'manage' }, V)).status).toBe(202);
    await expect
      .poll(async () => (await call(ts, p.owner, 'GET', `/baremetal/v1/nodes/${node}`, undefined, V)).body.provision_state, {
        timeout: 10_000,
      })
      .toBe('manageable');
    const before = Math.max(...owner.changesOf(node).map((e) => Number(e.id)));
    expect((await call(ts, p.owner, 'PUT', `/baremetal/v1/nodes/${node}/states/power`, { target: 'power on' }, V)).status).toBe(202);
    await owner.next(change('node', node, 'update', before), 'power change (owner)');
    await admin.next(change('node', node, 'update', before), 'power change (admin)');

    // A lease of the node to l1 starts: the lessee's stream learns of the lease and of the node.
    const r = await call(ts, p.owner, 'POST', '/lease/v1/leases', {
      resource_uuid: node,
      project_id: p.lessee.projectId,
      start_time: at(0),
      end_time: at(HOUR),
    });
    expect(r.status, r.text).toBe(201);
    const lease = r.body.uuid as string;
    await lessee.next(change('lease', lease, 'create'), 'lease create (lessee)');
    await owner.next(change('lease', lease, 'create'), 'lease create (owner)');
    await lessee.next(change('node', node, 'update'), 'the node, now leased (lessee)');
    await expect
      .poll(async () => (await call(ts, p.lessee, 'GET', `/baremetal/v1/nodes/${node}`, undefined, V)).status, { timeout: 10_000 })
      .toBe(200);
    const heldUntil = Math.max(...lessee.changesOf(node).map((e) => Number(e.id)));

    // The lease ends: the change that takes the node from l1 still reaches l1 (its old lessee).
    expect((await call(ts, p.owner, 'DELETE', `/lease/v1/leases/${lease}`)).status).toBeLessThan(300);
    await lessee.next(change('node', node, 'update', heldUntil), 'the node leaving the lessee');
    await expect
      .poll(async () => (await call(ts, p.lessee, 'GET', `/baremetal/v1/nodes/${node}`, undefined, V)).status, { timeout: 10_000 })
      .toBe(404);

    await otherMarker(other);
    expect(other.changesOf(node)).toEqual([]);
    expect(other.changesOf(lease)).toEqual([]);
    // Events carry the resource's kind, id, op and seq only.
    for (const e of [...owner.events, ...lessee.events, ...admin.events].filter((x) => x.event === 'change'))
      expect(Object.keys(e.data).sort()).toEqual(['id', 'kind', 'op', 'seq']);
  });

  it('a public offer reaches every project; one restricted to l1 reaches only its owner, l1 and the admin', async () => {
    const [admin, owner, lessee, other] = [
      await live(p.admin.token),
      await live(p.owner.token),
      await live(p.lessee.token),
      await live(p.other.token),
    ];
    const node = await enrol('live-offers', p.owner.projectId!);
    const offer = async (body: Record<string, unknown>): Promise<string> => {
      const r = await call(ts, p.owner, 'POST', '/lease/v1/offers', {
        resource_uuid: node,
        start_time: at(HOUR),
        end_time: at(2 * HOUR),
        ...body,
      });
      expect(r.status, r.text).toBe(201);
      return r.body.uuid as string;
    };
    const pub = await offer({});
    for (const [name, s] of Object.entries({ admin, owner, lessee, other }))
      await s.next(change('offer', pub, 'create'), `public offer (${name})`);

    const restricted = await offer({ start_time: at(3 * HOUR), end_time: at(4 * HOUR), lessee_id: p.lessee.projectId });
    for (const [name, s] of Object.entries({ admin, owner, lessee }))
      await s.next(change('offer', restricted, 'create'), `restricted offer (${name})`);
    expect((await call(ts, p.owner, 'DELETE', `/lease/v1/offers/${restricted}`)).status).toBeLessThan(300);
    await lessee.next(change('offer', restricted, undefined, Number(lessee.changesOf(restricted)[0]!.id)), 'offer withdrawn (lessee)');
    await otherMarker(other);
    expect(other.changesOf(restricted)).toEqual([]);
  });

  it('refuses a request without a token or with a bad one: 401 in Keystone’s format', async () => {
    for (const token of [null, 'not-a-token']) {
      const r = await openChanges(ts, token);
      expect(r).not.toBeInstanceOf(SseStream);
      if (r instanceof SseStream) continue;
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ error: { code: 401, title: 'Unauthorized', message: expect.any(String) } });
      expect(r.headers.get('www-authenticate')).toMatch(/^Keystone uri=/);
    }
  });

  it('ends the stream of a revoked token with `expired` (reason revoked)', async () => {
    const issued = await ts.server.services.identity.tokens.authenticatePassword(
      { userId: p.owner.userId!, password: 'pw-owner1' },
      { kind: 'project', projectId: p.owner.projectId! },
    );
    const s = await live(issued.secret);
    const revoke = await call(ts, p.admin, 'DELETE', '/identity/v3/auth/tokens', undefined, { 'x-subject-token': issued.secret });
    expect(revoke.status).toBe(204);
    const expired = await s.next((e) => e.event === 'expired', 'the expired event');
    expect(expired.data).toMatchObject({ reason: 'revoked' });
    await s.untilEnded('the stream to end');
  });

  it('resumes after Last-Event-ID with the changes missed, then goes live', async () => {
    // The admin's stream stays: once it has the change, the process has read it (a replay, not live).
    const admin = await live(p.admin.token);
    const first = await live(p.owner.token);
    const node = await enrol('live-resume', p.owner.projectId!);
    await first.next(change('node', node, 'create'), 'the node (owner)');
    const cursor = first.events.at(-1)!.id!;
    first.close();
    expect((await call(ts, p.owner, 'PATCH', `/baremetal/v1/nodes/${node}`, [{ op: 'add', path: '/extra/k', value: 'v' }], V)).status).toBe(
      200,
    );
    await admin.next(change('node', node, 'update', Number(cursor)), 'the change (admin)');
    const resumed = await live(p.owner.token, cursor);
    const ready = resumed.events.findIndex((e) => e.event === 'ready');
    const missed = resumed.events.findIndex(change('node', node, 'update', Number(cursor)));
    expect(missed, JSON.stringify({ cursor, events: resumed.events })).toBeGreaterThanOrEqual(0);
    expect(missed).toBeLessThan(ready);
    expect(resumed.events.slice(0, ready).every((e) => Number(e.id) > Number(cursor))).toBe(true);
    expect(resumed.events[ready]!.id).toBe(String(resumed.events[ready]!.data.seq));
    expect(resumed.events.some((e) => e.event === 'reset')).toBe(false);
  });

  it('answers `reset` for a Last-Event-ID the log no longer holds (pruned), never held, or cannot read', async () => {
    const node = await enrol('live-prune', p.owner.projectId!);
    const old = await live(p.owner.token);
    const cursor = old.events[0]!.id!;
    old.close();
    await call(ts, p.owner, 'PATCH', `/baremetal/v1/nodes/${node}`, [{ op: 'add', path: '/extra/a', value: '1' }], V);
    await call(ts, p.owner, 'PATCH', `/baremetal/v1/nodes/${node}`, [{ op: 'add', path: '/extra/b', value: '2' }], V);
    // The pruner with no retention: every row but the newest goes.
    expect(await new KyselyChangeLog(ts.server.services.store).prune(-60_000)).toBeGreaterThan(0);
    for (const id of [cursor, '999999999999', 'garbage']) {
      const s = await live(p.owner.token, id);
      expect(s.events[0], id).toMatchObject({ event: 'reset', data: { seq: expect.any(Number) } });
      expect(s.events[0]!.id).toBe(String(s.events[0]!.data.seq));
      s.close();
    }
  });
});

describe('GET /dashboard/v1/changes: token expiry and shutdown', () => {
  it('ends the stream with `expired` when the token expires by the server’s clock, and ends open streams when the server closes', async () => {
    const clock = new ManualClock(Date.now());
    const server = await startTestServer({ clock, env: { ESI_TOKEN_TTL: '3600' } });
    let closed = false;
    try {
      const personas = await createPersonas(server);
      const expiring = await openLive(server, personas.owner.token);
      clock.advance(2 * 3600 * 1000);
      const expired = await expiring.next((e) => e.event === 'expired', 'the expired event');
      expect(expired.data).toMatchObject({ reason: 'expired' });
      await expiring.untilEnded('the expired stream to end');

      // A token issued now lives on; closing the server ends its stream instead of waiting for it.
      const fresh = await server.server.services.identity.tokens.authenticatePassword(
        { userName: 'admin', domainId: 'default', password: ADMIN_PASSWORD },
        { kind: 'project', projectName: 'admin', domainId: 'default' },
      );
      const stream = await openLive(server, fresh.secret);
      await server.close();
      closed = true;
      await stream.untilEnded('the stream to end at shutdown');
    } finally {
      if (!closed) await server.close();
    }
  });
});
