/**
 * `esi server` and `esi lab`: the long-running process roles. Their modules are imported when
 * the command runs, so that the other commands of the CLI start without loading the server.
 * `esi server create|list|show|delete` (bare-metal servers) are subcommands of `server`.
 */
import type { Command } from 'commander';
import type { ConfigOptions } from '../../server/config.ts';
import { registerInstanceCommands } from './server-instances.ts';

/**
 * Register `server` and `lab` on the program. `esi server` alone runs the service;
 * `esi server create|list|show|delete` manage bare-metal servers (./server-instances.ts).
 */
export function registerServerCommands(program: Command): void {
  const server = program
    .command('server')
    .description('run esi: all APIs, the conductor and the lease manager (SQLite by default); or create|list|show|delete bare-metal servers')
    .option('--config <file>', 'YAML configuration file (ESI_CONFIG)')
    .option('--host <host>', 'listen address (ESI_HOST, default 127.0.0.1)')
    .option('--port <port>', 'listen port (ESI_PORT, default 8585)')
    .option('--data-dir <dir>', 'data directory (ESI_DATA_DIR, default ./data)')
    .option('--database-url <url>', 'PostgreSQL URL (ESI_DATABASE_URL); SQLite in the data directory when absent')
    .option('--public-url <url>', 'base URL clients use (ESI_PUBLIC_URL)')
    .option('--roles <roles>', 'comma-separated process roles: api, conductor (ESI_ROLES, default both)')
    .option('--lab <n>', 'also start a virtual lab of N Redfish nodes (ESI_LAB_NODES)')
    .option('--lab-port <port>', 'port of the virtual lab (ESI_LAB_PORT, default 8586)')
    .option('--policy-file <file>', 'operator policy overrides, YAML (ESI_POLICY_FILE)')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (ESI_LOG_LEVEL)')
    .action(async (opts: ConfigOptions) => {
      // Loaded here, not at the top: the user commands of the CLI start without the server.
      const [{ loadConfig }, { startServer }, { startLab }] = await Promise.all([import('../../server/config.ts'), import('../../server/main.ts'), import('../../lab/index.ts')]);
      const config = loadConfig(opts);
      const onClose: Array<() => Promise<void>> = [];
      if (config.lab.nodes > 0) {
        // Its systems boot the deploy agent, which calls this server's baremetal API.
        const agents = { apiUrl: `${config.publicUrl}/baremetal`, dataDir: config.dataDir };
        const lab = await startLab({ nodes: config.lab.nodes, host: config.lab.host, port: config.lab.port, agents });
        onClose.push(() => lab.close());
        process.stdout.write(`esi: virtual lab of ${config.lab.nodes} Redfish nodes at ${lab.url}\n`);
      }
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
    .action(async (opts: { nodes: string; host: string; port: string }) => {
      const nodes = Number(opts.nodes);
      const port = Number(opts.port);
      if (!Number.isInteger(nodes) || nodes < 1 || nodes > 10_000) throw new Error('--nodes must be an integer from 1 to 10000');
      if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error('--port must be a port number');
      const { startLab } = await import('../../lab/index.ts');
      const lab = await startLab({ nodes, host: opts.host, port });
      process.stdout.write(`esi: virtual lab of ${nodes} Redfish nodes at ${lab.url}\n`);
      shutdownOnSignal(() => lab.close());
    });
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
