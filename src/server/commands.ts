/**
 * `esi server` and `esi lab`: the long-running process roles, registered on the `esi` program by
 * src/main.ts (the user CLI in src/cli/ is a client and never loads the server). Their modules are
 * imported when the command runs, so that the other commands start without loading the server.
 * `esi server create|list|show|delete` (bare-metal servers) are subcommands of `server`.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { ConfigOptions } from './config.ts';
import { registerInstanceCommands } from '../cli/commands/server-instances.ts';
import type { Lab, QemuLabOptions } from '../lab/index.ts';
import { printLabModelChanges, registerLabStatusCommand, startLabIpmi } from './lab-commands.ts';

/**
 * Build the lab network (src/lab/network.ts) for a lab's systems — a bridge and a namespace
 * with a veth per system, the system's MAC on its `eth0` — and print how to use it.
 * @returns the teardown
 * @throws Error when this host cannot (not root, no namespaces)
 */
async function labNetworkFor(lab: Lab): Promise<() => Promise<void>> {
  const { createLabNetwork, labNetworkSupport } = await import('../lab/network.ts');
  const support = await labNetworkSupport();
  if (!support.ok) throw new Error(`the lab network ${support.reason}`);
  const ids = lab.systems.ids.filter((id) => lab.systems.get(id).backing === 'simulated');
  const network = await createLabNetwork({ prefix: `l${lab.port % 100_000}`, macs: ids.map((id) => lab.systems.get(id).mac) });
  const lines = ids.map(
    (id, i) => `  ${id}: MAC ${network.ports[i]!.mac}, switch port ${network.ports[i]!.port}, namespace ${network.ports[i]!.netns}`,
  );
  process.stdout.write(
    `esi: lab network: bridge ${network.bridge} (${network.vlanFiltering ? 'VLAN filtering' : 'one bridge per VLAN'}) as the switch; register it with\n` +
      `  esi switch create labtor --switch-id 02:00:00:00:00:01 --driver linux-bridge --driver-info bridge=${network.bridge}\n` +
      `and, as admin (which registers each switch port to its node), cable each node's port with --local-link-connection switch_info=labtor,switch_id=02:00:00:00:00:01,port_id=<switch port>:\n${lines.join('\n')}\n`,
  );
  return () => network.destroy();
}

/** Settings of `--qemu N` / `--lab-qemu N` (docs/lab.md), as typed or configured. */
interface QemuFlags {
  readonly nodes: number;
  readonly dataDir: string;
  readonly memoryMiB: number;
  readonly vcpus: number;
  readonly diskGiB: number;
  readonly firmware: string;
  readonly accel: string;
  /** Name prefix of the network objects; default `q<lab port>` (set once the port is known). */
  readonly prefix: string | null;
  readonly provisioningVlan: number;
  readonly provisioningAddress: string;
}

/**
 * The lab's QEMU options for `flags`, after checking that this host can build their network (the
 * QEMU nodes' NICs are on it; a user-mode NIC is not offered).
 * @throws Error naming what is missing (not root, no namespaces, no /dev/net/tun) or the bad flag
 */
async function qemuLabOptions(flags: QemuFlags, port: number): Promise<QemuLabOptions> {
  const { qemuNetworkSupport } = await import('../lab/index.ts');
  const support = await qemuNetworkSupport();
  if (!support.ok) throw new Error(`QEMU lab nodes need their network, and it ${support.reason}`);
  if (!['uefi', 'bios'].includes(flags.firmware)) throw new Error('the QEMU firmware must be uefi or bios');
  if (!['auto', 'kvm', 'tcg'].includes(flags.accel)) throw new Error('the QEMU accelerator must be auto, kvm or tcg');
  const prefix = flags.prefix ?? `q${port % 100_000}`;
  return {
    count: flags.nodes,
    dataDir: flags.dataDir,
    memoryMiB: flags.memoryMiB,
    vcpus: flags.vcpus,
    diskGiB: flags.diskGiB,
    firmware: flags.firmware as 'uefi' | 'bios',
    accel: flags.accel as 'auto' | 'kvm' | 'tcg',
    network: { prefix, provisioningVlan: flags.provisioningVlan, provisioningAddress: flags.provisioningAddress },
  };
}

/** Print the QEMU nodes and their switch: how to register it and cable each node. */
function printQemuLab(lab: Lab): void {
  const q = lab.qemu;
  if (q === null) return;
  const s = q.settings;
  const nodes = q.ids.map((id) => `  ${id}: MAC ${lab.systems.get(id).mac}, switch port ${q.network?.ports.get(id) ?? '(none)'}`);
  const n = q.network;
  process.stdout.write(
    `esi: ${q.ids.length} QEMU node(s) (${s.vcpus} vCPUs, ${s.memoryMiB} MiB, ${s.diskGiB} GiB disk, ${s.firmware}, accel ${s.accel}; files in ${s.dataDir}/lab/<id>/)\n` +
      (n === null
        ? nodes.join('\n')
        : `esi: their switch: bridge ${n.bridge} in namespace ${n.netns} (${n.vlanFiltering ? 'VLAN filtering' : 'one bridge per VLAN'}); ` +
          `the host is ${n.provisioningAddress} on ${n.uplink}, an access port of provisioning VLAN ${n.provisioningVlan}. Register it with\n` +
          `  esi switch create labqemu --switch-id 02:00:00:00:00:02 --driver linux-bridge --driver-info bridge=${n.bridge} --driver-info netns=${n.netns}\n` +
          `and, as admin, cable each node's port with --local-link-connection switch_info=labqemu,switch_id=02:00:00:00:00:02,port_id=<switch port>:\n${nodes.join('\n')}`) +
      '\n',
  );
}

/**
 * Register `server` and `lab` on the program. `esi server` alone runs the service;
 * `esi server create|list|show|delete` manage bare-metal servers (./server-instances.ts).
 */
export function registerServerCommands(program: Command): void {
  const server = program
    .command('server')
    .description(
      'run esi: all APIs, the conductor and the lease manager (SQLite by default); or create|list|show|delete bare-metal servers',
    )
    .option('--config <file>', 'YAML configuration file (ESI_CONFIG)')
    .option('--host <host>', 'listen address (ESI_HOST, default 127.0.0.1)')
    .option('--port <port>', 'listen port (ESI_PORT, default 8585)')
    .option('--data-dir <dir>', 'data directory (ESI_DATA_DIR, default ./data)')
    .option('--database-url <url>', 'PostgreSQL URL (ESI_DATABASE_URL); SQLite in the data directory when absent')
    .option('--public-url <url>', 'base URL clients use (ESI_PUBLIC_URL)')
    .option('--roles <roles>', 'comma-separated process roles: api, conductor (ESI_ROLES, default both)')
    .option(
      '--conductor-name <name>',
      'conductor name, unique among live processes (ESI_CONDUCTOR_HOSTNAME; default <host>-<id>, id kept in <data-dir>/conductor-id)',
    )
    .option('--lab <n>', 'also start a virtual lab of N Redfish nodes (ESI_LAB_NODES)')
    .option('--lab-port <port>', 'port of the virtual lab (ESI_LAB_PORT, default 8586)')
    .option(
      '--lab-models <spec>',
      'server models of the first lab nodes, e.g. gpu:2,storage:1,small:5 (ESI_LAB_MODELS; models in src/lab/models or YAML paths)',
    )
    .option('--lab-network', "give the lab's nodes NICs on a Linux bridge (namespaces and veths; root only)")
    .option('--lab-ipmi <m>', 'also start M IPMI nodes: openipmi ipmi_sim BMCs on loopback UDP ports (needs ipmi_sim and ipmitool)')
    .option('--lab-force', 'apply --lab-models that change kept lab nodes, move IPMI nodes off taken ports (docs/lab.md)')
    .option(
      '--lab-qemu <n>',
      'also start N QEMU virtual machines behind the lab BMC, on a bridge in a namespace (root; ESI_LAB_QEMU_*, docs/lab.md)',
    )
    .option('--policy-file <file>', 'operator policy overrides, YAML (ESI_POLICY_FILE)')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (ESI_LOG_LEVEL)')
    .option('--log-format <format>', 'pretty|json|auto: human lines or JSON; auto is pretty on a terminal (ESI_LOG_FORMAT)')
    .action(async (opts: ConfigOptions & { labNetwork?: boolean; labIpmi?: string; labForce?: boolean }) => {
      // Loaded here, not at the top: the user commands of the CLI start without the server.
      const [{ loadConfig }, { preflight }, { startServer }, { startLab, parseModelSpec }] = await Promise.all([
        import('./config.ts'),
        import('./preflight.ts'),
        import('./main.ts'),
        import('../lab/index.ts'),
      ]);
      const config = loadConfig(opts);
      // Tools, data directory, ports: a start that cannot work ends here, in one line.
      await preflight(config, { labIpmi: opts.labIpmi !== undefined });
      const onClose: Array<() => Promise<void>> = [];
      const q = config.lab.qemu;
      // The lab keeps its nodes' identities, models and IPMI ports in the data directory.
      const persist = { dataDir: config.dataDir, force: opts.labForce === true };
      if (config.lab.nodes > 0 || q.nodes > 0) {
        // Its systems boot the deploy agent, which calls this server's baremetal API.
        const agents = { apiUrl: `${config.publicUrl}/baremetal`, dataDir: config.dataDir };
        const models = config.lab.models === null ? undefined : parseModelSpec(config.lab.models);
        const qemu = q.nodes > 0 ? await qemuLabOptions({ ...q, dataDir: config.dataDir }, config.lab.port) : undefined;
        const lab = await startLab({
          nodes: config.lab.nodes,
          host: config.lab.host,
          port: config.lab.port,
          agents,
          persist,
          ...(models ? { models } : {}),
          ...(qemu ? { qemu } : {}),
        });
        onClose.push(() => lab.close());
        await printLabModelChanges(lab);
        process.stdout.write(`esi: virtual lab of ${config.lab.nodes + q.nodes} Redfish nodes at ${lab.url}\n`);
        printQemuLab(lab);
        if (opts.labNetwork) onClose.push(await labNetworkFor(lab));
      }
      if (opts.labIpmi !== undefined) onClose.push(await startLabIpmi(opts.labIpmi, config.lab.host, persist));
      const running = await startServer(config, { onClose });
      process.stdout.write(`esi: listening on ${running.url ?? '(no api role)'}; data in ${config.dataDir}\n`);
      const openrc = path.join(config.dataDir, 'admin-openrc');
      if (fs.existsSync(openrc)) process.stdout.write(`esi: admin credentials: source ${openrc}\n`);
      process.stdout.write(`esi: ready; stop with Ctrl-C (or kill -TERM ${process.pid})\n`);
      shutdownOnSignal(() => running.close());
    });
  registerInstanceCommands(server);

  const lab = program
    .command('lab')
    .description('run the virtual lab alone: N Redfish BMC emulators (basic auth admin/password)')
    .option('--nodes <n>', 'number of virtual nodes', '5')
    .option('--host <host>', 'listen address', '127.0.0.1')
    .option('--port <port>', 'listen port', '8586')
    .option('--network', 'give the nodes NICs on a Linux bridge (namespaces and veths; root only)')
    .option(
      '--models <spec>',
      'server models of the first nodes, e.g. gpu:2,storage:1,small:5 (shipped: gpu, storage, small; or YAML paths)',
    )
    .option('--lab-ipmi <m>', 'also start M IPMI nodes: openipmi ipmi_sim BMCs on loopback UDP ports (needs ipmi_sim and ipmitool)')
    .option('--mockup <dir>', "serve a vendor's Redfish mockup directory (DMTF layout: index.json per resource) instead of virtual nodes")
    .option('--qemu <n>', 'also start N QEMU virtual machines behind the BMC, on a bridge in a namespace (root; docs/lab.md)', '0')
    .option('--qemu-memory <MiB>', 'memory of each QEMU node, MiB', '2048')
    .option('--qemu-cpus <n>', 'vCPUs of each QEMU node', '2')
    .option('--qemu-disk <GiB>', 'disk of each QEMU node, GiB', '8')
    .option('--qemu-firmware <mode>', 'firmware the QEMU nodes start with: uefi or bios', 'uefi')
    .option('--qemu-accel <accel>', 'auto (KVM when usable), kvm or tcg', 'auto')
    .option('--qemu-prefix <prefix>', 'name prefix of the QEMU network (1-6 of a-z0-9; default q<port>)')
    .option('--qemu-vlan <vlan>', 'provisioning VLAN on the QEMU nodes’ bridge', '3900')
    .option('--qemu-address <cidr>', 'the host’s address in the provisioning VLAN', '10.42.0.1/24')
    .option(
      '--data-dir <dir>',
      'directory of the lab’s state (<dir>/lab/lab-state.json) and QEMU nodes’ disks, media and console logs',
      './data',
    )
    .option('--force', 'apply --models that change kept nodes, move IPMI nodes off taken ports (docs/lab.md)')
    .action(
      async (opts: {
        nodes: string;
        host: string;
        port: string;
        network?: boolean;
        models?: string;
        labIpmi?: string;
        mockup?: string;
        qemu: string;
        qemuMemory: string;
        qemuCpus: string;
        qemuDisk: string;
        qemuFirmware: string;
        qemuAccel: string;
        qemuPrefix?: string;
        qemuVlan: string;
        qemuAddress: string;
        dataDir: string;
        force?: boolean;
      }) => {
        const nodes = Number(opts.nodes);
        const port = Number(opts.port);
        const qemuNodes = Number(opts.qemu);
        if (!Number.isInteger(qemuNodes) || qemuNodes < 0 || qemuNodes > 64) throw new Error('--qemu must be an integer from 0 to 64');
        if (!Number.isInteger(nodes) || nodes < (qemuNodes > 0 ? 0 : 1) || nodes > 10_000)
          throw new Error('--nodes must be an integer from 1 to 10000');
        if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error('--port must be a port number');
        if (opts.mockup !== undefined) {
          const { startMockupLab } = await import('../lab/mockup.ts');
          const mock = await startMockupLab({ dir: opts.mockup, host: opts.host, port });
          process.stdout.write(`esi: Redfish mockup ${opts.mockup} at ${mock.url} (systems: ${mock.systems.join(', ') || 'none'})\n`);
          shutdownOnSignal(() => mock.close());
          return;
        }
        const { startLab, parseModelSpec } = await import('../lab/index.ts');
        const models = opts.models === undefined ? undefined : parseModelSpec(opts.models);
        if (models !== undefined && models.length > nodes) throw new Error(`--models names ${models.length} nodes but --nodes is ${nodes}`);
        const { default: path } = await import('node:path');
        const qemu =
          qemuNodes > 0
            ? await qemuLabOptions(
                {
                  nodes: qemuNodes,
                  dataDir: path.resolve(opts.dataDir),
                  memoryMiB: Number(opts.qemuMemory),
                  vcpus: Number(opts.qemuCpus),
                  diskGiB: Number(opts.qemuDisk),
                  firmware: opts.qemuFirmware,
                  accel: opts.qemuAccel,
                  prefix: opts.qemuPrefix ?? null,
                  provisioningVlan: Number(opts.qemuVlan),
                  provisioningAddress: opts.qemuAddress,
                },
                port,
              )
            : undefined;
        const persist = { dataDir: path.resolve(opts.dataDir), force: opts.force === true };
        const lab = await startLab({ nodes, host: opts.host, port, persist, ...(models ? { models } : {}), ...(qemu ? { qemu } : {}) });
        process.stdout.write(`esi: virtual lab of ${nodes + qemuNodes} Redfish nodes at ${lab.url} (state in ${persist.dataDir}/lab/)\n`);
        await printLabModelChanges(lab);
        printQemuLab(lab);
        const destroy = opts.network ? await labNetworkFor(lab) : async () => undefined;
        const stopIpmi = opts.labIpmi !== undefined ? await startLabIpmi(opts.labIpmi, opts.host, persist) : async () => undefined;
        shutdownOnSignal(async () => {
          await lab.close();
          await destroy();
          await stopIpmi();
        });
      },
    );
  registerLabStatusCommand(lab);
}

/** Seconds a clean stop may take before the process exits anyway. */
const STOP_DEADLINE_S = 20;

/**
 * On SIGINT or SIGTERM: say so, close `close` (workers, API, lab, database) and exit 0, or 1
 * when closing fails or takes longer than {@link STOP_DEADLINE_S}; a second signal exits at once.
 */
function shutdownOnSignal(close: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      // A second Ctrl-C: do not wait for the clean stop.
      process.stderr.write(`esi: ${signal} again: exiting without waiting\n`);
      process.exit(1);
    }
    stopping = true;
    process.stderr.write(`esi: ${signal}: stopping (background work, the API, the lab, the database)…\n`);
    const deadline = setTimeout(() => {
      process.stderr.write(`esi: not stopped after ${STOP_DEADLINE_S} s: exiting\n`);
      process.exit(1);
    }, STOP_DEADLINE_S * 1000);
    deadline.unref();
    close().then(
      () => {
        process.stderr.write('esi: stopped\n');
        process.exit(0);
      },
      (err: unknown) => {
        process.stderr.write(`esi: error while stopping: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
