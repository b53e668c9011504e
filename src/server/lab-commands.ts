/**
 * The lab's persistence as the `esi lab` and `esi server --lab` commands show it (docs/lab.md
 * "A lab that stays put"): `esi lab status`, the lines a `--force` start prints about what it
 * changed, and the IPMI nodes started on their kept ports. The lab modules are imported when a
 * command runs, so that other commands start without loading them.
 */
import type { Command } from 'commander';
import { addOutputOptions, printList, type OutputOptions } from '../cli/output.ts';
import type { Lab } from '../lab/index.ts';

/**
 * Prints what a `--force` start changed in the kept nodes (`esi: --force changed …`), to standard
 * output; nothing when it changed nothing.
 */
export async function printLabModelChanges(lab: Lab): Promise<void> {
  if (lab.modelChanges.length === 0) return;
  const { formatModelChanges } = await import('../lab/index.ts');
  process.stdout.write(
    `esi: --force changed the model of ${lab.modelChanges.length} kept lab node(s):\n${formatModelChanges(lab.modelChanges)}\n`,
  );
}

/**
 * Starts `count` IPMI lab nodes (src/lab/ipmi-persist.ts) on their kept ports of `dataDir`'s lab
 * state, prints how to enrol each one and any node `force` moved to a new port.
 * @returns their teardown
 * @throws Error when `count` is not an integer from 1 to 64, ipmi_sim/ipmitool are missing, or a
 *   kept port is taken (without `force`: the message names the node and the port)
 */
export async function startLabIpmi(
  count: string,
  host: string,
  persist: { dataDir: string; force: boolean },
): Promise<() => Promise<void>> {
  const { startPersistentIpmiLab } = await import('../lab/ipmi-persist.ts');
  const lab = await startPersistentIpmiLab(Number(count), host, persist);
  process.stdout.write(`esi: ${lab.bmcs.length} IPMI lab node(s) (openipmi ipmi_sim; driver ipmi):\n${lab.describe()}\n`);
  for (const m of lab.moved)
    process.stdout.write(
      `esi: --force moved IPMI lab node ${m.name} from ${m.host}:${m.from} (in use) to ${m.host}:${m.to}: set its node's driver_info ipmi_port=${m.to}\n`,
    );
  return () => lab.close();
}

/** Column labels of `esi lab status`. */
const STATUS_COLUMNS = ['Node', 'Kind', 'Running', 'BMC', 'Model', 'UUID', 'MAC', 'Disk'] as const;

/**
 * Registers `esi lab status` on the `lab` command: the lab of `--data-dir` (the `lab` command's
 * option, written before or after `status`; default `$ESI_DATA_DIR`, else `./data`) from its state
 * file, whether a lab runs or not (src/lab/status.ts). `-f json|yaml` gives each disk's sizes in bytes.
 */
export function registerLabStatusCommand(lab: Command): void {
  addOutputOptions(
    lab
      .command('status')
      .description(
        "the lab of --data-dir (ESI_DATA_DIR, default ./data): its nodes, BMC addresses and ports, models, and disk files' virtual, apparent and allocated sizes",
      ),
    STATUS_COLUMNS,
  ).action(async (opts: OutputOptions, cmd: Command) => {
    const parent = cmd.parent!;
    const given = parent.getOptionValueSource('dataDir') !== 'default';
    const dataDir = (given ? (parent.opts<{ dataDir?: string }>().dataDir ?? undefined) : process.env.ESI_DATA_DIR) ?? './data';
    const { labStatus, describeDisk } = await import('../lab/status.ts');
    const status = labStatus(dataDir);
    const structured = opts.format === 'json' || opts.format === 'yaml';
    const rows = status.nodes.map((n) => [
      n.id,
      n.kind,
      n.running,
      n.bmc,
      n.model,
      n.uuid,
      n.mac,
      structured ? n.disk : describeDisk(n.disk),
    ]);
    if (opts.format === 'table')
      process.stdout.write(
        `lab of ${dataDir}: ${status.pid !== null ? `running (pid ${status.pid})` : 'not running'}` +
          `${status.url !== null ? `, Redfish at ${status.url}` : ''}; state in ${status.stateFile}\n`,
      );
    printList(STATUS_COLUMNS, rows, opts);
  });
}
