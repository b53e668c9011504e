/**
 * `esi console auth token create|delete`: serial console tokens of a node the caller owns or
 * leases, as python-esiclient's `openstack esi console auth token …` (esi-leap's
 * `POST /v1/console_auth_tokens`, `DELETE /v1/console_auth_tokens/{node}`). `create` prints the
 * token and its websocket `access_url` for a client of one's choice (`esi node console` does the
 * same and attaches the terminal); `delete` revokes every console token of the node at once.
 *
 *   esi console auth token create node-1 --ttl 300 -f value -c access_url
 *   esi console auth token delete node-1
 */
import type { Command } from 'commander';
import { addOutputOptions, printShow, type OutputOptions } from '../output.ts';
import { CliError, withSession } from '../session.ts';

const FIELDS = ['node_uuid', 'token', 'access_url'];

/** Register the `console auth token` command group. */
export function registerConsoleTokenCommands(program: Command): void {
  const token = program
    .command('console')
    .description('serial console access (esi node console attaches a terminal)')
    .command('auth')
    .description('console authorisation')
    .command('token')
    .description('console tokens of a node you own or lease');

  addOutputOptions(
    token
      .command('create')
      .description("create a console token: its access_url is the node's serial console websocket")
      .argument('<node>', 'node UUID or name')
      .option('--ttl <seconds>', "lifetime of the token, seconds (default: the server's, 600)"),
    FIELDS,
  ).action(async (node: string, o: { ttl?: string } & OutputOptions) => {
    let ttl: number | undefined;
    if (o.ttl !== undefined) {
      ttl = Number(o.ttl);
      if (!Number.isInteger(ttl) || ttl < 1) throw new CliError(`--ttl takes a whole number of seconds ≥ 1 (got "${o.ttl}").`);
    }
    const tok = await withSession((s) =>
      s.call('lease', 'POST', '/v1/console_auth_tokens', {
        body: { node_uuid_or_name: node, ...(ttl !== undefined ? { token_ttl: ttl } : {}) },
      }),
    );
    printShow(
      FIELDS.map((f) => [f, tok[f]] as const),
      o,
    );
  });

  token
    .command('delete')
    .description('revoke every console token of a node (open consoles are closed)')
    .argument('<node>', 'node UUID or name')
    .action(async (node: string) => {
      await withSession((s) => s.call('lease', 'DELETE', `/v1/console_auth_tokens/${encodeURIComponent(node)}`));
      process.stdout.write(`Deleted console tokens of node ${node}\n`);
    });
}
