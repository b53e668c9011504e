/**
 * The flows the crash suite drives while it waits to kill esi (issue 23): each loops over one
 * user flow through the public APIs — enrol and clean, power, lease start, end, cancel and
 * extension, offer claim, sub-lease, quota-limited lease requests, VIF attach and detach, node
 * delete, image upload, allocation, deploy and undeploy (fake deploy interface) — until the
 * process stops answering. Each remembers the step it was in, so the suite can print where every
 * kill landed. A refusal (a 4xx of a race) is noted and the loop goes on.
 */
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import { ProcessGone, type Answer, type CrashCloud } from './cloud.ts';

/** What a flow knows of the round it runs in. */
export interface FlowContext {
  readonly cloud: CrashCloud;
  /** The round's number (names made in it carry it). */
  readonly round: number;
  /** The lessee project's id and a token of its user. */
  readonly lessee: { readonly project: string; readonly token: string };
  /** A project whose lease quota is `max_nodes` 3, and a token of its user. */
  readonly quota: { readonly project: string; readonly token: string };
  /** The admin project's id (owner of the nodes). */
  readonly admin: string;
  /** A switch (fake driver) and an admin network the VIF flow uses. */
  readonly vif: { readonly switchName: string; readonly network: string };
  /** Record the step the flow is in now. */
  mark(step: string): void;
}

/** A flow: loops until the process is gone (ProcessGone), then resolves. */
export type Flow = (c: FlowContext, name: string) => Promise<void>;

/** A refusal of a call the flow needed (the loop notes it and goes on). */
class Refused extends Error {}

/** The answer when its status is `2xx`; else Refused. */
function ok(a: Answer, what: string): any {
  if (a.status >= 300) throw new Refused(`${what}: ${a.status} ${JSON.stringify(a.body).slice(0, 200)}`);
  return a.body;
}

/**
 * Poll `read` every 100 ms until `done` holds or `ms` pass.
 * @returns the last value read
 */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 8000): Promise<T> {
  const end = Date.now() + ms;
  let v = await read();
  while (!done(v) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    v = await read();
  }
  return v;
}

let serial = 0;
/** A name unique in the suite. */
const unique = (c: FlowContext, what: string) => `crash-${c.round}-${what}-${++serial}`;

/** Enrol a fake-hardware node owned by the admin project; @returns its uuid */
async function node(c: FlowContext, what: string, extra: Record<string, unknown> = {}): Promise<string> {
  const n = ok(await c.cloud.bm('POST', '/nodes', { driver: 'fake-hardware', name: unique(c, what), owner: c.admin, ...extra }), 'enrol');
  return n.uuid as string;
}

/** Move a node through a provision verb and wait until it leaves the transient states. */
async function provision(c: FlowContext, uuid: string, target: string, want: string, body: Record<string, unknown> = {}): Promise<void> {
  ok(await c.cloud.bm('PUT', `/nodes/${uuid}/states/provision`, { target, ...body }), target);
  await until(
    async () => ok(await c.cloud.bm('GET', `/nodes/${uuid}`), 'read node').provision_state as string,
    (s) => s === want || s.endsWith('failed'),
  );
}

/** Create a lease on `uuid` for the lessee from now (−1 s) for `ms`; @returns the lease */
async function lease(c: FlowContext, uuid: string, ms: number, extra: Record<string, unknown> = {}): Promise<any> {
  const body = {
    resource_uuid: uuid,
    project_id: c.lessee.project,
    start_time: formatLeaseTime(Date.now() - 1000),
    end_time: formatLeaseTime(Date.now() + ms),
    ...extra,
  };
  return ok(await c.cloud.call('POST', '/lease/v1/leases', body), 'lease');
}

/** Wait until lease `uuid` has a status in `want`. */
async function leaseStatus(c: FlowContext, uuid: string, want: readonly string[], ms = 8000): Promise<string> {
  return until(
    async () => ok(await c.cloud.call('GET', `/lease/v1/leases/${uuid}`), 'read lease').status as string,
    (s) => want.includes(s),
    ms,
  );
}

const HOUR = 3_600_000;

/** Every flow of the suite, by name. */
export const FLOWS: Record<string, Flow> = {
  async 'enrol+clean'(c) {
    const uuid = await node(c, 'clean');
    c.mark('manage');
    await provision(c, uuid, 'manage', 'manageable');
    c.mark('provide (cleaning)');
    await provision(c, uuid, 'provide', 'available');
  },
  async power(c) {
    const uuid = await node(c, 'power');
    for (const target of ['power on', 'power off', 'power on']) {
      c.mark(target);
      ok(await c.cloud.bm('PUT', `/nodes/${uuid}/states/power`, { target }), target);
      await until(
        async () => ok(await c.cloud.bm('GET', `/nodes/${uuid}`), 'read node').target_power_state as string | null,
        (t) => t === null,
      );
    }
  },
  async 'lease start'(c) {
    const uuid = await node(c, 'start');
    c.mark('create');
    const l = await lease(c, uuid, HOUR);
    c.mark('wait active');
    await leaseStatus(c, l.uuid, ['active']);
  },
  async 'lease end'(c) {
    const uuid = await node(c, 'end');
    c.mark('create');
    const l = await lease(c, uuid, 2500);
    c.mark('wait active');
    await leaseStatus(c, l.uuid, ['active']);
    c.mark('wait expired');
    await leaseStatus(c, l.uuid, ['expired']);
  },
  async 'lease delete'(c) {
    const uuid = await node(c, 'delete');
    const l = await lease(c, uuid, HOUR);
    c.mark('wait active');
    await leaseStatus(c, l.uuid, ['active']);
    c.mark('cancel');
    ok(await c.cloud.call('DELETE', `/lease/v1/leases/${l.uuid}`), 'cancel');
    await leaseStatus(c, l.uuid, ['deleted']);
  },
  async 'lease extension'(c) {
    const uuid = await node(c, 'extend');
    const l = await lease(c, uuid, HOUR);
    await leaseStatus(c, l.uuid, ['active']);
    c.mark('extend');
    ok(await c.cloud.call('PATCH', `/lease/v1/leases/${l.uuid}`, { end_time: formatLeaseTime(Date.now() + 2 * HOUR) }), 'extend');
  },
  async 'offer claim'(c) {
    const uuid = await node(c, 'offer');
    c.mark('offer');
    const o = ok(
      await c.cloud.call('POST', '/lease/v1/offers', {
        resource_uuid: uuid,
        start_time: formatLeaseTime(Date.now() - 1000),
        end_time: formatLeaseTime(Date.now() + HOUR),
      }),
      'offer',
    );
    c.mark('claim');
    const l = ok(
      await c.cloud.call(
        'POST',
        `/lease/v1/offers/${o.uuid}/claim`,
        { start_time: formatLeaseTime(Date.now() - 500), end_time: formatLeaseTime(Date.now() + HOUR / 2) },
        c.lessee.token,
      ),
      'claim',
    );
    c.mark('wait active');
    await leaseStatus(c, l.uuid, ['active']);
    c.mark('cancel offer');
    ok(await c.cloud.call('DELETE', `/lease/v1/offers/${o.uuid}`), 'cancel offer');
  },
  async 'sub-lease'(c) {
    const uuid = await node(c, 'sub');
    const parent = await lease(c, uuid, HOUR);
    c.mark('wait parent active');
    await leaseStatus(c, parent.uuid, ['active']);
    c.mark('offer by lessee');
    const o = ok(
      await c.cloud.call(
        'POST',
        '/lease/v1/offers',
        { resource_uuid: uuid, start_time: formatLeaseTime(Date.now() - 500), end_time: formatLeaseTime(Date.now() + HOUR / 2) },
        c.lessee.token,
      ),
      'sub-offer',
    );
    c.mark('sub-lease claim');
    const sub = ok(await c.cloud.call('POST', `/lease/v1/offers/${o.uuid}/claim`, {}), 'sub-claim');
    c.mark('wait sub-lease active');
    await leaseStatus(c, sub.uuid, ['active']);
    c.mark('cancel sub-lease');
    ok(await c.cloud.call('DELETE', `/lease/v1/leases/${sub.uuid}`), 'cancel sub-lease');
  },
  async 'quota-limited request'(c) {
    const rc = `crash${c.round}q${++serial}`;
    const uuids = [await node(c, 'quota', { resource_class: rc }), await node(c, 'quota', { resource_class: rc })];
    c.mark('offers');
    for (const uuid of uuids) {
      ok(
        await c.cloud.call('POST', '/lease/v1/offers', {
          resource_uuid: uuid,
          start_time: formatLeaseTime(Date.now() - 1000),
          end_time: formatLeaseTime(Date.now() + HOUR),
        }),
        'offer',
      );
    }
    c.mark('request');
    const r = await c.cloud.call(
      'POST',
      '/lease/v1/lease_requests',
      {
        start_time: formatLeaseTime(Date.now() - 500),
        end_time: formatLeaseTime(Date.now() + HOUR / 2),
        groups: [{ count: 2, resource_class: rc }],
      },
      c.quota.token,
    );
    const leases: any[] = ok(r, 'lease request').leases ?? [];
    c.mark('wait active');
    for (const l of leases) await leaseStatus(c, l.uuid as string, ['active']);
    c.mark('cancel one');
    ok(await c.cloud.call('DELETE', `/lease/v1/leases/${leases[0].uuid}`, undefined, c.quota.token), 'cancel');
  },
  async 'VIF attach'(c) {
    const uuid = await node(c, 'vif');
    const name = unique(c, 'sp');
    c.mark('cable');
    const port = ok(
      await c.cloud.bm('POST', '/ports', {
        node_uuid: uuid,
        address: mac(),
        local_link_connection: { switch_id: '00:00:00:00:00:00', switch_info: c.vif.switchName, port_id: name },
      }),
      'port',
    );
    for (let i = 0; i < 2; i++) {
      const np = ok(await c.cloud.call('POST', '/network/v2.0/ports', { port: { network_id: c.vif.network, name } }), 'network port');
      c.mark('attach');
      ok(await c.cloud.bm('POST', `/nodes/${uuid}/vifs`, { id: np.port.id }), 'attach');
      c.mark('detach');
      ok(await c.cloud.bm('DELETE', `/nodes/${uuid}/vifs/${np.port.id}`), 'detach');
      c.mark('delete network port');
      ok(await c.cloud.call('DELETE', `/network/v2.0/ports/${np.port.id}`), 'delete network port');
    }
    c.mark('attach to keep');
    const kept = ok(await c.cloud.call('POST', '/network/v2.0/ports', { port: { network_id: c.vif.network, name } }), 'network port');
    ok(await c.cloud.bm('POST', `/nodes/${uuid}/vifs`, { id: kept.port.id, port_uuid: port.uuid }), 'attach');
  },
  async 'node delete'(c) {
    const uuid = await node(c, 'gone');
    c.mark('port');
    ok(await c.cloud.bm('POST', '/ports', { node_uuid: uuid, address: mac() }), 'port');
    c.mark('delete');
    ok(await c.cloud.bm('DELETE', `/nodes/${uuid}`), 'delete');
  },
  async 'image upload'(c) {
    const img = ok(
      await c.cloud.call('POST', '/image/v2/images', { name: unique(c, 'img'), disk_format: 'raw', container_format: 'bare' }),
      'image',
    );
    c.mark('upload');
    const chunk = new Uint8Array(256 * 1024).fill(c.round);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await new Promise((r) => setTimeout(r, 10));
        if (sent++ < 24) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const put = await fetch(`${c.cloud.url}/image/v2/images/${img.id}/file`, {
      method: 'PUT',
      headers: { 'x-auth-token': c.cloud.token, 'content-type': 'application/octet-stream' },
      body,
      duplex: 'half',
    }).catch((err: unknown) => {
      throw new ProcessGone(String(err));
    });
    if (put.status !== 204) throw new Refused(`upload: ${put.status}`);
    if (serial % 2 === 0) {
      c.mark('delete image');
      ok(await c.cloud.call('DELETE', `/image/v2/images/${img.id}`), 'delete image');
    }
  },
  async allocation(c) {
    const rc = `crash${c.round}a${++serial}`;
    const uuid = await node(c, 'alloc', { resource_class: rc });
    await provision(c, uuid, 'manage', 'manageable');
    await provision(c, uuid, 'provide', 'available');
    c.mark('allocate');
    const a = ok(await c.cloud.bm('POST', '/allocations', { resource_class: rc }), 'allocation');
    await until(
      async () => ok(await c.cloud.bm('GET', `/allocations/${a.uuid}`), 'read allocation').state as string,
      (s) => s !== 'allocating',
    );
    c.mark('delete allocation');
    ok(await c.cloud.bm('DELETE', `/allocations/${a.uuid}`), 'delete allocation');
  },
  async deploy(c) {
    const uuid = await node(c, 'deploy', { deploy_interface: 'fake' });
    await provision(c, uuid, 'manage', 'manageable');
    c.mark('provide');
    await provision(c, uuid, 'provide', 'available');
    ok(
      await c.cloud.bm('PATCH', `/nodes/${uuid}`, [
        { op: 'add', path: '/instance_info/image_source', value: 'http://images.example/os.raw' },
      ]),
      'image_source',
    );
    c.mark('deploy');
    await provision(c, uuid, 'active', 'active', { configdrive: { meta_data: { hostname: 'crash' } } });
    c.mark('undeploy');
    await provision(c, uuid, 'deleted', 'available');
  },
};

let macs = 0;
/** A MAC address unique in the suite. */
function mac(): string {
  const n = ++macs;
  const b = [0x52, 0x54, 0x0c, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
  return b.map((x) => x.toString(16).padStart(2, '0')).join(':');
}

/**
 * Run `flow` in a loop until the process is gone.
 * @returns the refusals seen (4xx answers of races), for the report
 */
export async function loop(flow: Flow, c: FlowContext, name: string): Promise<string[]> {
  const refusals: string[] = [];
  for (;;) {
    try {
      c.mark('start');
      await flow(c, name);
    } catch (err) {
      if (err instanceof ProcessGone) return refusals;
      if (!(err instanceof Refused)) throw err;
      refusals.push(err.message);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
