/**
 * The `esi` command: process entry points (`esi server`, `esi lab`, `esi agent`) and the user CLI
 * (`esi offer …`, `esi lease …`, `esi node list`, `esi node network …`, `esi trunk …`, `esi switch …`,
 * `esi event list`, `esi quota …`, `esi token issue`). Each
 * command group lives in `./commands/<group>.ts` and registers itself on the program.
 *
 * The user commands read the `OS_*` environment as the `openstack` CLI does (see
 * `./session.ts`). Failures print one line, `esi: <message>`, and exit with status 1.
 */
import { Command, CommanderError } from 'commander';
import { registerAgentCommands } from './commands/agent.ts';
import { registerLeaseCommands } from './commands/lease.ts';
import { registerEventCommands } from './commands/event.ts';
import { registerNodeCommands } from './commands/node.ts';
import { registerOfferCommands } from './commands/offer.ts';
import { registerServerCommands } from './commands/server.ts';
import { registerTokenCommands } from './commands/token.ts';
import { registerQuotaCommands } from './commands/quota.ts';
import { registerNetworkCommands } from './commands/network.ts';
import { registerSwitchCommands } from './commands/switch.ts';

const program = new Command('esi')
  .description('Elastic Secure Infrastructure: lease, power and provision bare-metal nodes')
  .version('0.1.0')
  .showHelpAfterError()
  .exitOverride();

registerServerCommands(program);
registerAgentCommands(program);
registerOfferCommands(program);
registerLeaseCommands(program);
registerNodeCommands(program);
registerEventCommands(program);
registerTokenCommands(program);
registerQuotaCommands(program);
registerNetworkCommands(program);
registerSwitchCommands(program);

// `esi … | head`: a closed pipe ends the command quietly, as it does for other Unix tools.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  process.stderr.write(`esi: ${(err as Error).message}\n`);
  process.exit(1);
}
