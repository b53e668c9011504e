/**
 * `esi lab enroll`: enrol the systems of a virtual lab (or of any Redfish BMC service) as nodes
 * that provision for real — the redfish hardware type, the `direct` deploy interface (the deploy
 * agent writes the image), the `redfish-virtual-media` boot interface with an agent ISO
 * (`deploy_iso`) or kernel and ramdisk (`deploy_kernel`, `deploy_ramdisk`), and one bare-metal
 * port per NIC MAC the BMC reports (the agent looks its node up by them). Ironic's own
 * enrolment guide asks for the same (https://docs.openstack.org/ironic/latest/install/enrollment.html:
 * driver_info, the deploy ramdisk, a port per NIC).
 *
 * The lab's systems and MACs are read over Redfish (DSP0266: `GET /redfish/v1/Systems`, each
 * system's `EthernetInterfaces`), so nothing is guessed. Existing nodes of the same name are left
 * alone and reported.
 */
import type { Command } from 'commander';
import { collect } from '../filters.ts';
import { addOutputOptions, printList, type OutputOptions } from '../output.ts';
import { CliError, withSession, type Session } from '../session.ts';

/** The Ironic microversion of the calls (fields such as `deploy_interface` need ≥ 1.31). */
const BM_VERSION = { 'x-openstack-ironic-api-version': '1.82' };

/** Flags of `esi lab enroll`. */
interface EnrollFlags extends OutputOptions {
  labUrl: string;
  username: string;
  password: string;
  system: string[];
  prefix: string;
  name?: string;
  owner?: string;
  deployIso?: string;
  deployKernel?: string;
  deployRamdisk?: string;
  resourceClass?: string;
}

/** One system of the lab as its BMC describes it. */
export interface LabSystem {
  /** Redfish `Id`, e.g. `node-1`. */
  readonly id: string;
  /** The system's path, e.g. `/redfish/v1/Systems/node-1` (`redfish_system_id`). */
  readonly path: string;
  /** Lower-case MAC addresses of its NICs. */
  readonly macs: readonly string[];
}

/**
 * Read the systems of a Redfish service and their NIC MACs.
 * @param labUrl the service root's base, e.g. `http://127.0.0.1:8586`
 * @throws CliError when the service cannot be read
 */
export async function readLabSystems(labUrl: string, username: string, password: string): Promise<LabSystem[]> {
  const auth = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const get = async (path: string): Promise<Record<string, any>> => {
    let res: Response;
    try {
      res = await fetch(new URL(path, labUrl), { headers: { authorization: auth, accept: 'application/json' } });
    } catch (err) {
      throw new CliError(`cannot reach the lab at ${labUrl}: ${(err as Error).message}`);
    }
    if (!res.ok) throw new CliError(`GET ${path} at ${labUrl} answered ${res.status}`);
    return (await res.json()) as Record<string, any>;
  };
  const collection = await get('/redfish/v1/Systems');
  const out: LabSystem[] = [];
  for (const member of (collection.Members ?? []) as Array<{ '@odata.id': string }>) {
    const path = member['@odata.id'];
    const system = await get(path);
    const nics = system.EthernetInterfaces?.['@odata.id'] as string | undefined;
    const macs: string[] = [];
    if (nics !== undefined) {
      for (const n of ((await get(nics)).Members ?? []) as Array<{ '@odata.id': string }>) {
        const mac = (await get(n['@odata.id'])).MACAddress;
        if (typeof mac === 'string' && mac !== '') macs.push(mac.toLowerCase());
      }
    }
    out.push({ id: String(system.Id ?? path.split('/').pop()), path, macs });
  }
  return out;
}

/**
 * The node body (`POST /v1/nodes`) of one lab system.
 * @param ramdisk the agent ramdisk keys of `driver_info` (`deploy_iso`, or `deploy_kernel` and `deploy_ramdisk`)
 */
export function labNodeBody(
  system: LabSystem,
  name: string,
  lab: { url: string; username: string; password: string },
  ramdisk: Readonly<Record<string, string>>,
  extra: { owner?: string; resourceClass?: string },
): Record<string, unknown> {
  return {
    name,
    driver: 'redfish',
    deploy_interface: 'direct',
    boot_interface: 'redfish-virtual-media',
    ...(extra.resourceClass !== undefined ? { resource_class: extra.resourceClass } : {}),
    ...(extra.owner !== undefined ? { owner: extra.owner } : {}),
    driver_info: {
      redfish_address: lab.url,
      redfish_system_id: system.path,
      redfish_username: lab.username,
      redfish_password: lab.password,
      ...ramdisk,
    },
  };
}

/** The ramdisk keys the flags name, or the lab's simulated agent media. */
function ramdiskKeys(o: EnrollFlags): Record<string, string> {
  if (o.deployKernel !== undefined || o.deployRamdisk !== undefined) {
    if (o.deployKernel === undefined || o.deployRamdisk === undefined)
      throw new CliError('--deploy-kernel and --deploy-ramdisk go together (Ironic needs both).');
    return { deploy_kernel: o.deployKernel, deploy_ramdisk: o.deployRamdisk };
  }
  return { deploy_iso: o.deployIso ?? new URL('/media/esi-agent.iso', o.labUrl).toString() };
}

/** The project id of `nameOrId` (identity `GET /v3/projects?name=`), or the argument itself when it is an id. */
async function projectId(s: Session, nameOrId: string): Promise<string> {
  const found = await s.call('identity', 'GET', '/v3/projects', { query: { name: nameOrId } });
  const match = ((found?.projects ?? []) as Array<{ id: string }>)[0];
  return match?.id ?? nameOrId;
}

/** The node named `name`, or undefined when there is none. */
async function existingNode(s: Session, name: string): Promise<{ uuid: string } | undefined> {
  try {
    return (await s.call('baremetal', 'GET', `/v1/nodes/${encodeURIComponent(name)}`, { headers: BM_VERSION })) as { uuid: string };
  } catch (err) {
    if (err instanceof CliError && err.status === 404) return undefined;
    throw err;
  }
}

/** Register `enroll` on the `lab` command. */
export function registerLabEnrollCommand(lab: Command): void {
  addOutputOptions(
    lab
      .command('enroll')
      .description(
        "enrol the lab's systems as nodes that provision for real: redfish, direct deploy, virtual-media boot of the agent ramdisk, a port per NIC",
      )
      .option('--lab-url <url>', 'the Redfish service of the lab', 'http://127.0.0.1:8586')
      .option('--username <user>', 'BMC user', 'admin')
      .option('--password <password>', 'BMC password', 'password')
      .option('--system <id>', 'enrol only this system (repeatable; default: all)', collect, [] as string[])
      .option('--prefix <prefix>', 'node name = prefix + the system id', '')
      .option('--name <name>', 'the node name, when one --system is enrolled')
      .option('--owner <project>', 'owner project (name or id)')
      .option('--resource-class <class>', 'resource class of the nodes')
      .option('--deploy-iso <url>', "the agent ISO (default: the lab's agent media, <lab-url>/media/esi-agent.iso)")
      .option('--deploy-kernel <url>', 'the agent kernel (with --deploy-ramdisk; the conductor builds a per-node ISO)')
      .option('--deploy-ramdisk <url>', 'the agent initramfs (with --deploy-kernel)'),
  ).action(async (o: EnrollFlags) => {
    const ramdisk = ramdiskKeys(o);
    const systems = (await readLabSystems(o.labUrl, o.username, o.password)).filter(
      (s) => o.system.length === 0 || o.system.includes(s.id),
    );
    const unknown = o.system.filter((id) => !systems.some((s) => s.id === id));
    if (unknown.length > 0) throw new CliError(`the lab has no system ${unknown.join(', ')}`);
    if (o.name !== undefined && systems.length !== 1) throw new CliError('--name needs exactly one --system.');
    const rows = await withSession(async (s) => {
      const owner = o.owner === undefined ? undefined : await projectId(s, o.owner);
      const out: unknown[][] = [];
      for (const system of systems) {
        const name = o.name ?? `${o.prefix}${system.id}`;
        const same = await existingNode(s, name);
        if (same !== undefined) {
          out.push([name, same.uuid, system.macs.join(' '), 'exists (left alone)']);
          continue;
        }
        const lab = { url: o.labUrl, username: o.username, password: o.password };
        const body = labNodeBody(system, name, lab, ramdisk, {
          ...(owner !== undefined ? { owner } : {}),
          ...(o.resourceClass !== undefined ? { resourceClass: o.resourceClass } : {}),
        });
        const node = await s.call('baremetal', 'POST', '/v1/nodes', { headers: BM_VERSION, body });
        for (const mac of system.macs) {
          await s.call('baremetal', 'POST', '/v1/ports', { headers: BM_VERSION, body: { node_uuid: node.uuid, address: mac } });
        }
        out.push([name, node.uuid, system.macs.join(' '), 'enrolled']);
      }
      return out;
    });
    printList(['Name', 'UUID', 'MACs', 'Result'], rows, o);
  });
}
