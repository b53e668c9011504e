/**
 * The `esi` command's entry point (bin/esi.js loads it): builds the program (`./program.ts`) and
 * runs it on the process's arguments. Failures print one line, `esi: <message>`, and exit with
 * status 1.
 */
import { CommanderError } from 'commander';
import { keepOutputInOrder } from './cli/stdio.ts';
import { buildProgram } from './program.ts';

// With stdout and stderr on pipes (`2>&1 | tee`), lines arrive in the order they are written.
keepOutputInOrder();

const program = buildProgram();

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
