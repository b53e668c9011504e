/**
 * The `esi` program: process entry points (`esi server`, `esi lab`, `esi agent`) and the user CLI
 * (`esi offer …`, `esi lease …`, `esi node list`, `esi node network …`, `esi trunk …`, `esi switch …`,
 * `esi event list`, `esi quota …`, `esi token issue`, `esi lease policy …`, `esi webhook …`,
 * `esi console auth token …`). Each user command group lives in
 * `./cli/commands/<group>.ts`, the process roles in `./server/commands.ts`; each registers itself
 * on the program. This module is the one place that sees both (src/cli/ never loads the server).
 *
 * The user commands read clouds.yaml (`--os-cloud`, `OS_CLOUD`) and the `OS_*` environment as
 * the `openstack` CLI does (see `./cli/session.ts`, `./cli/clouds.ts`). Failures print one line,
 * `esi: <message>`, and exit with status 1.
 */
import { Command } from 'commander';
import { registerAgentCommands } from './cli/commands/agent.ts';
import { registerRamdiskCommands } from './cli/commands/ramdisk.ts';
import { registerLabEnrollCommand } from './cli/commands/lab-enroll.ts';
import { registerLeaseCommands } from './cli/commands/lease.ts';
import { registerEventCommands } from './cli/commands/event.ts';
import { registerNodeCommands } from './cli/commands/node.ts';
import { registerOfferCommands } from './cli/commands/offer.ts';
import { registerServerCommands } from './server/commands.ts';
import { registerAdminCommands } from './server/admin-commands.ts';
import { registerDbCommands } from './server/db-commands.ts';
import { registerTokenCommands } from './cli/commands/token.ts';
import { registerQuotaCommands } from './cli/commands/quota.ts';
import { registerNetworkCommands } from './cli/commands/network.ts';
import { registerPortForwardingCommands } from './cli/commands/port-forwarding.ts';
import { registerSwitchCommands } from './cli/commands/switch.ts';
import { registerImageBuildCommands } from './cli/commands/image-build.ts';
import { registerCloudOption } from './cli/clouds.ts';
import { registerWaitReadyCommand } from './cli/commands/wait-ready.ts';
import { registerLeasePolicyCommands } from './cli/commands/lease-policy.ts';
import { registerWebhookCommands } from './cli/commands/webhook.ts';
import { registerConsoleTokenCommands } from './cli/commands/console-token.ts';

import { addExamples } from './cli/examples.ts';

/**
 * The `esi` program with every command registered and every command's examples in its help
 * (`./cli/examples.ts`). Parsing errors throw `CommanderError` (`exitOverride`).
 */
export function buildProgram(): Command {
  const program = new Command('esi')
    .description('Elastic Secure Infrastructure: lease, power and provision bare-metal nodes')
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride();

  registerCloudOption(program);
  registerServerCommands(program);
  registerAdminCommands(program);
  registerDbCommands(program);
  registerLabEnrollCommand(program.commands.find((c) => c.name() === 'lab')!);
  registerAgentCommands(program);
  registerRamdiskCommands(program);
  registerOfferCommands(program);
  registerLeaseCommands(program);
  registerLeasePolicyCommands(program.commands.find((c) => c.name() === 'lease')!);
  registerNodeCommands(program);
  registerEventCommands(program);
  registerTokenCommands(program);
  registerQuotaCommands(program);
  registerNetworkCommands(program);
  registerPortForwardingCommands(program);
  registerSwitchCommands(program);
  registerImageBuildCommands(program);
  registerWaitReadyCommand(program);
  registerWebhookCommands(program);
  registerConsoleTokenCommands(program);
  addExamples(program);
  return program;
}
