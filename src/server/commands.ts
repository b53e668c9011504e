/**
 * `esi server` and `esi lab`: the long-running process roles, registered on the `esi` program by
 * src/main.ts (the user CLI in src/cli/ is a client and never loads the server). Their modules are
 * imported when the command runs, so that the other commands start without loading the server.
 * `esi server create|list|show|delete` (bare-metal servers) are subcommands of `server`.
 */
import type { Command } from 'commander';
import type { ConfigOptions } from './config.ts';
import { registerInstanceCommands } from '../cli/commands/server-instances.ts';
import type { Lab } from '../lab/index.ts';

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
  const network = await createLabNetwork({ prefix: `l${lab.port % 100_000}`, macs: lab.systems.ids.map((id) => lab.systems.get(id).mac) });
  const lines = lab.systems.ids.map(
    (id, i) => `  ${id}: MAC ${network.ports[i]!.mac}, switch port ${network.ports[i]!.port}, namespace ${network.ports[i]!.netns}`,
  );
  process.stdout.write(
    `esi: lab network: bridge ${network.bridge} (${network.vlanFiltering ? 'VLAN filtering' : 'one bridge per VLAN'}) as the switch; register it with\n` +
      `  esi switch create labtor --switch-id 02:00:00:00:00:01 --driver linux-bridge --driver-info bridge=${network.bridge}\n` +
      `and, as admin (which registers each switch port to its node), cable each node's port with --local-link-connection switch_info=labtor,switch_id=02:00:00:00:00:01,port_id=<switch port>:\n${lines.join('\n')}\n`,
  );
  return () => network.destroy();
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
    .option('--lab <n>', 'also start a virtual lab of N Redfish nodes (ESI_LAB_NODES)')
    .option('--lab-port <port>', 'port of the virtual lab (ESI_LAB_PORT, default 8586)')
    .option(
      '--lab-models <spec>',
      'server models of the first lab nodes, e.g. gpu:2,storage:1,small:5 (ESI_LAB_MODELS; models in src/lab/models or YAML paths)',
    )
    .option('--lab-network', "give the lab's nodes NICs on a Linux bridge (namespaces and veths; root only)")
    .option('--lab-ipmi <m>', 'also start M IPMI nodes: openipmi ipmi_sim BMCs on loopback UDP ports (needs ipmi_sim and ipmitool)')
    .option('--policy-file <file>', 'operator policy overrides, YAML (ESI_POLICY_FILE)')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (ESI_LOG_LEVEL)')
    .action(async (opts: ConfigOptions & { labNetwork?: boolean; labIpmi?: string }) => {
      // Loaded here, not at the top: the user commands of the CLI start without the server.
      const [{ loadConfig }, { startServer }, { startLab, parseModelSpec }] = await Promise.all([
        import('./config.ts'),
        import('./main.ts'),
        import('../lab/index.ts'),
      ]);
      const config = loadConfig(opts);
      const onClose: Array<() => Promise<void>> = [];
      if (config.lab.nodes > 0) {
        // Its systems boot the deploy agent, which calls this server's baremetal API.
        const agents = { apiUrl: `${config.publicUrl}/baremetal`, dataDir: config.dataDir };
        const models = config.lab.models === null ? undefined : parseModelSpec(config.lab.models);
        const lab = await startLab({
          nodes: config.lab.nodes,
          host: config.lab.host,
          port: config.lab.port,
          agents,
          ...(models ? { models } : {}),
        });
        onClose.push(() => lab.close());
        process.stdout.write(`esi: virtual lab of ${config.lab.nodes} Redfish nodes at ${lab.url}\n`);
        if (opts.labNetwork) onClose.push(await labNetworkFor(lab));
      }
      if (opts.labIpmi !== undefined) onClose.push(await ipmiLabFor(opts.labIpmi, config.lab.host));
      const running = await startServer(config, { onClose });
      process.stdout.write(`esi: listening on ${running.url ?? '(no api role)'}; data in ${config.dataDir}\n`);
      shutdownOnSignal(() => running.close());
    });
  registerInstanceCommands(server);

  program
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
    .action(
      async (opts: {
        nodes: string;
        host: string;
        port: string;
        network?: boolean;
        models?: string;
        labIpmi?: string;
        mockup?: string;
      }) => {
        const nodes = Number(opts.nodes);
        const port = Number(opts.port);
        if (!Number.isInteger(nodes) || nodes < 1 || nodes > 10_000) throw new Error('--nodes must be an integer from 1 to 10000');
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
        const lab = await startLab({ nodes, host: opts.host, port, ...(models ? { models } : {}) });
        process.stdout.write(`esi: virtual lab of ${nodes} Redfish nodes at ${lab.url}\n`);
        const destroy = opts.network ? await labNetworkFor(lab) : async () => undefined;
        const stopIpmi = opts.labIpmi !== undefined ? await ipmiLabFor(opts.labIpmi, opts.host) : async () => undefined;
        shutdownOnSignal(async () => {
          await lab.close();
          await destroy();
          await stopIpmi();
        });
      },
    );
}

/**
 * Start `--lab-ipmi M` ipmi_sim BMCs (src/lab/ipmi.ts) and print how to enrol them.
 * @returns their teardown
 * @throws Error when M is not an integer from 1 to 64 or ipmi_sim/ipmitool are missing
 */
async function ipmiLabFor(count: string, host: string): Promise<() => Promise<void>> {
  const { startIpmiLab } = await import('../lab/ipmi.ts');
  const lab = await startIpmiLab(Number(count), host);
  process.stdout.write(`esi: ${lab.bmcs.length} IPMI lab node(s) (openipmi ipmi_sim; driver ipmi):\n${lab.describe()}\n`);
  return () => lab.close();
}

function shutdownOnSignal(close: () => Promise<void>): void {
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`esi: error while stopping: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
