/**
 * `esi node network list|show|attach|detach` and `esi trunk list|create|add network|remove
 * network|delete`: python-esiclient's commands (`esiclient/v1/node_network.py` and `trunk.py` in
 * https://github.com/CCI-MOC/python-esiclient), each one
 * request to esi's `/network/v2.0/esi/…` endpoints instead of the several OpenStack calls
 * esiclient makes. Port names follow esiclient (`esi-<node>-<network>`,
 * `esi-<trunk>-<network>-trunk-port`, `esi-<trunk>-<network>-sub-port`), so re-runs reuse what
 * an earlier run created.
 *
 * Networks show as `name (vlan)` when the caller may read the VLAN (admins by default), else
 * as the name. A floating IP found by its port forwards shows as `addr (internal:external,…)`,
 * a port range as `first-last`.
 */
import type { Command } from 'commander';
import { collect } from '../filters.ts';
import { addOutputOptions, printList, printShow, type OutputOptions } from '../output.ts';
import { CliError, withSession } from '../session.ts';

/** A network as esiclient shows it. */
export function networkLabel(n: { id: string; name: string | null; vlan: number | null }): string {
  const name = n.name ?? n.id;
  return n.vlan === null || n.vlan === undefined ? name : `${name} (${n.vlan})`;
}

interface Forward {
  internal_port_range: string;
  external_port_range: string;
}

interface Row {
  node: string;
  node_uuid: string;
  baremetal_port_uuid: string;
  mac_address: string;
  network_port: {
    id: string | null;
    name: string | null;
    status: string | null;
    fixed_ips: Array<{ ip_address: string }>;
    error: string | null;
  } | null;
  trunk: { id: string; name: string | null } | null;
  networks: Array<{ id: string; name: string | null; vlan: number | null; role: string }>;
  floating_ip: { id: string; floating_ip_address: string; port_forwardings: Forward[] } | null;
  floating_network: { id: string; name: string | null; vlan: number | null } | null;
}

const LIST_LABELS = ['Node', 'MAC Address', 'Port', 'Network', 'Fixed IP', 'Floating Network', 'Floating IP'];
const LONG_LABELS = [
  ...LIST_LABELS,
  'Status',
  'Node UUID',
  'Bare Metal Port UUID',
  'Network Port UUID',
  'Trunk UUID',
  'Network UUID',
  'Floating Network UUID',
  'Floating IP UUID',
];

/** A port range (`"first:last"`, Neutron's `*_port_range`) as a cell shows it: `n` or `first-last`. */
function rangeCell(range: string): string {
  const [first, last] = range.split(':');
  return last === undefined || last === first ? (first ?? '') : `${first}-${last}`;
}

/**
 * The Floating IP cell, as esiclient prints it: the address, and for a floating IP found by its
 * port forwards `addr (internal:external,…)`.
 */
export function floatingIpText(f: Row['floating_ip']): string {
  if (!f) return '';
  const forwards = f.port_forwardings.map((pf) => `${rangeCell(pf.internal_port_range)}:${rangeCell(pf.external_port_range)}`);
  return forwards.length === 0 ? f.floating_ip_address : `${f.floating_ip_address} (${forwards.join(',')})`;
}

function cells(r: Row, long: boolean): unknown[] {
  const port = r.network_port ? (r.network_port.name ?? r.network_port.id) : '';
  const base = [
    r.node,
    r.mac_address,
    port,
    r.networks.map(networkLabel).join('\n'),
    (r.network_port?.fixed_ips ?? []).map((i) => i.ip_address).join('\n'),
    r.floating_network ? networkLabel(r.floating_network) : '',
    floatingIpText(r.floating_ip),
  ];
  if (!long) return base;
  const status = r.network_port ? (r.network_port.error ? `FAILED: ${r.network_port.error}` : (r.network_port.status ?? '')) : '';
  return [
    ...base,
    status,
    r.node_uuid,
    r.baremetal_port_uuid,
    r.network_port?.id ?? '',
    r.trunk?.id ?? '',
    r.networks.map((n) => n.id).join('\n'),
    r.floating_network?.id ?? '',
    r.floating_ip?.id ?? '',
  ];
}

/**
 * One entry of `esi node network show`'s Node Ports, with esiclient's keys (`network_port`,
 * `trunk_uuid`, `network`, `floating_network`, `trunk_networks` only when there is one).
 */
function nodePort(r: Row): Record<string, unknown> {
  const vlanNet = (n: { id: string; name: string | null; vlan: number | null }) => ({ name: n.name, uuid: n.id, vlan_id: n.vlan });
  const native = r.networks.find((n) => n.role === 'native');
  const tagged = r.networks.filter((n) => n.role === 'tagged');
  return {
    mac_address: r.mac_address,
    baremetal_port_uuid: r.baremetal_port_uuid,
    ...(r.network_port
      ? {
          network_port: {
            name: r.network_port.name,
            uuid: r.network_port.id,
            fixed_ips: r.network_port.fixed_ips.map((i) => i.ip_address),
          },
        }
      : {}),
    ...(r.trunk ? { trunk_uuid: r.trunk.id } : {}),
    ...(native ? { network: vlanNet(native) } : {}),
    ...(r.floating_network ? { floating_network: vlanNet(r.floating_network) } : {}),
    ...(tagged.length > 0 ? { trunk_networks: tagged.map(vlanNet) } : {}),
  };
}

interface TrunkRow {
  id: string;
  name: string;
  status: string;
  port: { id: string; name: string };
  sub_ports: Array<{ id: string; name: string; segmentation_id: number }>;
  networks: Array<{ id: string; name: string; vlan: number | null; role: string }>;
}

function trunkRecord(t: TrunkRow): Array<[string, unknown]> {
  return [
    ['Trunk', t.name],
    ['Port', t.port.name],
    ['Sub Ports', t.sub_ports.map((s) => s.name).join('\n')],
    ['Networks', t.networks.map(networkLabel).join('\n')],
    ['Status', t.status],
  ];
}

/** Register `node network …` (on the existing `node` group) and `trunk …`. */
export function registerNetworkCommands(program: Command): void {
  const node = program.commands.find((c) => c.name() === 'node') ?? program.command('node');
  const network = node.command('network').description("nodes' network attachments (python-esiclient `esi node network`)");

  addOutputOptions(
    network
      .command('list')
      .description(
        'list every bare-metal port of the nodes you see, with its network port, networks, addresses and floating IP (one request)',
      )
      .option('--node <node>', 'only this node (name or UUID)')
      .option('--network <network>', 'only ports carrying this network (name or UUID)')
      .option('--long', 'also show status and UUIDs'),
  ).action(async (o: { node?: string; network?: string; long?: boolean } & OutputOptions) => {
    const res = await withSession((s) =>
      s.call('network', 'GET', '/v2.0/esi/node-networks', { query: { node: o.node, network: o.network } }),
    );
    const rows = (res?.node_networks ?? []) as Row[];
    printList(
      o.long ? LONG_LABELS : LIST_LABELS,
      rows.map((r) => cells(r, o.long === true)),
      o,
    );
  });

  addOutputOptions(
    network
      .command('show')
      .description("show one node's bare-metal ports with their network ports, networks and floating networks (one request)")
      .argument('<node>', 'node name or UUID'),
  ).action(async (nodeIdent: string, o: OutputOptions) => {
    const res = await withSession((s) => s.call('network', 'GET', '/v2.0/esi/node-networks', { query: { node: nodeIdent } }));
    const ports = ((res?.node_networks ?? []) as Row[]).map(nodePort);
    printShow(
      [
        ['Node', res.node.name ?? res.node.uuid],
        ['Node UUID', res.node.uuid],
        // esiclient indents the list in a table and gives it as data to the other formats.
        ['Node Ports', o.format === 'table' ? JSON.stringify(ports, null, 2) : ports],
      ],
      o,
    );
  });

  addOutputOptions(
    network
      .command('attach')
      .description('attach a network (via the port esi-<node>-<network>), a port or a trunk to a node')
      .argument('<node>', 'node name or UUID')
      .option('--network <network>', 'network name or UUID')
      .option('--port <port>', 'port name or UUID')
      .option('--trunk <trunk>', 'trunk name or UUID')
      .option('--mac-address <mac>', 'use the node port with this MAC address'),
  ).action(async (nodeIdent: string, o: { network?: string; port?: string; trunk?: string; macAddress?: string } & OutputOptions) => {
    if ([o.network, o.port, o.trunk].filter((x) => x !== undefined).length !== 1)
      throw new CliError('specify exactly one of --network, --port or --trunk.');
    const body = { node: nodeIdent, network: o.network, port: o.port, trunk: o.trunk, mac_address: o.macAddress };
    const res = await withSession((s) => s.call('network', 'POST', '/v2.0/esi/node-networks', { body }));
    const r = res.node_network as Row;
    printShow(
      LIST_LABELS.map((l, i) => [l, cells(r, false)[i]] as [string, unknown]),
      o,
    );
  });

  network
    .command('detach')
    .description('detach ports from a node (the port stays, for the next attach)')
    .argument('<node>', 'node name or UUID')
    .option('--port <port>', 'port name or UUID (repeatable)', collect, [] as string[])
    .option('--all', 'detach every port')
    .action(async (nodeIdent: string, o: { port: string[]; all?: boolean }) => {
      const res = await withSession((s) =>
        s.call('network', 'POST', '/v2.0/esi/node-networks/detach', { body: { node: nodeIdent, ports: o.port, all: o.all === true } }),
      );
      for (const id of res?.detached ?? []) process.stdout.write(`Detached port ${id} from node ${nodeIdent}\n`);
    });

  const trunk = program
    .command('trunk')
    .description('trunk ports: a native network untagged, tagged networks (python-esiclient `esi trunk`)');
  addOutputOptions(trunk.command('list').description('list trunks with their ports and networks')).action(async (o: OutputOptions) => {
    const res = await withSession((s) => s.call('network', 'GET', '/v2.0/esi/trunks'));
    const rows = (res?.trunks ?? []) as TrunkRow[];
    printList(
      ['Trunk', 'Port', 'Sub Ports', 'Networks', 'Status'],
      rows.map((t) => trunkRecord(t).map(([, v]) => v)),
      o,
    );
  });
  addOutputOptions(
    trunk
      .command('create')
      .description('create a trunk (or complete one of that name)')
      .argument('<name>', 'trunk name')
      .requiredOption('--native-network <network>', 'the untagged network')
      .option('--tagged-networks <network>', 'a tagged network (repeatable)', collect, [] as string[]),
  ).action(async (name: string, o: { nativeNetwork: string; taggedNetworks: string[] } & OutputOptions) => {
    const res = await withSession((s) =>
      s.call('network', 'POST', '/v2.0/esi/trunks', { body: { name, native_network: o.nativeNetwork, tagged_networks: o.taggedNetworks } }),
    );
    printShow(trunkRecord(res.trunk as TrunkRow), o);
  });
  for (const [verb, path, what] of [
    ['add', 'add-networks', 'add tagged networks to a trunk'],
    ['remove', 'remove-networks', 'remove tagged networks from a trunk (their sub-ports are deleted)'],
  ] as const) {
    addOutputOptions(
      trunk
        .command(verb)
        .description(what)
        .command('network')
        .description(what)
        .argument('<trunk>', 'trunk name or UUID')
        .option('--tagged-networks <network>', 'a tagged network (repeatable)', collect, [] as string[]),
    ).action(async (name: string, o: { taggedNetworks: string[] } & OutputOptions) => {
      if (o.taggedNetworks.length === 0) throw new CliError('name at least one network with --tagged-networks.');
      const res = await withSession((s) =>
        s.call('network', 'POST', `/v2.0/esi/trunks/${encodeURIComponent(name)}/${path}`, { body: { tagged_networks: o.taggedNetworks } }),
      );
      printShow(trunkRecord(res.trunk as TrunkRow), o);
    });
  }
  trunk
    .command('delete')
    .description('delete a trunk with its parent port and sub-ports')
    .argument('<trunk>', 'trunk name or UUID')
    .action(async (name: string) => {
      await withSession((s) => s.call('network', 'DELETE', `/v2.0/esi/trunks/${encodeURIComponent(name)}`));
      process.stdout.write(`Deleted trunk ${name}\n`);
    });
}
