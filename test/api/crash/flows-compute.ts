/**
 * The crash suite's compute flow (issue 23): servers of the compute API created and deleted in a
 * loop on nodes made for them before the rounds (fake-hardware, `fake` deploy interface), with a
 * flavor asking for their resource class and a small public image — so kills land inside a server's create
 * (the claim of node, allocation and server row), its deploy, its delete and the compute sweep
 * that finishes it. After each restart the invariant checker's allocation and server ↔ node
 * lines (invariants.ts) check what the kill left.
 */
import { ProcessGone } from './cloud.ts';
import { node, ok, provision, Refused, unique, until, type Flow, type FlowContext } from './flow-kit.ts';

const NOVA = { 'x-openstack-nova-api-version': '2.90' };
const PROPERTIES = { cpus: 4, memory_mb: 8192, local_gb: 40, cpu_arch: 'x86_64' };

/** A compute API call as admin; @returns the answer */
function nova(c: FlowContext, method: string, p: string, body?: unknown) {
  return c.cloud.call(method, `/compute/v2.1${p}`, body, c.cloud.token, NOVA);
}

/** A public 4 KiB raw image, uploaded; @returns its id */
async function image(c: FlowContext): Promise<string> {
  const img = ok(
    await c.cloud.call('POST', '/image/v2/images', {
      name: unique(c, 'srv-img'),
      disk_format: 'raw',
      container_format: 'bare',
      visibility: 'public',
    }),
    'server image',
  );
  const put = await fetch(`${c.cloud.url}/image/v2/images/${img.id}/file`, {
    method: 'PUT',
    headers: { 'x-auth-token': c.cloud.token, 'content-type': 'application/octet-stream' },
    body: new Uint8Array(4096),
  }).catch((err: unknown) => {
    throw new ProcessGone(String(err));
  });
  if (put.status !== 204) throw new Refused(`server image upload: ${put.status}`);
  return img.id as string;
}

/** The flow's flavor and image, made once before the rounds by {@link setUpCompute}. */
const made: { flavor: string | null; image: string | null } = { flavor: null, image: null };

/** How many nodes the servers may land on (one cleans after a delete while another serves). */
const SERVER_NODES = 3;
/** Their resource class. */
const RC = 'crashserver';

/**
 * Before the rounds, on the running process (as admin): {@link SERVER_NODES} available nodes of
 * resource class {@link RC}, a flavor asking for it and a public image — so that the kills land
 * in servers' steps, not in nodes' cleaning.
 * @throws when a call is refused or a node does not become available
 */
export async function setUpCompute(c: FlowContext): Promise<void> {
  for (let i = 0; i < SERVER_NODES; i++) {
    const uuid = await node(c, 'server', { resource_class: RC, deploy_interface: 'fake', properties: PROPERTIES });
    await provision(c, uuid, 'manage', 'manageable');
    await provision(c, uuid, 'provide', 'available');
    const state = ok(await c.cloud.bm('GET', `/nodes/${uuid}`), 'read node').provision_state;
    if (state !== 'available') throw new Error(`server node ${uuid} is ${state}, not available`);
  }
  const flavor = 'crash-flavor';
  ok(await nova(c, 'POST', '/flavors', { flavor: { name: flavor, id: flavor, ram: 8192, vcpus: 4, disk: 40 } }), 'flavor');
  ok(
    await nova(c, 'POST', `/flavors/${flavor}/os-extra_specs`, { extra_specs: { [`resources:CUSTOM_${RC.toUpperCase()}`]: '1' } }),
    'extra specs',
  );
  made.flavor = flavor;
  made.image = await image(c);
}

/** The compute flows, by name. */
export const COMPUTE_FLOWS: Record<string, Flow> = {
  async server(c) {
    const [flavor, imageRef] = [made.flavor, made.image];
    if (flavor === null || imageRef === null) throw new Error('setUpCompute was not run');
    for (;;) {
      c.mark('create server');
      const created = ok(
        await nova(c, 'POST', '/servers', { server: { name: unique(c, 'srv'), flavorRef: flavor, imageRef, networks: 'none' } }),
        'server',
      );
      const id = created.server.id as string;
      c.mark('wait server active');
      const status = await until(
        async () => ok(await nova(c, 'GET', `/servers/${id}`), 'read server').server.status as string,
        (s) => s === 'ACTIVE' || s === 'ERROR',
        15_000,
      );
      c.mark(`delete server (${status})`);
      ok(await nova(c, 'DELETE', `/servers/${id}`), 'delete server');
      c.mark('wait server gone');
      await until(
        async () => (await nova(c, 'GET', `/servers/${id}`)).status,
        (s) => s === 404,
        15_000,
      );
    }
  },
};
