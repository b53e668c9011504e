/**
 * `esi switch port list <switch>` (python-esiclient's `esiclient/v1/switch.py`,
 * https://github.com/CCI-MOC/python-esiclient: the ports of a switch cabled to nodes you see, and
 * the networks they carry) and the switch administration of esi (admins): `esi switch
 * list|show|create|set|delete|resync|port states|port register|port unregister` (switch port
 * registrations: src/domain/networking/cabling.ts).
 *
 * `create` and `set` take driver settings as `--driver-info key=value` (repeatable; numbers and
 * booleans are converted); secret settings (`password`, `private_key`, `enable_secret`) are
 * sealed by the server and shown as `******`.
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import { collect } from '../filters.ts';
import { addOutputOptions, printList, printShow, type OutputOptions } from '../output.ts';
import { CliError, withSession } from '../session.ts';
import { networkLabel } from './network.ts';

/** Parse `key=value` settings; `@file` values are read from the file (private keys). */
export function parseDriverInfo(pairs: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0) throw new CliError(`--driver-info expects key=value (got "${p}").`);
    const key = p.slice(0, i);
    const raw = p.slice(i + 1);
    out[key] = raw.startsWith('@')
      ? fs.readFileSync(raw.slice(1), 'utf8')
      : /^\d+$/.test(raw)
        ? Number(raw)
        : raw === 'true'
          ? true
          : raw === 'false'
            ? false
            : raw;
  }
  return out;
}

const SWITCH_FIELDS = ['id', 'name', 'switch_id', 'driver', 'driver_info', 'flat_vlan', 'description', 'created_at', 'updated_at'];

/** Register the `switch` group. */
export function registerSwitchCommands(program: Command): void {
  const sw = program.command('switch').description('switches: the ports of a switch, and (admins) switch settings');
  registerSwitchPortCommands(sw.command('port').description('ports of a switch'));

  addOutputOptions(sw.command('list').description('(admin) list switches')).action(async (o: OutputOptions) => {
    const res = await withSession((s) => s.call('network', 'GET', '/v2.0/switches'));
    printList(
      ['Name', 'Switch ID', 'Driver', 'UUID'],
      ((res?.switches ?? []) as Array<Record<string, unknown>>).map((x) => [x.name, x.switch_id, x.driver, x.id]),
      o,
    );
  });
  addOutputOptions(sw.command('show').description('(admin) show a switch').argument('<switch>', 'switch name or UUID')).action(
    async (name: string, o: OutputOptions) => {
      const res = await withSession((s) => s.call('network', 'GET', `/v2.0/switches/${encodeURIComponent(name)}`));
      printShow(
        SWITCH_FIELDS.map((f) => [f, res.switch[f]] as [string, unknown]),
        o,
      );
    },
  );
  addOutputOptions(
    sw
      .command('create')
      .description('(admin) register a switch')
      .argument('<name>', 'the name bare-metal ports use as local_link_connection.switch_info')
      .requiredOption('--switch-id <id>', 'chassis id (local_link_connection.switch_id)')
      .requiredOption('--driver <driver>', 'linux-bridge, ssh-cli or fake')
      .option('--driver-info <key=value>', 'a driver setting (repeatable; @file reads a file)', collect, [] as string[])
      .option('--flat-vlan <vlan>', 'VLAN of flat networks on this switch')
      .option('--description <text>', 'description'),
  ).action(
    async (
      name: string,
      o: { switchId: string; driver: string; driverInfo: string[]; flatVlan?: string; description?: string } & OutputOptions,
    ) => {
      const body = {
        switch: {
          name,
          switch_id: o.switchId,
          driver: o.driver,
          driver_info: parseDriverInfo(o.driverInfo),
          ...(o.flatVlan !== undefined ? { flat_vlan: Number(o.flatVlan) } : {}),
          ...(o.description !== undefined ? { description: o.description } : {}),
        },
      };
      const res = await withSession((s) => s.call('network', 'POST', '/v2.0/switches', { body }));
      printShow(
        SWITCH_FIELDS.map((f) => [f, res.switch[f]] as [string, unknown]),
        o,
      );
    },
  );
  addOutputOptions(
    sw
      .command('set')
      .description('(admin) change a switch (secrets not given keep their value); resyncs it')
      .argument('<switch>', 'switch name or UUID')
      .option('--driver-info <key=value>', 'a driver setting (repeatable; replaces driver_info)', collect, [] as string[])
      .option('--flat-vlan <vlan>', 'VLAN of flat networks')
      .option('--description <text>', 'description'),
  ).action(async (name: string, o: { driverInfo: string[]; flatVlan?: string; description?: string } & OutputOptions) => {
    const body = {
      switch: {
        ...(o.driverInfo.length > 0 ? { driver_info: parseDriverInfo(o.driverInfo) } : {}),
        ...(o.flatVlan !== undefined ? { flat_vlan: Number(o.flatVlan) } : {}),
        ...(o.description !== undefined ? { description: o.description } : {}),
      },
    };
    const res = await withSession((s) => s.call('network', 'PUT', `/v2.0/switches/${encodeURIComponent(name)}`, { body }));
    printShow(
      SWITCH_FIELDS.map((f) => [f, res.switch[f]] as [string, unknown]),
      o,
    );
  });
  sw.command('delete')
    .description('(admin) remove a switch (refused while it carries VIFs)')
    .argument('<switch>', 'switch name or UUID')
    .action(async (name: string) => {
      await withSession((s) => s.call('network', 'DELETE', `/v2.0/switches/${encodeURIComponent(name)}`));
      process.stdout.write(`Deleted switch ${name}\n`);
    });
  sw.command('resync')
    .description('(admin) re-apply every port of a switch from the database (a switch that lost its configuration)')
    .argument('<switch>', 'switch name or UUID')
    .action(async (name: string) => {
      const res = await withSession((s) => s.call('network', 'POST', `/v2.0/switches/${encodeURIComponent(name)}/resync`));
      process.stdout.write(`Resyncing ${res?.resynced ?? 0} port(s) of switch ${name}\n`);
    });
}

/** Register `switch port …`: the ports of a switch, and (admins) their registration to nodes. */
function registerSwitchPortCommands(port: Command): void {
  addOutputOptions(
    port
      .command('list')
      .description('ports of a switch cabled to nodes you see, with the networks they carry')
      .argument('<switch>', 'switch name (switch_info) or switch_id'),
  ).action(async (name: string, o: OutputOptions) => {
    const res = await withSession((s) => s.call('network', 'GET', '/v2.0/esi/switch-ports', { query: { switch: name } }));
    const rows = (res?.switch_ports ?? []) as Array<{
      port: string;
      node: string;
      networks: Array<{ id: string; name: string | null; vlan: number | null }>;
    }>;
    printList(
      ['Port', 'Node', 'VLANs'],
      rows.map((r) => [r.port, r.node, r.networks.map(networkLabel).join('\n')]),
      o,
    );
  });

  addOutputOptions(
    port
      .command('states')
      .description('(admin) every port of a switch: desired and applied configuration')
      .argument('<switch>', 'switch name or UUID'),
  ).action(async (name: string, o: OutputOptions) => {
    const res = await withSession((s) => s.call('network', 'GET', `/v2.0/switches/${encodeURIComponent(name)}/ports`));
    const rows = (res?.switch_ports ?? []) as Array<Record<string, unknown>>;
    printList(
      ['Port', 'Registered Node', 'Node', 'VIF', 'Desired', 'Status', 'Last Error'],
      rows.map((r) => [r.port_id, r.registered_node_uuid, r.node_uuid, r.vif, r.desired, r.status, r.last_error]),
      o,
    );
  });

  addOutputOptions(
    port
      .command('register')
      .description("(admin) say which node a switch port's cable reaches: its owner may then cable that node's ports to it")
      .argument('<switch>', 'switch name or UUID')
      .argument('<port>', "the switch's name for the port (local_link_connection.port_id)")
      .argument('<node>', 'node name or UUID'),
  ).action(async (name: string, portId: string, node: string, o: OutputOptions) => {
    const res = await withSession((s) =>
      s.call('network', 'POST', `/v2.0/switches/${encodeURIComponent(name)}/ports`, { body: { switch_port: { port_id: portId, node } } }),
    );
    const r = res.switch_port as Record<string, unknown>;
    printShow(
      [
        ['port_id', r.port_id],
        ['registered_node_uuid', r.registered_node_uuid],
        ['baremetal_port_uuid', r.baremetal_port_uuid],
        ['desired', r.desired],
      ],
      o,
    );
  });
  port
    .command('unregister')
    .description("(admin) remove a switch port's registration (refused while it carries a VIF); it is quarantined")
    .argument('<switch>', 'switch name or UUID')
    .argument('<port>', "the switch's name for the port")
    .action(async (name: string, portId: string) => {
      await withSession((s) =>
        s.call('network', 'DELETE', `/v2.0/switches/${encodeURIComponent(name)}/ports/${encodeURIComponent(portId)}`),
      );
      process.stdout.write(`Unregistered port ${portId} of switch ${name}\n`);
    });
}
