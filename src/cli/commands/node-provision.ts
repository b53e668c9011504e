/**
 * `esi node provision` and `esi node unprovision`: the one-shot provisioning a lessee (or an
 * owner) uses, as metalsmith does on top of Ironic (https://opendev.org/openstack/metalsmith; ESI's
 * user guide provisions this way, https://esi.readthedocs.io), made of standard API calls:
 *
 * provision:
 * 1. `GET /baremetal/v1/nodes/{node}` — it must be `available`;
 * 2. the image by ID or name (`GET /image/v2/images…`) — it must be `active`;
 * 3. each `--network`: attached in one request (`POST /network/v2.0/esi/node-networks`): the
 *    port `esi-<node>-<network>` (found or created, as python-esiclient names it) becomes a VIF
 *    of a free NIC of the node;
 * 4. `PATCH` the node's `instance_info` (`image_source`; stale checksums removed);
 * 5. `PUT …/states/provision {target: active, configdrive: {meta_data: {public_keys, hostname,
 *    name}, user_data}}` (config drive as a JSON object, Ironic ≥ 1.56);
 * 6. with `--wait`, poll the node until `active` (or a failure), drawing the deploy phases and
 *    the image bytes written (`deploy_step.progress`, ./../progress.ts).
 *
 * unprovision: `PUT …/states/provision {target: deleted}`; with `--wait`, until the node is
 * cleaned and `available` again, drawing the cleaning steps.
 *
 * A lessee cannot see `last_error` (Ironic redacts it); a failure then says so.
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import { addOutputOptions, printShow, type OutputOptions } from '../output.ts';
import { ProgressView, type ProgressState } from '../progress.ts';
import { cleanPhase, deployPhase } from '../../domain/deploy/phases.ts';
import { CliError, withSession, type Session } from '../session.ts';

/** The baremetal API version the CLI speaks. */
const BM_VERSION = { 'x-openstack-ironic-api-version': '1.82' };
const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
/** `instance_info` keys that describe another image and must not survive a new `image_source`. */
const STALE_IMAGE_KEYS = ['image_checksum', 'image_os_hash_algo', 'image_os_hash_value', 'image_disk_format', 'image_url'];

type Node = Record<string, any>;

/** A GET/PUT/PATCH/POST of the baremetal API with the CLI's microversion. */
export function bm(s: Session, method: string, path: string, body?: unknown): Promise<any> {
  return s.call('baremetal', method, `/v1${path}`, { headers: BM_VERSION, ...(body !== undefined ? { body } : {}) });
}

/** The node named or numbered `ident` (404 → a CliError naming it). */
export async function getNode(s: Session, ident: string): Promise<Node> {
  try {
    return await bm(s, 'GET', `/nodes/${encodeURIComponent(ident)}`);
  } catch (err) {
    if (err instanceof CliError && err.status === 404) throw new CliError(`node ${ident} was not found (or you may not use it).`, 404);
    throw err;
  }
}

/** The image with this ID or name. @throws CliError when none or several match */
export async function findImage(s: Session, ident: string): Promise<Record<string, any>> {
  if (UUID_RE.test(ident)) {
    try {
      return await s.call('image', 'GET', `/v2/images/${encodeURIComponent(ident)}`);
    } catch (err) {
      if (!(err instanceof CliError && err.status === 404)) throw err;
    }
  }
  const found = ((await s.call('image', 'GET', '/v2/images', { query: { name: ident } }))?.images ?? []) as Array<Record<string, any>>;
  return await pickByName(s, found, 'owner', 'image', ident);
}

/**
 * The one object a name picks among those the caller sees: the caller's own project's when it
 * has exactly one of that name (another project sharing one with the same name never takes
 * over the name), else the only one (docs/architecture.md, "Objects a request names").
 * @param ownerKey the object's project field (`owner` for images, `project_id` for networks)
 * @throws CliError when none or several match
 */
export async function pickByName(
  s: Session,
  found: ReadonlyArray<Record<string, any>>,
  ownerKey: string,
  what: string,
  ident: string,
): Promise<Record<string, any>> {
  if (found.length === 0) throw new CliError(`no ${what} named ${ident} that you may use.`);
  if (found.length === 1) return found[0]!;
  const project = (await s.authenticate()).body.project?.id as string | undefined;
  const mine = found.filter((x) => project !== undefined && x[ownerKey] === project);
  if (mine.length === 1) return mine[0]!;
  throw new CliError(`${found.length} ${what}s are named ${ident}; give the ${what} ID.`);
}

/** The network with this ID or name (Neutron). */
export async function findNetwork(s: Session, ident: string): Promise<Record<string, any>> {
  if (UUID_RE.test(ident)) {
    try {
      return (await s.call('network', 'GET', `/v2.0/networks/${encodeURIComponent(ident)}`)).network;
    } catch (err) {
      if (!(err instanceof CliError && err.status === 404)) throw err;
    }
  }
  const found = ((await s.call('network', 'GET', '/v2.0/networks', { query: { name: ident } }))?.networks ?? []) as Array<
    Record<string, any>
  >;
  return pickByName(s, found, 'project_id', 'network', ident);
}

/**
 * Attach `network` to the node in one request (`POST /network/v2.0/esi/node-networks`, as
 * `esi node network attach` does): the port `esi-<node>-<network>` is found or created and bound
 * to a free NIC of the node, so a re-run attaches nothing twice.
 * @returns the port's name
 */
async function attachNetwork(s: Session, node: Node, network: string): Promise<string> {
  const res = await s.call('network', 'POST', '/v2.0/esi/node-networks', { body: { node: node.uuid, network } });
  const port = res?.node_network?.network_port;
  return typeof port?.name === 'string' ? port.name : String(port?.id ?? network);
}

/** The public keys of `--ssh-key` files, as the config drive's `public_keys`. */
function publicKeys(files: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  files.forEach((file, i) => {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw new CliError(`cannot read the SSH key ${file}: ${(err as Error).message}`);
    }
    if (!/^(ssh-|ecdsa-|sk-)\S+ \S+/.test(text))
      throw new CliError(`${file} is not an OpenSSH public key (ssh-ed25519/ssh-rsa/ecdsa-… AAAA…).`);
    out[i === 0 ? 'default' : `key-${i}`] = text;
  });
  return out;
}

/** Where a deploying or cleaning node is (shared with the dashboard: src/domain/deploy/phases.ts). */
export { cleanPhase, deployPhase };

/** Options of {@link waitFor}. */
interface WaitSpec {
  readonly done: (n: Node) => boolean;
  readonly phase: (n: Node) => ProgressState;
  /** Failure states (e.g. `deploy failed`) and what failed. */
  readonly failed: (n: Node) => boolean;
  readonly what: string;
}

/**
 * Poll the node every 500 ms until `done`, drawing its phase.
 * @param timeoutS give up after this many seconds (0 = never)
 * @throws CliError on a failure state or the timeout
 */
export async function waitFor(s: Session, uuid: string, subject: string, spec: WaitSpec, timeoutS: number): Promise<Node> {
  const view = new ProgressView(subject);
  const deadline = timeoutS > 0 ? Date.now() + timeoutS * 1000 : Infinity;
  try {
    for (;;) {
      const n = await bm(s, 'GET', `/nodes/${uuid}`);
      if (spec.done(n)) {
        view.finish();
        return n;
      }
      if (spec.failed(n)) {
        const err =
          typeof n.last_error === 'string' && !n.last_error.startsWith('** ')
            ? n.last_error
            : 'the reason is shown to the node owner and admins (last_error)';
        throw new CliError(`${spec.what} of node ${subject} failed (${n.provision_state}): ${err}`);
      }
      view.update(spec.phase(n));
      if (Date.now() > deadline)
        throw new CliError(`${spec.what} of node ${subject} did not finish within ${timeoutS} s (now ${n.provision_state}).`);
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    view.stop();
  }
}

/** `--wait [seconds]`: true → no timeout (0), a number → that timeout; undefined → no wait. */
export function waitSeconds(v: true | string | undefined): number | null {
  if (v === undefined) return null;
  if (v === true) return 0;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new CliError(`--wait takes a whole number of seconds (got "${v}").`);
  return n;
}

interface ProvisionOptions extends OutputOptions {
  image: string;
  sshKey: string[];
  userData?: string;
  hostname?: string;
  network: string[];
  wait?: true | string;
}

/** Register `node provision` and `node unprovision` on the `node` command group. */
export function registerProvisionCommands(node: Command): void {
  addOutputOptions(
    node
      .command('provision')
      .description('deploy an image onto a node you hold, with SSH keys and user data in a config drive')
      .argument('<node>', 'node UUID or name')
      .requiredOption('--image <image>', 'image ID or name (it must be active)')
      .option(
        '--ssh-key <file>',
        'OpenSSH public key file for the instance (repeatable)',
        (v: string, p: string[]) => [...p, v],
        [] as string[],
      )
      .option('--user-data <file>', 'user data (e.g. cloud-config) for the instance')
      .option('--hostname <name>', 'host name of the instance (default: the node name)')
      .option(
        '--network <network>',
        'attach this network (ID or name) to the node first (repeatable)',
        (v: string, p: string[]) => [...p, v],
        [] as string[],
      )
      .option('--wait [seconds]', 'wait until the node is active, showing progress (optional timeout)'),
  ).action(async (ident: string, o: ProvisionOptions) => {
    const timeout = waitSeconds(o.wait);
    const keys = publicKeys(o.sshKey);
    let userData: string | undefined;
    if (o.userData !== undefined) {
      try {
        userData = fs.readFileSync(o.userData, 'utf8');
      } catch (err) {
        throw new CliError(`cannot read the user data ${o.userData}: ${(err as Error).message}`);
      }
    }
    await withSession(async (s) => {
      const n = await getNode(s, ident);
      if (n.provision_state !== 'available')
        throw new CliError(`node ${ident} is ${n.provision_state}; it must be available to be provisioned.`);
      if (n.maintenance) throw new CliError(`node ${ident} is in maintenance; it cannot be provisioned.`);
      const image = await findImage(s, o.image);
      if (image.status !== 'active') throw new CliError(`image ${o.image} is ${image.status}; it must be active.`);
      const ports: string[] = [];
      for (const net of o.network) ports.push(await attachNetwork(s, n, net));
      const patch: unknown[] = [{ op: 'add', path: '/instance_info/image_source', value: image.id }];
      for (const k of STALE_IMAGE_KEYS) if (n.instance_info?.[k] !== undefined) patch.push({ op: 'remove', path: `/instance_info/${k}` });
      await bm(s, 'PATCH', `/nodes/${n.uuid}`, patch);
      const hostname = o.hostname ?? n.name ?? n.uuid;
      const configdrive = {
        meta_data: { hostname, name: hostname, ...(Object.keys(keys).length > 0 ? { public_keys: keys } : {}) },
        ...(userData !== undefined ? { user_data: userData } : {}),
      };
      await bm(s, 'PUT', `/nodes/${n.uuid}/states/provision`, { target: 'active', configdrive });
      let shown: Node;
      if (timeout !== null) {
        shown = await waitFor(
          s,
          n.uuid,
          n.name ?? n.uuid,
          {
            done: (x) => x.provision_state === 'active',
            failed: (x) => x.provision_state === 'deploy failed' || x.provision_state === 'error',
            phase: deployPhase,
            what: 'the deploy',
          },
          timeout,
        );
      } else {
        shown = await bm(s, 'GET', `/nodes/${n.uuid}`);
      }
      printShow(
        Object.entries({
          node: shown.name ?? shown.uuid,
          uuid: shown.uuid,
          provision_state: shown.provision_state,
          power_state: shown.power_state,
          image: image.name ?? image.id,
          hostname,
          networks: ports,
        }),
        o,
      );
    });
  });

  addOutputOptions(
    node
      .command('unprovision')
      .description('undeploy a node: its instance is removed and its disk wiped (it becomes available again)')
      .argument('<node>', 'node UUID or name')
      .option('--wait [seconds]', 'wait until the node is cleaned and available, showing progress (optional timeout)'),
  ).action(async (ident: string, o: { wait?: true | string } & OutputOptions) => {
    const timeout = waitSeconds(o.wait);
    await withSession(async (s) => {
      const n = await getNode(s, ident);
      await bm(s, 'PUT', `/nodes/${n.uuid}/states/provision`, { target: 'deleted' });
      const shown =
        timeout !== null
          ? await waitFor(
              s,
              n.uuid,
              n.name ?? n.uuid,
              {
                done: (x) => x.provision_state === 'available' || x.provision_state === 'manageable',
                failed: (x) => x.provision_state === 'clean failed' || x.provision_state === 'error',
                phase: cleanPhase,
                what: 'the undeploy',
              },
              timeout,
            )
          : await bm(s, 'GET', `/nodes/${n.uuid}`);
      printShow(
        Object.entries({
          node: shown.name ?? shown.uuid,
          uuid: shown.uuid,
          provision_state: shown.provision_state,
          power_state: shown.power_state,
        }),
        o,
      );
    });
  });
}
