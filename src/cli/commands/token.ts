/**
 * `esi token issue|revoke` and `esi catalog list`: the identity side of a session, like
 * `openstack token issue|revoke` and `openstack catalog list` — to check credentials and see
 * which services a cloud announces.
 */
import type { Command } from 'commander';
import { addOutputOptions, printList, printShow, type OutputOptions } from '../output.ts';
import { withSession } from '../session.ts';

/** Register `token` and `catalog`. */
export function registerTokenCommands(program: Command): void {
  const token = program.command('token').description('Keystone tokens');
  addOutputOptions(token.command('issue').description('issue a token with the OS_* credentials')).action(async (o: OutputOptions) => {
    const { token: id, body } = await withSession((s) => s.authenticate());
    printShow(
      [
        ['expires', body.expires_at ?? ''],
        ['id', id],
        ...(body.project ? [['project_id', body.project.id] as const] : []),
        ...(body.system ? [['system', 'all'] as const] : []),
        ['user_id', body.user?.id ?? ''],
      ],
      o,
    );
  });
  token
    .command('revoke')
    .description('revoke a token')
    .argument('<token>', 'the token to revoke')
    .action(async (subject: string) => {
      await withSession((s) => s.call('identity', 'DELETE', '/v3/auth/tokens', { headers: { 'x-subject-token': subject } }));
    });

  const catalog = program.command('catalog').description('the service catalogue');
  addOutputOptions(catalog.command('list').description('list the services in the token catalogue')).action(async (o: OutputOptions) => {
    const { body } = await withSession((s) => s.authenticate());
    const services = (body.catalog ?? []) as Array<{
      name?: string;
      type?: string;
      endpoints?: Array<{ interface?: string; region?: string; url?: string }>;
    }>;
    const rows = services.map((svc) => [
      svc.name ?? '',
      svc.type ?? '',
      (svc.endpoints ?? []).map((e) => `${e.region ?? ''} ${e.interface ?? ''}: ${e.url ?? ''}`).join('\n'),
    ]);
    printList(['Name', 'Type', 'Endpoints'], rows, o);
  });
}
