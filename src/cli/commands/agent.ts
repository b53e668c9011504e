/**
 * `esi agent`: the deploy agent that runs on a node (in the lab: on a virtual node booted from
 * virtual media or the network; on a real machine: in esi's deploy ramdisk, started by its
 * /init, src/ramdisk/init.sh). It looks itself up at the baremetal API by its MACs, heartbeats,
 * and serves ironic-python-agent's command API for the conductor (src/agent/).
 */
import type { Command } from 'commander';

interface AgentFlags {
  apiUrl: string;
  mac: string[];
  nodeUuid?: string;
  disk: string;
  diskSizeGb?: string;
  listenHost: string;
  listenPort: string;
  advertiseHost?: string;
  consoleLog?: string;
  heartbeatInterval?: string;
  hardwareFile?: string;
  inspectionCallbackUrl?: string;
  agentToken?: string;
  globalRequestId?: string;
  debug?: boolean;
}

/** Register `agent` on the program. */
export function registerAgentCommands(program: Command): void {
  program
    .command('agent')
    .description('run the deploy agent of a node: lookup, heartbeat, image writing and cleaning (ironic-python-agent protocol)')
    .requiredOption(
      '--api-url <url>',
      'baremetal endpoint, e.g. http://127.0.0.1:8585/baremetal (several, comma-separated: the first that answers)',
    )
    .option('--mac <mac>', 'a MAC address of the node (repeatable)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--node-uuid <uuid>', 'the node UUID, when known')
    .requiredOption('--disk <file>', 'the disk to write images to: a file, a block device, or "auto" (the root device IPA would pick)')
    .option('--disk-size-gb <n>', 'create or extend the disk file to N GiB')
    .option('--listen-host <host>', 'address of the command API', '0.0.0.0')
    .option('--listen-port <port>', 'port of the command API (0: any free port)', '9999')
    .option('--advertise-host <host>', 'host the conductor calls back (default: the listen host; "auto": the address that reaches the API)')
    .option('--console-log <file>', 'append console output to this file (the serial log)')
    .option('--heartbeat-interval <s>', 'seconds between heartbeats (default: from the lookup)')
    .option(
      '--hardware-file <file>',
      "the machine's hardware description (JSON; the lab writes it) for inspection; else /proc and /sys are read",
    )
    .option('--inspection-callback-url <url>', 'post the inspection inventory here first (e.g. <api-url>/v1/continue_inspection)')
    .option('--agent-token <token>', 'pre-shared agent token (ipa-agent-token), used when the lookup shows the token as issued')
    .option('--global-request-id <id>', 'X-OpenStack-Request-ID of every API request (ipa-global-request-id, req-<uuid>)')
    .option('--debug', 'print routine successes too (ipa-debug)')
    .action(async (flags: AgentFlags) => {
      const port = Number(flags.listenPort);
      if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error('--listen-port must be a port number');
      const gib = flags.diskSizeGb === undefined ? undefined : Number(flags.diskSizeGb);
      if (gib !== undefined && !(gib > 0 && gib <= 1_048_576)) throw new Error('--disk-size-gb must be a positive number of GiB');
      const hb = flags.heartbeatInterval === undefined ? undefined : Number(flags.heartbeatInterval);
      if (hb !== undefined && !(hb > 0 && hb <= 3600)) throw new Error('--heartbeat-interval must be 0 < s ≤ 3600');
      for (const m of flags.mac) if (!/^([0-9a-f]{2}[:-]){5}[0-9a-f]{2}$/i.test(m)) throw new Error(`--mac ${m} is not a MAC address`);
      if (flags.globalRequestId !== undefined && !/^req-[0-9a-f-]{36}$/i.test(flags.globalRequestId))
        throw new Error('--global-request-id must be req-<UUID>');
      const { runAgent, exitCodeFor } = await import('../../agent/main.ts');
      const agent = await runAgent({
        apiUrl: flags.apiUrl,
        macs: flags.mac.map((m) => m.toLowerCase().replace(/-/g, ':')),
        ...(flags.nodeUuid !== undefined ? { nodeUuid: flags.nodeUuid } : {}),
        diskPath: flags.disk,
        ...(gib !== undefined ? { diskSizeBytes: Math.round(gib * 1024 ** 3) } : {}),
        listenHost: flags.listenHost,
        listenPort: port,
        ...(flags.advertiseHost !== undefined ? { advertiseHost: flags.advertiseHost } : {}),
        ...(flags.consoleLog !== undefined ? { consoleLog: flags.consoleLog } : {}),
        ...(hb !== undefined ? { heartbeatIntervalS: hb } : {}),
        ...(flags.hardwareFile !== undefined ? { hardwareFile: flags.hardwareFile } : {}),
        ...(flags.inspectionCallbackUrl !== undefined ? { inspectionCallbackUrl: flags.inspectionCallbackUrl } : {}),
        ...(flags.agentToken !== undefined ? { agentToken: flags.agentToken } : {}),
        ...(flags.globalRequestId !== undefined ? { globalRequestId: flags.globalRequestId } : {}),
        debug: flags.debug === true,
      });
      const stop = (): void => void agent.stop('stopped by signal');
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      process.exit(exitCodeFor(await agent.stopped));
    });
}
