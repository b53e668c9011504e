/**
 * `esi webhook list|show|create|set|delete|deliveries`: a project's webhooks
 * (`/lease/v1/webhooks`, esi's additive endpoint; docs/leasing.md "Webhooks"). A webhook receives
 * the lease events its project sees, signed with its secret; the secret is write-only (shown as
 * `******`). `deliveries` shows each delivery's status, attempts and last error.
 *
 *   esi webhook create https://hooks.example.org/esi --secret "$(openssl rand -hex 32)" \
 *       --event-type esi_leap.lease.ending_soon --name chat
 *   esi webhook deliveries chat-hook-uuid
 */
import type { Command } from 'commander';
import { addOutputOptions, printRecords, printShow, type FieldColumn, type OutputOptions } from '../output.ts';
import { CliError, withSession } from '../session.ts';

/** `esi webhook list` columns: `[field, label]`. */
export const WEBHOOK_FIELDS: readonly FieldColumn[] = [
  ['uuid', 'UUID'],
  ['name', 'Name'],
  ['url', 'URL'],
  ['event_types', 'Event Types'],
  ['enabled', 'Enabled'],
  ['project_id', 'Project ID'],
];

/** `esi webhook deliveries` columns: `[field, label]`. */
export const DELIVERY_FIELDS: readonly FieldColumn[] = [
  ['id', 'ID'],
  ['event_type', 'Event Type'],
  ['status', 'Status'],
  ['attempts', 'Attempts'],
  ['last_status_code', 'Last Status Code'],
  ['last_error', 'Last Error'],
  ['next_attempt_at', 'Next Attempt At'],
  ['delivered_at', 'Delivered At'],
];

const SHOW_FIELDS = ['created_at', 'enabled', 'event_types', 'name', 'project_id', 'secret', 'updated_at', 'url', 'uuid'];

/** Options that set a webhook (create and set). */
interface WebhookOptions {
  readonly secret?: string;
  readonly name?: string;
  readonly eventType?: string[];
  readonly url?: string;
  readonly enable?: boolean;
}

function webhookBody(o: WebhookOptions): Record<string, unknown> {
  return {
    ...(o.url !== undefined ? { url: o.url } : {}),
    ...(o.secret !== undefined ? { secret: o.secret } : {}),
    ...(o.name !== undefined ? { name: o.name } : {}),
    ...((o.eventType?.length ?? 0) > 0 ? { event_types: o.eventType } : {}),
    ...(o.enable !== undefined ? { enabled: o.enable } : {}),
  };
}

function withWebhookOptions(cmd: Command): Command {
  return cmd
    .option('--name <name>', 'a name for the webhook')
    .option('--event-type <type>', 'an event type it receives (repeatable; default: all)', (v: string, p: string[]) => [...p, v], [])
    .option('--enable', 'deliver events')
    .option('--disable', 'stop delivering events (they are not queued)');
}

/** --enable / --disable as the `enabled` value. @throws CliError when both are given */
function enabledOf(o: { enable?: boolean; disable?: boolean }): boolean | undefined {
  if (o.enable && o.disable) throw new CliError('give --enable or --disable, not both.');
  return o.enable ? true : o.disable ? false : undefined;
}

function showWebhook(w: Record<string, unknown>, o: OutputOptions): void {
  printShow(
    SHOW_FIELDS.map((f) => [f, w[f]] as const),
    o,
  );
}

/** Register the `webhook` command group. */
export function registerWebhookCommands(program: Command): void {
  const webhook = program.command('webhook').description("a project's webhooks: lease events POSTed to a URL, signed with a secret");

  addOutputOptions(
    webhook
      .command('list')
      .description("list webhooks (your project's; admins: all, or --project)")
      .option('--project <project>', 'webhooks of this project (admin)'),
  ).action(async (o: { project?: string } & OutputOptions) => {
    const res = await withSession((s) => s.call('lease', 'GET', '/v1/webhooks', { query: { project_id: o.project } }));
    printRecords(WEBHOOK_FIELDS, res?.webhooks, o);
  });

  addOutputOptions(webhook.command('show').description('show a webhook').argument('<uuid>', 'webhook UUID')).action(
    async (uuid: string, o: OutputOptions) => {
      showWebhook(await withSession((s) => s.call('lease', 'GET', `/v1/webhooks/${encodeURIComponent(uuid)}`)), o);
    },
  );

  addOutputOptions(
    withWebhookOptions(
      webhook
        .command('create')
        .description('register a webhook for your project')
        .argument('<url>', 'http(s) URL that receives the events')
        .requiredOption('--secret <secret>', 'shared secret the deliveries are signed with (16+ characters)')
        .option('--project <project>', 'the project (admin; default: your project)'),
    ),
    SHOW_FIELDS,
  ).action(async (url: string, o: WebhookOptions & { disable?: boolean; project?: string } & OutputOptions) => {
    const body = { ...webhookBody({ ...o, url, enable: enabledOf(o) }), ...(o.project ? { project_id: o.project } : {}) };
    showWebhook(await withSession((s) => s.call('lease', 'POST', '/v1/webhooks', { body })), o);
  });

  addOutputOptions(
    withWebhookOptions(
      webhook
        .command('set')
        .description('change a webhook')
        .argument('<uuid>', 'webhook UUID')
        .option('--url <url>', 'a new URL')
        .option('--secret <secret>', 'a new secret'),
    ),
    SHOW_FIELDS,
  ).action(async (uuid: string, o: WebhookOptions & { disable?: boolean } & OutputOptions) => {
    const body = webhookBody({ ...o, enable: enabledOf(o) });
    if (Object.keys(body).length === 0)
      throw new CliError('Nothing to set: give --url, --secret, --name, --event-type, --enable or --disable.');
    showWebhook(await withSession((s) => s.call('lease', 'PATCH', `/v1/webhooks/${encodeURIComponent(uuid)}`, { body })), o);
  });

  webhook
    .command('delete')
    .description('delete webhooks (pending deliveries are dropped)')
    .argument('<uuid...>', 'webhook UUIDs')
    .action(async (uuids: string[]) => {
      await withSession(async (s) => {
        for (const uuid of uuids) {
          await s.call('lease', 'DELETE', `/v1/webhooks/${encodeURIComponent(uuid)}`);
          process.stdout.write(`Deleted webhook ${uuid}\n`);
        }
      });
    });

  addOutputOptions(
    webhook.command('deliveries').description("a webhook's deliveries: status, attempts, last error").argument('<uuid>', 'webhook UUID'),
  ).action(async (uuid: string, o: OutputOptions) => {
    const res = await withSession((s) => s.call('lease', 'GET', `/v1/webhooks/${encodeURIComponent(uuid)}/deliveries`));
    printRecords(DELIVERY_FIELDS, res?.deliveries, o);
  });
}
