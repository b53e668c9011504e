/**
 * `esi server create|list|show|delete`: bare-metal instances through the compute API
 * (`/compute/v2.1`, a Nova subset), in one step — schedule, allocate, attach networks and deploy
 * ("Nova does reservation and deployment in a seemingly single step", openstack-discuss,
 * http://lists.openstack.org/pipermail/openstack-discuss/2019-January/002250.html;
 * docs/scheduling.md).
 *
 * create: the flavor and image by ID or name, `--network` by ID or name (network service), the
 * user data file base64-encoded, `--count N` servers at once (all or nothing), then
 * `POST /servers`. With `--wait`, each server's node is followed through the deploy phases
 * (./node-provision.ts `deployPhase`, a progress bar while the image is written) until the
 * server is ACTIVE, or fails with the server's fault.
 *
 * delete: `DELETE /servers/{id}`; with `--wait`, until the server is gone and its node cleaned
 * and `available` again.
 *
 * `esi server` without a subcommand still runs the esi service (./server.ts).
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import { collect } from '../filters.ts';
import { addOutputOptions, printList, printShow, type OutputOptions } from '../output.ts';
import { ProgressView } from '../progress.ts';
import { CliError, withSession, type Session } from '../session.ts';
import { bm, cleanPhase, deployPhase, findImage, findNetwork, waitSeconds } from './node-provision.ts';

/** The compute microversion the CLI speaks. */
const NOVA = { 'x-openstack-nova-api-version': '2.90' };
const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

type Server = Record<string, any>;

function nova(s: Session, method: string, path: string, body?: unknown, query?: Record<string, string>): Promise<any> {
  return s.call('compute', method, path, { headers: NOVA, ...(body !== undefined ? { body } : {}), ...(query ? { query } : {}) });
}

/** The flavor with this ID or name. */
async function findFlavor(s: Session, ident: string): Promise<Record<string, any>> {
  try {
    return (await nova(s, 'GET', `/flavors/${encodeURIComponent(ident)}`)).flavor;
  } catch (err) {
    if (!(err instanceof CliError && err.status === 404)) throw err;
  }
  const all = ((await nova(s, 'GET', '/flavors/detail', undefined, { is_public: 'none' }))?.flavors ?? []) as Array<Record<string, any>>;
  const found = all.filter((f) => f.name === ident);
  if (found.length === 0) throw new CliError(`no flavor named ${ident} that you may use.`);
  return found[0]!;
}

/** The server with this ID or (exact) name. */
async function findServer(s: Session, ident: string): Promise<Server> {
  if (UUID_RE.test(ident)) {
    try {
      return (await nova(s, 'GET', `/servers/${encodeURIComponent(ident)}`)).server;
    } catch (err) {
      if (!(err instanceof CliError && err.status === 404)) throw err;
    }
  }
  const found = ((await nova(s, 'GET', '/servers/detail'))?.servers ?? []).filter((x: Server) => x.name === ident) as Server[];
  if (found.length === 0) throw new CliError(`server ${ident} was not found.`, 404);
  if (found.length > 1) throw new CliError(`${found.length} servers are named ${ident}; give the server ID.`);
  return found[0]!;
}

/** The record `esi server show` prints. */
function serverRecord(x: Server): Array<[string, unknown]> {
  return [
    ['id', x.id],
    ['name', x.name],
    ['status', x.status],
    ['task_state', x['OS-EXT-STS:task_state'] ?? null],
    ['node', x['esi:node'] ?? x['OS-EXT-SRV-ATTR:hypervisor_hostname'] ?? null],
    ['flavor', x.flavor?.original_name ?? x.flavor?.id ?? null],
    ['image', x.image?.id ?? null],
    ['key_name', x.key_name ?? null],
    ['progress', x.progress ?? null],
    ['fault', x.fault?.message ?? null],
    ['project_id', x.tenant_id],
    ['created', x.created],
  ];
}

/**
 * Follow a server until it is ACTIVE (its node's deploy phases drawn while it builds).
 * @throws CliError when it ends in ERROR or DELETED, or at the timeout
 */
async function waitActive(s: Session, id: string, timeoutS: number): Promise<Server> {
  const deadline = timeoutS > 0 ? Date.now() + timeoutS * 1000 : Infinity;
  let view: ProgressView | null = null;
  try {
    for (;;) {
      const x: Server = (await nova(s, 'GET', `/servers/${id}`)).server;
      view ??= new ProgressView(x.name);
      if (x.status === 'ACTIVE' || x.status === 'SHUTOFF') {
        view.finish();
        return x;
      }
      if (x.status === 'ERROR' || x.status === 'DELETED')
        throw new CliError(`server ${x.name} failed (${x.status}): ${x.fault?.message ?? 'no reason given'}`);
      const node = x['esi:node'];
      view.update(node ? deployPhase(await bm(s, 'GET', `/nodes/${node}`)) : { phase: `building (${x.progress ?? 0}%)` });
      if (Date.now() > deadline) throw new CliError(`server ${x.name} did not become active within ${timeoutS} s (now ${x.status}).`);
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    view?.stop();
  }
}

/** Follow a deleted server until it is gone and its node is cleaned. */
async function waitDeleted(s: Session, x: Server, timeoutS: number): Promise<string | null> {
  const deadline = timeoutS > 0 ? Date.now() + timeoutS * 1000 : Infinity;
  const view = new ProgressView(x.name);
  try {
    for (;;) {
      try {
        await nova(s, 'GET', `/servers/${x.id}`);
        view.update({ phase: 'undeploying' });
      } catch (err) {
        if (!(err instanceof CliError && err.status === 404)) throw err;
        break;
      }
      if (Date.now() > deadline) throw new CliError(`server ${x.name} was not deleted within ${timeoutS} s.`);
      await new Promise((r) => setTimeout(r, 500));
    }
    const node = x['esi:node'];
    if (!node) return null;
    for (;;) {
      const n = await bm(s, 'GET', `/nodes/${node}`);
      if (n.provision_state === 'available' || n.provision_state === 'manageable') {
        view.finish();
        return n.provision_state;
      }
      if (n.provision_state === 'clean failed' || n.provision_state === 'error')
        throw new CliError(`cleaning node ${n.name ?? n.uuid} failed (${n.provision_state}).`);
      view.update(cleanPhase(n));
      if (Date.now() > deadline)
        throw new CliError(`node ${n.name ?? n.uuid} was not cleaned within ${timeoutS} s (now ${n.provision_state}).`);
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    view.stop();
  }
}

interface CreateOptions extends OutputOptions {
  flavor: string;
  image: string;
  network: string[];
  keyName?: string;
  userData?: string;
  count: string;
  wait?: true | string;
}

/** Register `server create|list|show|delete` on the `server` command. */
export function registerInstanceCommands(server: Command): void {
  addOutputOptions(
    server
      .command('create')
      .description('create bare-metal servers: schedule nodes for the flavor, deploy the image (one step)')
      .argument('<name>', 'server name (with --count N: <name>-1 … <name>-N)')
      .requiredOption('--flavor <flavor>', 'flavor ID or name')
      .requiredOption('--image <image>', 'image ID or name (it must be active)')
      .option('--network <network>', 'attach this network (ID or name; repeatable)', collect, [] as string[])
      .option('--key-name <name>', 'key pair whose public key goes into the config drive')
      .option('--user-data <file>', 'user data (e.g. cloud-config) for the servers')
      .option('--count <n>', 'how many servers (all or nothing)', '1')
      .option('--wait [seconds]', 'wait until the servers are active, showing progress (optional timeout)'),
  ).action(async (name: string, o: CreateOptions) => {
    const timeout = waitSeconds(o.wait);
    const count = Number(o.count);
    if (!Number.isInteger(count) || count < 1 || count > 100)
      throw new CliError(`--count takes a whole number from 1 to 100 (got "${o.count}").`);
    let userData: string | undefined;
    if (o.userData !== undefined) {
      try {
        userData = fs.readFileSync(o.userData).toString('base64');
      } catch (err) {
        throw new CliError(`cannot read the user data ${o.userData}: ${(err as Error).message}`);
      }
    }
    await withSession(async (s) => {
      const flavor = await findFlavor(s, o.flavor);
      const image = await findImage(s, o.image);
      const networks = [];
      for (const n of o.network) {
        let net;
        try {
          net = await findNetwork(s, n);
        } catch (err) {
          if (err instanceof CliError && /no .*endpoint for service type "network"/.test(err.message))
            throw new CliError('networking is not available in this cloud (no network service); leave out --network.');
          throw err;
        }
        networks.push({ uuid: net.id });
      }
      const body = {
        server: {
          name,
          flavorRef: flavor.id,
          imageRef: image.id,
          networks: networks.length > 0 ? networks : 'none',
          min_count: count,
          max_count: count,
          return_reservation_id: true,
          ...(o.keyName !== undefined ? { key_name: o.keyName } : {}),
          ...(userData !== undefined ? { user_data: userData } : {}),
        },
      };
      const made = await nova(s, 'POST', '/servers', body);
      let servers: Server[] = ((await nova(s, 'GET', '/servers/detail', undefined, { reservation_id: made.reservation_id }))?.servers ??
        []) as Server[];
      servers.sort((a, b) => String(a.name).localeCompare(String(b.name), undefined, { numeric: true }));
      if (timeout !== null) {
        const done: Server[] = [];
        for (const x of servers) done.push(await waitActive(s, x.id, timeout));
        servers = done;
      }
      if (servers.length === 1) printShow(serverRecord(servers[0]!), o);
      else
        printList(
          ['ID', 'Name', 'Status', 'Node'],
          servers.map((x) => [x.id, x.name, x.status, x['esi:node'] ?? null]),
          o,
        );
    });
  });

  addOutputOptions(
    server
      .command('list')
      .description('list your servers')
      .option('--long', 'more columns (flavor, image, task state, fault)')
      .option('--all-projects', 'servers of every project (admins)')
      .option('--deleted', 'also servers deleted in the last day (with the reason when it was not you)'),
  ).action(async (o: { long?: boolean; allProjects?: boolean; deleted?: boolean } & OutputOptions) => {
    const query: Record<string, string> = {};
    if (o.allProjects) query.all_tenants = 'true';
    if (o.deleted) query['changes-since'] = new Date(Date.now() - 86_400_000).toISOString();
    const servers = ((await withSession((s) => nova(s, 'GET', '/servers/detail', undefined, query)))?.servers ?? []) as Server[];
    const labels = o.long ? ['ID', 'Name', 'Status', 'Task State', 'Node', 'Flavor', 'Image', 'Fault'] : ['ID', 'Name', 'Status', 'Node'];
    const rows = servers.map((x) => {
      const base = [x.id, x.name, x.status];
      const node = x['esi:node'] ?? x['OS-EXT-SRV-ATTR:hypervisor_hostname'] ?? null;
      return o.long
        ? [
            ...base,
            x['OS-EXT-STS:task_state'] ?? null,
            node,
            x.flavor?.original_name ?? null,
            x.image?.id ?? null,
            x.fault?.message ?? null,
          ]
        : [...base, node];
    });
    printList(labels, rows, o);
  });

  addOutputOptions(server.command('show').description('show a server').argument('<server>', 'server ID or name')).action(
    async (ident: string, o: OutputOptions) => {
      const x = await withSession((s) => findServer(s, ident));
      printShow(serverRecord(x), o);
    },
  );

  server
    .command('delete')
    .description('delete servers: their nodes are undeployed and cleaned, their allocations freed')
    .argument('<server...>', 'server IDs or names')
    .option('--wait [seconds]', 'wait until the servers are gone and their nodes cleaned (optional timeout)')
    .action(async (idents: string[], o: { wait?: true | string }) => {
      const timeout = waitSeconds(o.wait);
      await withSession(async (s) => {
        const found: Server[] = [];
        for (const ident of idents) found.push(await findServer(s, ident));
        for (const x of found) await nova(s, 'DELETE', `/servers/${x.id}`);
        for (const x of found) {
          const state = timeout !== null ? await waitDeleted(s, x, timeout) : null;
          process.stdout.write(`Deleted server ${x.name} (${x.id})${state ? `; node ${x['esi:node']} is ${state}` : ''}\n`);
        }
      });
    });
}
