/**
 * Standalone entry point of the deploy agent: `esi agent …` without the rest of the `esi`
 * command. The lab bundles this module (src/lab/agent-bundle.ts) so that a virtual node's
 * agent starts in a tenth of the CPU time of `node bin/esi.js agent` (no TypeScript loader,
 * no other commands). Arguments: `agent <flags>` as `esi agent` takes them
 * (src/cli/commands/agent.ts).
 */
import { Command } from 'commander';
import { registerAgentCommands } from '../cli/commands/agent.ts';

const program = new Command('esi');
registerAgentCommands(program);
await program.parseAsync(process.argv);
