/**
 * The `esi` lease commands (offer, lease, node, event) end to end against a test server:
 * nodes are enrolled through the baremetal API as admin (owner o1), then the personas drive
 * `node bin/esi.js …` with their OS_* credentials. Output columns follow python-esileapclient.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { esi, esiJson, personaEnv, type LoginName } from './support.ts';

let ts: TestServer;
let personas: Personas;
const env = (name: LoginName, extra: Record<string, string> = {}) => personaEnv(ts, name, extra);

/** `YYYY-MM-DDTHH:MM:SS` (esi-leap's naive UTC form) `days` from now. */
function inDays(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 19);
}

async function enrol(name: string, properties: Record<string, unknown>): Promise<string> {
  const res = await call(
    ts,
    personas.admin,
    'POST',
    '/baremetal/v1/nodes',
    { name, driver: 'fake-hardware', owner: personas.owner.projectId, resource_class: 'baremetal', properties },
    { 'x-openstack-ironic-api-version': '1.78' },
  );
  if (res.status !== 201) throw new Error(`node enrolment failed (${res.status}): ${res.text}`);
  return res.body.uuid as string;
}

/** A fresh server with nodes node-1 and node-2 of o1 for the tests of one describe block, then `fixture`. */
function freshServer(fixture: () => Promise<void> = async () => {}): void {
  beforeAll(async () => {
    ts = await startTestServer();
    personas = await createPersonas(ts);
    await enrol('node-1', { cpus: 8, memory_mb: 16384 });
    await enrol('node-2', { cpus: 4, memory_mb: 8192 });
    await fixture();
  });
  afterAll(async () => ts?.close());
}

/** Create through the lease API as `name`; returns the UUID. */
async function made(name: 'owner' | 'admin', path: string, body: Record<string, unknown>): Promise<string> {
  const r = await call(ts, personas[name], 'POST', `/lease/v1/${path}`, body);
  if (r.status !== 201) throw new Error(`POST ${path} failed (${r.status}): ${r.text}`);
  return r.body.uuid as string;
}

const OFFER_LIST_COLUMNS = ['UUID', 'Resource', 'Resource Class', 'Lessee', 'Start Time', 'End Time', 'Status', 'Availabilities'];
const LEASE_LIST_COLUMNS = ['UUID', 'Resource', 'Resource Class', 'Project', 'Start Time', 'End Time', 'Offer UUID', 'Status', 'Purpose'];

describe('offers', () => {
  let open: string;
  let limited: string;

  describe('creating', () => {
    freshServer();

    it('the owner creates offers; a lessee or another project cannot offer o1’s node', async () => {
      const created = await esiJson(
        ['offer', 'create', 'node-1', '--start-time', inDays(1), '--end-time', inDays(10), '--properties', '{"note": "open"}'],
        env('owner'),
      );
      expect(Object.keys(created)).toEqual([
        'availabilities',
        'end_time',
        'lessee',
        'resource',
        'resource_class',
        'start_time',
        'status',
        'uuid',
      ]);
      expect(created).toMatchObject({ resource: 'node-1', resource_class: 'baremetal', status: 'available' });
      const restricted = await esiJson(
        ['offer', 'create', 'node-1', '--start-time', inDays(20), '--end-time', inDays(30), '--lessee', 'l1', '--name', 'for-l1'],
        env('owner'),
      );
      expect(restricted.lessee).toBe('l1');
      for (const name of ['lessee', 'other'] as const) {
        const r = await esi(['offer', 'create', 'node-1', '--start-time', inDays(40), '--end-time', inDays(41)], env(name));
        expect(r.code, name).toBe(1);
        expect(r.stderr, name).toMatch(/^esi: .*\(HTTP 40[34]\)\n$/);
      }
    });
  });

  /** o1's open offer of node-1 for days 1–10 and its offer of node-1 for days 20–30 limited to l1. */
  const withOffers = async (): Promise<void> => {
    open = await made('owner', 'offers', {
      resource_uuid: 'node-1',
      start_time: inDays(1),
      end_time: inDays(10),
      properties: { note: 'open' },
    });
    limited = await made('owner', 'offers', {
      resource_uuid: 'node-1',
      start_time: inDays(20),
      end_time: inDays(30),
      lessee_id: 'l1',
      name: 'for-l1',
    });
  };

  describe('with an open offer and one limited to l1', () => {
    freshServer(withOffers);

    it('offer list: columns of esileapclient; a limited offer is hidden from other projects', async () => {
      const seen: Record<string, string[]> = {};
      for (const name of ['admin', 'owner', 'lessee', 'other'] as const) {
        const rows = await esiJson(['offer', 'list'], env(name));
        if (rows.length > 0) expect(Object.keys(rows[0])).toEqual(OFFER_LIST_COLUMNS);
        seen[name] = rows.map((r: any) => r.UUID).sort();
      }
      expect(seen.admin).toEqual([open, limited].sort());
      expect(seen.owner).toEqual([open, limited].sort());
      expect(seen.lessee).toEqual([open, limited].sort());
      expect(seen.other).toEqual([open]);
      const long = await esiJson(['offer', 'list', '--long'], env('owner'));
      expect(Object.keys(long[0])).toEqual([
        ...OFFER_LIST_COLUMNS.slice(0, 3),
        'Resource Properties',
        ...OFFER_LIST_COLUMNS.slice(3),
        'Project',
        'Parent Lease UUID',
      ]);
    });

    it('offer list filters: --property (client side), --time-range, --resource-uuid, --status', async () => {
      expect((await esiJson(['offer', 'list', '--property', 'cpus>=8'], env('owner'))).length).toBe(2);
      expect((await esiJson(['offer', 'list', '--property', 'cpus>8'], env('owner'))).length).toBe(0);
      expect((await esiJson(['offer', 'list', '--property', 'memory_mb=16384', '--property', 'cpus<=8'], env('owner'))).length).toBe(2);
      const inWindow = await esiJson(['offer', 'list', '--time-range', inDays(2), inDays(3)], env('owner'));
      expect(inWindow.map((r: any) => r.UUID)).toEqual([open]);
      expect(await esiJson(['offer', 'list', '--resource-uuid', 'node-2'], env('owner'))).toEqual([]);
      expect(await esiJson(['offer', 'list', '--status', 'deleted'], env('owner'))).toEqual([]);
      const bad = await esi(['offer', 'list', '--property', 'cpus~8'], env('owner'));
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/^esi: Invalid property filter format: cpus~8/);
      const values = await esi(['offer', 'list', '-f', 'value', '-c', 'UUID', '--resource-uuid', 'node-1'], env('owner'));
      expect(values.stdout.trim().split('\n').sort()).toEqual([open, limited].sort());
    });

    it('offer show: all fields sorted; unknown offers are one error line', async () => {
      const shown = await esiJson(['offer', 'show', open], env('lessee'));
      expect(Object.keys(shown)).toEqual([
        'availabilities',
        'end_time',
        'lessee',
        'lessee_id',
        'name',
        'parent_lease_uuid',
        'project',
        'project_id',
        'properties',
        'resource',
        'resource_class',
        'resource_properties',
        'resource_type',
        'resource_uuid',
        'start_time',
        'status',
        'uuid',
      ]);
      expect(shown).toMatchObject({ uuid: open, project: 'o1', properties: { note: 'open' }, resource_type: 'ironic_node' });
      const missing = await esi(['offer', 'show', 'no-such-offer'], env('owner'));
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/^esi: .*no-such-offer.*\(HTTP 404\)\n$/);
      const hidden = await esi(['offer', 'show', limited], env('other'));
      expect(hidden.code).toBe(1);
      expect(hidden.stderr).toMatch(/\(HTTP 40[34]\)\n$/);
    });

    it('offer claim: the lessee leases the node; the lease shows in lease list for lessee and owner only', async () => {
      const lease = await esiJson(
        ['offer', 'claim', open, '--start-time', inDays(2), '--end-time', inDays(3), '--properties', '{"why": "test"}'],
        env('lessee'),
      );
      expect(Object.keys(lease)).toEqual([
        'end_time',
        'offer_uuid',
        'project',
        'purpose',
        'resource',
        'resource_class',
        'start_time',
        'status',
        'uuid',
      ]);
      expect(lease).toMatchObject({ offer_uuid: open, project: 'l1', resource: 'node-1', status: 'created' });
      const lessees = await esiJson(['lease', 'list'], env('lessee'));
      expect(Object.keys(lessees[0])).toEqual(LEASE_LIST_COLUMNS);
      expect(lessees.map((l: any) => l.UUID)).toEqual([lease.uuid]);
      expect((await esiJson(['lease', 'list'], env('owner'))).map((l: any) => l.UUID)).toEqual([lease.uuid]);
      expect(await esiJson(['lease', 'list'], env('other'))).toEqual([]);
      expect((await esiJson(['lease', 'list', '--all'], env('admin'))).map((l: any) => l.UUID)).toContain(lease.uuid);
      expect((await esiJson(['lease', 'list', '--offer-uuid', open], env('lessee'))).length).toBe(1);
      const overlapping = await esi(['offer', 'claim', open, '--start-time', inDays(2), '--end-time', inDays(3)], env('other'));
      expect(overlapping.code).toBe(1);
      expect(overlapping.stderr).toMatch(/\(HTTP 409\)\n$/);
    });
  });

  describe('deleting', () => {
    freshServer(withOffers);

    it('offer delete prints what it deleted; only the owner may', async () => {
      const denied = await esi(['offer', 'delete', limited], env('lessee'));
      expect(denied.code).toBe(1);
      const r = await esi(['offer', 'delete', limited], env('owner'));
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`Deleted offer ${limited}\n`);
      expect((await esiJson(['offer', 'list'], env('owner'))).map((o: any) => o.UUID)).not.toContain(limited);
    });
  });
});

describe('leases, nodes and events', () => {
  let direct: string;

  describe('creating', () => {
    freshServer();

    it('lease create: the owner leases node-2 to l1 directly; a lessee may not', async () => {
      const lease = await esiJson(
        ['lease', 'create', 'node-2', 'l1', '--start-time', inDays(1), '--end-time', inDays(5), '--name', 'direct', '--purpose', 'ci'],
        env('owner'),
      );
      expect(lease).toMatchObject({ resource: 'node-2', project: 'l1', purpose: 'ci', status: 'created', offer_uuid: null });
      const denied = await esi(['lease', 'create', 'node-2', 'l1', '--start-time', inDays(6), '--end-time', inDays(7)], env('lessee'));
      expect(denied.code).toBe(1);
      expect(denied.stderr).toMatch(/^esi: user "\w+" in project "l1" \(roles: [^)]*\) may not POST \/lease\/v1\/leases/);
      expect(denied.stderr).toMatch(/\(HTTP 403\)\n$/);
      const badJson = await esi(['lease', 'create', 'node-2', 'l1', '--properties', '{nope'], env('owner'));
      expect(badJson.code).toBe(1);
      expect(badJson.stderr).toMatch(/^esi: --properties must be a JSON object/);
    });
  });

  describe('with o1’s direct lease of node-2 to l1', () => {
    freshServer(async () => {
      direct = await made('owner', 'leases', {
        resource_uuid: 'node-2',
        project_id: 'l1',
        start_time: inDays(1),
        end_time: inDays(5),
        name: 'direct',
        purpose: 'ci',
      });
    });

    it('lease show and list --long', async () => {
      const shown = await esiJson(['lease', 'show', direct], env('lessee'));
      expect(Object.keys(shown)).toEqual([
        'end_time',
        'expire_time',
        'fulfill_time',
        'name',
        'offer_uuid',
        'owner',
        'owner_id',
        'parent_lease_uuid',
        'project',
        'project_id',
        'properties',
        'purpose',
        'resource',
        'resource_class',
        'resource_properties',
        'resource_type',
        'resource_uuid',
        'start_time',
        'status',
        'uuid',
      ]);
      expect(shown).toMatchObject({ uuid: direct, owner: 'o1', project: 'l1', name: 'direct' });
      const long = await esiJson(['lease', 'list', '--long', '--resource-uuid', 'node-2'], env('owner'));
      expect(Object.keys(long[0])).toEqual([
        'UUID',
        'Resource',
        'Resource Class',
        'Resource Properties',
        'Project',
        'Start Time',
        'End Time',
        'Expire Time',
        'Fulfill Time',
        'Offer UUID',
        'Owner',
        'Parent Lease UUID',
        'Status',
        'Purpose',
      ]);
      expect(await esi(['lease', 'show', direct], env('other'))).toMatchObject({ code: 1 });
    });

    it('lease update: admin only', async () => {
      const denied = await esi(['lease', 'update', direct, '--end-time', inDays(6)], env('owner'));
      expect(denied.code).toBe(1);
      expect(denied.stderr).toMatch(/\(HTTP 403\)\n$/);
      const newEnd = inDays(6);
      const updated = await esiJson(['lease', 'update', direct, '--end-time', newEnd], env('admin'));
      expect(updated.end_time.slice(0, 19)).toBe(newEnd);
      const missing = await esi(['lease', 'update', direct], env('admin'));
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toMatch(/--end-time/);
    });

    it('node list: the owner sees its nodes with names; another project sees none', async () => {
      const nodes = await esiJson(['node', 'list'], env('owner'));
      expect(Object.keys(nodes[0])).toEqual([
        'Name',
        'Owner',
        'Lessee',
        'Resource Class',
        'Provision State',
        'Maintenance',
        'Offer UUID',
        'Lease UUID',
      ]);
      expect(nodes.map((n: any) => n.Name).sort()).toEqual(['node-1', 'node-2']);
      expect(nodes.every((n: any) => n.Owner === 'o1')).toBe(true);
      expect(await esiJson(['node', 'list'], env('other'))).toEqual([]);
      const long = await esiJson(['node', 'list', '--long', '--property', 'cpus<8'], env('owner'));
      expect(long.map((n: any) => n.Name)).toEqual(['node-2']);
      expect(Object.keys(long[0])).toContain('Future Leases');
    });

    it('event list answers with esileapclient columns', async () => {
      const r = await esi(['event', 'list', '-f', 'json'], env('owner'));
      expect(r.code, r.stderr).toBe(0);
      const events = JSON.parse(r.stdout);
      expect(Array.isArray(events)).toBe(true);
      for (const e of events)
        expect(Object.keys(e)).toEqual([
          'ID',
          'Event Type',
          'Event Time',
          'Object Type',
          'Object UUID',
          'Resource Type',
          'Resource UUID',
          'Lessee ID',
          'Owner ID',
        ]);
    });

    it('lease delete prints what it deleted; another project cannot', async () => {
      // A lease of its own: the other tests read `direct`.
      const doomed = await made('owner', 'leases', {
        resource_uuid: 'node-1',
        project_id: 'l1',
        start_time: inDays(40),
        end_time: inDays(41),
      });
      expect((await esi(['lease', 'delete', doomed], env('other'))).code).toBe(1);
      const r = await esi(['lease', 'delete', doomed], env('lessee'));
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`Deleted lease ${doomed}\n`);
      expect((await esiJson(['lease', 'list'], env('lessee'))).map((l: any) => l.UUID)).not.toContain(doomed);
    });
  });
});
