/**
 * The flows the crash suite drives while it waits to kill esi (issue 23): each loops over one
 * user flow through the public APIs — enrol and clean, power, lease start, end, cancel and
 * extension, offer claim, sub-lease, quota-limited lease requests, VIF attach and detach, node
 * delete, image upload, allocation, deploy and undeploy (fake deploy interface), servers of the
 * compute API created and deleted (./flows-compute.ts) — until the process stops answering. Each
 * remembers the step it was in, so the suite can print where every kill landed. A refusal (a 4xx
 * of a race) is noted and the loop goes on.
 */
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import { ProcessGone } from './cloud.ts';
import {
  HOUR,
  lease,
  leaseStatus,
  mac,
  node,
  ok,
  provision,
  Refused,
  seq,
  unique,
  until,
  type Flow,
  type FlowContext,
} from './flow-kit.ts';
import { COMPUTE_FLOWS } from './flows-compute.ts';
import { NETWORK_FLOWS } from './flows-network.ts';

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
    for (let i = 0; ; i++) {
      const target = i % 2 === 0 ? 'power on' : 'power off';
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
    // The project's quota is 3 nodes: 2 are granted, 2 more are refused, then both are cancelled.
    c.mark('cancel leftovers');
    const mine: any[] = ok(await c.cloud.call('GET', '/lease/v1/leases', undefined, c.quota.token), 'list leases').leases;
    for (const l of mine.filter((x) => x.status === 'active' || x.status === 'created'))
      ok(await c.cloud.call('DELETE', `/lease/v1/leases/${l.uuid}`, undefined, c.quota.token), 'cancel leftover');
    const rc = `crash${c.round}q${seq()}`;
    const uuids: string[] = [];
    for (let i = 0; i < 4; i++) uuids.push(await node(c, 'quota', { resource_class: rc }));
    c.mark('offers');
    for (const uuid of uuids) {
      const window = { start_time: formatLeaseTime(Date.now() - 1000), end_time: formatLeaseTime(Date.now() + HOUR) };
      ok(await c.cloud.call('POST', '/lease/v1/offers', { resource_uuid: uuid, ...window }), 'offer');
    }
    const request = () =>
      c.cloud.call(
        'POST',
        '/lease/v1/lease_requests',
        {
          start_time: formatLeaseTime(Date.now() - 500),
          end_time: formatLeaseTime(Date.now() + HOUR / 2),
          groups: [{ count: 2, resource_class: rc }],
        },
        c.quota.token,
      );
    c.mark('request');
    const leases: any[] = ok(await request(), 'lease request').leases;
    c.mark('request over quota');
    const over = await request();
    if (over.status !== 403) throw new Error(`a request over the quota answered ${over.status}: ${JSON.stringify(over.body)}`);
    c.mark('wait active');
    for (const l of leases) await leaseStatus(c, l.uuid as string, ['active']);
    c.mark('cancel');
    for (const l of leases) ok(await c.cloud.call('DELETE', `/lease/v1/leases/${l.uuid}`, undefined, c.quota.token), 'cancel');
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
    if (seq() % 2 === 0) {
      c.mark('delete image');
      ok(await c.cloud.call('DELETE', `/image/v2/images/${img.id}`), 'delete image');
    }
  },
  ...NETWORK_FLOWS,
  ...COMPUTE_FLOWS,
  async allocation(c) {
    const rc = `crash${c.round}a${seq()}`;
    const uuid = await node(c, 'alloc', { resource_class: rc });
    c.mark('manage');
    await provision(c, uuid, 'manage', 'manageable');
    c.mark('provide');
    await provision(c, uuid, 'provide', 'available');
    for (;;) {
      c.mark('allocate');
      const a = ok(await c.cloud.bm('POST', '/allocations', { resource_class: rc }), 'allocation');
      await until(
        async () => ok(await c.cloud.bm('GET', `/allocations/${a.uuid}`), 'read allocation').state as string,
        (s) => s !== 'allocating',
      );
      c.mark('delete allocation');
      ok(await c.cloud.bm('DELETE', `/allocations/${a.uuid}`), 'delete allocation');
    }
  },
  async inspection(c) {
    const uuid = await node(c, 'inspect');
    c.mark('manage');
    await provision(c, uuid, 'manage', 'manageable');
    c.mark('inspect');
    await provision(c, uuid, 'inspect', 'manageable');
  },
  async deploy(c) {
    const uuid = await node(c, 'deploy', { deploy_interface: 'fake' });
    await provision(c, uuid, 'manage', 'manageable');
    c.mark('provide');
    await provision(c, uuid, 'provide', 'available');
    for (;;) {
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
    }
  },
};

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
