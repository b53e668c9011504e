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
 * system's `EthernetInterfaces`), so nothing is guessed; so is what is behind each system, from
 * the lab's `Oem.EsiLab` of the ComputerSystem (src/lab/render-system.ts). Existing nodes of the
 * same name are left alone and reported.
 *
 * The agent ramdisk, unless `--deploy-iso` or `--deploy-kernel`/`--deploy-ramdisk` name one for
 * every system:
 * | system (`Oem.EsiLab.Backend`) | driver_info |
 * |-------------------------------|-------------|
 * | `simulated` | `deploy_iso` = the lab's simulated agent media, `<lab-url>/media/esi-agent.iso` (the lab starts the agent as a host process) |
 * | `qemu`, or a BMC that is not esi's lab | `deploy_kernel`/`deploy_ramdisk` = `file://` URLs of esi's deploy ramdisk (docs/ramdisk.md), which the conductor turns into the node's ISO; a real machine cannot boot the simulated media |
 *
 * The ramdisk is taken from the cache `esi ramdisk build` fills (`$ESI_CACHE_DIR`, else
 * `~/.cache/esi`), and built there first when it is not (minutes, progress on standard error;
 * a build that cannot run fails the command with the reason). The `file://` URLs are read by the
 * esi server, so this runs on the esi host with the server's cache, which is one of the server's
 * `ESI_FILE_URL_ALLOWED_PATHS` by default.
 *
 * A QEMU system on the lab's switch (`Oem.EsiLab.SwitchPort`: bridge, namespace, port) gets its
 * port cabled — `local_link_connection` `{switch_id, switch_info, port_id}` of the esi switch
 * whose `linux-bridge` `driver_info` names that bridge and namespace (which the admin registered
 * as the lab prints, docs/lab.md) — so that VIF attachments program its switch port. Without
 * such a switch the port is created uncabled and the result says so.
 */
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { collect } from '../filters.ts';
import { addOutputOptions, printList, type OutputOptions } from '../output.ts';
import { CliError, withSession, type Session } from '../session.ts';

/** The Ironic microversion of the calls (fields such as `deploy_interface` need ≥ 1.31). */
const BM_VERSION = { 'x-openstack-ironic-api-version': '1.82' };

/** Flags of `esi lab enroll`. */
export interface EnrollFlags extends OutputOptions {
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
  /** What is behind it (the lab's `Oem.EsiLab.Backend`); `unknown` for a BMC that is not esi's lab. */
  readonly backend: 'simulated' | 'qemu' | 'unknown';
  /** The lab switch port its NIC is cabled to (the lab's `Oem.EsiLab.SwitchPort`), or null. */
  readonly switchPort: LabSwitchPort | null;
}

/** A port of the lab's switch, as the lab's BMC reports it. */
export interface LabSwitchPort {
  /** The Linux bridge (an esi `linux-bridge` switch's `driver_info.bridge`). */
  readonly bridge: string;
  /** Its network namespace (`driver_info.netns`), '' for none. */
  readonly netns: string;
  /** The port (`local_link_connection.port_id`). */
  readonly port: string;
}

/** The backing and switch port of a ComputerSystem resource, from the lab's `Oem.EsiLab`. */
function labFacts(system: Record<string, any>): Pick<LabSystem, 'backend' | 'switchPort'> {
  const oem = system.Oem?.EsiLab as Record<string, any> | undefined;
  const backend = oem?.Backend === 'simulated' || oem?.Backend === 'qemu' ? (oem.Backend as 'simulated' | 'qemu') : 'unknown';
  const sp = oem?.SwitchPort as Record<string, unknown> | undefined;
  const switchPort =
    typeof sp?.Bridge === 'string' && typeof sp.PortId === 'string'
      ? { bridge: sp.Bridge, netns: typeof sp.Netns === 'string' ? sp.Netns : '', port: sp.PortId }
      : null;
  return { backend, switchPort };
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
    out.push({ id: String(system.Id ?? path.split('/').pop()), path, macs, ...labFacts(system) });
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

/** esi's deploy ramdisk files (absolute paths). */
export interface RamdiskFiles {
  readonly kernel: string;
  readonly initramfs: string;
}

/**
 * The kernel and ramdisk the flags name for every system, or null when they name none.
 * @throws CliError when only one of `--deploy-kernel` and `--deploy-ramdisk` is given
 */
function flaggedPair(o: Pick<EnrollFlags, 'deployKernel' | 'deployRamdisk'>): Record<string, string> | null {
  if (o.deployKernel === undefined && o.deployRamdisk === undefined) return null;
  if (o.deployKernel === undefined || o.deployRamdisk === undefined)
    throw new CliError('--deploy-kernel and --deploy-ramdisk go together (Ironic needs both).');
  return { deploy_kernel: o.deployKernel, deploy_ramdisk: o.deployRamdisk };
}

/**
 * The agent ramdisk keys of `driver_info` of one system (see the module documentation).
 * @param ramdisk esi's deploy ramdisk, asked for only when the system boots it
 * @throws CliError when only one of `--deploy-kernel` and `--deploy-ramdisk` is given, or what
 *   `ramdisk` throws
 */
export async function ramdiskKeysFor(
  system: Pick<LabSystem, 'backend'>,
  o: Pick<EnrollFlags, 'labUrl' | 'deployIso' | 'deployKernel' | 'deployRamdisk'>,
  ramdisk: () => Promise<RamdiskFiles>,
): Promise<Record<string, string>> {
  const pair = flaggedPair(o);
  if (pair !== null) return pair;
  if (o.deployIso !== undefined) return { deploy_iso: o.deployIso };
  if (system.backend === 'simulated') return { deploy_iso: new URL('/media/esi-agent.iso', o.labUrl).toString() };
  const files = await ramdisk();
  return { deploy_kernel: pathToFileURL(files.kernel).href, deploy_ramdisk: pathToFileURL(files.initramfs).href };
}

/**
 * esi's deploy ramdisk from the cache, built first when it is not there (src/ramdisk/build.ts).
 * @throws CliError with the reason and what to do when it cannot be built
 */
async function cachedOrBuiltRamdisk(): Promise<RamdiskFiles> {
  const [{ buildRamdisk }, { cacheRoot }] = await Promise.all([import('../../ramdisk/index.ts'), import('../../osimage/cache.ts')]);
  process.stderr.write(
    "esi: QEMU and real systems boot esi's deploy ramdisk; taking it from the cache or building it (esi ramdisk build)\n",
  );
  try {
    return await buildRamdisk({ cacheDir: cacheRoot(process.env), log: (line) => process.stderr.write(`${line}\n`) });
  } catch (err) {
    throw new CliError(
      `QEMU and real systems boot esi's deploy ramdisk, and it could not be built: ${(err as Error).message}. ` +
        'Build it with `esi ramdisk build` (docs/ramdisk.md), or name the agent with --deploy-iso or --deploy-kernel and --deploy-ramdisk.',
    );
  }
}

/** An esi switch as `GET /v2.0/switches` lists it (the fields read here). */
interface EsiSwitch {
  readonly name: string;
  readonly switch_id: string;
  readonly driver: string;
  readonly driver_info?: Record<string, unknown>;
}

/**
 * The `local_link_connection` of a lab switch port: that of the esi `linux-bridge` switch whose
 * `driver_info` names the port's bridge and namespace, or null when esi has none.
 */
export function localLinkConnection(port: LabSwitchPort, switches: readonly EsiSwitch[]): Record<string, string> | null {
  const sw = switches.find(
    (s) => s.driver === 'linux-bridge' && s.driver_info?.bridge === port.bridge && String(s.driver_info?.netns ?? '') === port.netns,
  );
  return sw === undefined ? null : { switch_id: sw.switch_id, switch_info: sw.name, port_id: port.port };
}

/** The switches esi manages, or none when the caller may not list them. */
async function esiSwitches(s: Session): Promise<EsiSwitch[]> {
  try {
    return ((await s.call('network', 'GET', '/v2.0/switches'))?.switches ?? []) as EsiSwitch[];
  } catch (err) {
    if (err instanceof CliError && (err.status === 403 || err.status === 404)) return [];
    throw err;
  }
}

/** What `esi lab enroll` needs besides the flags (tests give their own ramdisk). */
export interface EnrollDeps {
  /** esi's deploy ramdisk (default: from the cache, built when missing). */
  readonly ramdisk?: () => Promise<RamdiskFiles>;
}

/**
 * Enrol the lab's systems that the flags select (see the module documentation).
 * @returns one row per system: name, node UUID, MACs, and what happened
 * @throws CliError for bad flags, an unknown `--system`, an unreachable lab, or an API refusal
 */
export async function enrollLabSystems(s: Session, o: EnrollFlags, deps: EnrollDeps = {}): Promise<unknown[][]> {
  flaggedPair(o); // half a pair fails before the lab is read
  const systems = (await readLabSystems(o.labUrl, o.username, o.password)).filter((x) => o.system.length === 0 || o.system.includes(x.id));
  const unknown = o.system.filter((id) => !systems.some((x) => x.id === id));
  if (unknown.length > 0) throw new CliError(`the lab has no system ${unknown.join(', ')}`);
  if (o.name !== undefined && systems.length !== 1) throw new CliError('--name needs exactly one --system.');
  let built: Promise<RamdiskFiles> | null = null;
  const ramdisk = () => (built ??= (deps.ramdisk ?? cachedOrBuiltRamdisk)());
  let switches: Promise<EsiSwitch[]> | null = null;
  const owner = o.owner === undefined ? undefined : await projectId(s, o.owner);
  const lab = { url: o.labUrl, username: o.username, password: o.password };
  const out: unknown[][] = [];
  for (const system of systems) {
    const name = o.name ?? `${o.prefix}${system.id}`;
    const same = await existingNode(s, name);
    if (same !== undefined) {
      out.push([name, same.uuid, system.macs.join(' '), 'exists (left alone)']);
      continue;
    }
    const body = labNodeBody(system, name, lab, await ramdiskKeysFor(system, o, ramdisk), {
      ...(owner !== undefined ? { owner } : {}),
      ...(o.resourceClass !== undefined ? { resourceClass: o.resourceClass } : {}),
    });
    const llc = system.switchPort === null ? null : localLinkConnection(system.switchPort, await (switches ??= esiSwitches(s)));
    const node = await s.call('baremetal', 'POST', '/v1/nodes', { headers: BM_VERSION, body });
    for (const [i, mac] of system.macs.entries()) {
      // The lab's switch port is the system's NIC's (a QEMU system has one, listed first).
      const cabling = llc !== null && i === 0 ? { local_link_connection: llc } : {};
      await s.call('baremetal', 'POST', '/v1/ports', { headers: BM_VERSION, body: { node_uuid: node.uuid, address: mac, ...cabling } });
    }
    const result =
      system.switchPort === null
        ? 'enrolled'
        : llc !== null
          ? `enrolled, port cabled to ${llc.switch_info} ${llc.port_id}`
          : `enrolled, port not cabled: no esi linux-bridge switch for bridge ${system.switchPort.bridge}` +
            `${system.switchPort.netns ? ` in ${system.switchPort.netns}` : ''} (docs/lab.md)`;
    out.push([name, node.uuid, system.macs.join(' '), result]);
  }
  return out;
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
      .option(
        '--deploy-iso <url>',
        "the agent ISO of every system (default: simulated systems the lab's agent media, <lab-url>/media/esi-agent.iso)",
      )
      .option(
        '--deploy-kernel <url>',
        "the agent kernel of every system (with --deploy-ramdisk; default for QEMU systems: esi's deploy ramdisk, built if needed)",
      )
      .option('--deploy-ramdisk <url>', 'the agent initramfs (with --deploy-kernel)'),
  ).action(async (o: EnrollFlags) => {
    const rows = await withSession((s) => enrollLabSystems(s, o));
    printList(['Name', 'UUID', 'MACs', 'Result'], rows, o);
  });
}
