/**
 * Examples shown by `esi --help` and by every command's `--help`, as `kubectl` and `gh` show
 * theirs: a few command lines a user can adapt, below the options. One table keyed by command
 * path (`lease policy create`), so that a test can check that every command has examples and
 * that each example names its own command.
 */
import type { Command } from 'commander';

/** Example command lines by command path; each line starts with `esi <path>`. */
export const EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  '': [
    'esi server --lab 4                      # the API, a conductor and 4 virtual nodes on :8585',
    'esi wait-ready && source data/admin-openrc',
    'esi offer list --resource-class baremetal',
    'esi lease request --count 2 --resource-class baremetal --duration 3d',
  ],
  server: ['esi server', 'esi server --lab 4 --log-format pretty', 'esi server --roles api --database-url postgres://esi@db/esi'],
  'server create': ['esi server create web --flavor baremetal --image debian-12 --network net1 --key-name mykey --wait'],
  'server list': ['esi server list', 'esi server list -f value -c ID'],
  'server show': ['esi server show web'],
  'server delete': ['esi server delete web web-2'],
  lab: ['esi lab --nodes 8', 'esi lab --nodes 4 --models gpu:2,storage:1 --data-dir data/lab'],
  'lab status': ['esi lab status', 'esi lab status -f json'],
  'lab enroll': ['esi lab enroll --owner o1 --resource-class baremetal', 'esi lab enroll --system 3 --name rack1-3 --owner o1'],
  'admin reset-password': ['ESI_ADMIN_PASSWORD=new-secret esi admin reset-password'],
  'db status': ['esi db status', 'esi db status --database-url postgres://esi@db/esi'],
  'db upgrade': ['esi db upgrade', 'esi db upgrade --data-dir /var/lib/esi'],
  'db backup': ['esi db backup /var/backups/esi-$(date +%F).sqlite'],
  'db restore': ['esi db restore --force /var/backups/esi-2026-11-27.sqlite'],
  agent: ['esi agent --api-url http://127.0.0.1:8585/baremetal --mac 52:54:00:12:34:56 --disk /dev/sda'],
  'ramdisk build': ['esi ramdisk build', 'esi ramdisk build --force --json'],
  'ramdisk iso': ['esi ramdisk iso --output agent.iso'],
  'offer create': [
    'esi offer create node-1 --start-time 2026-12-01T00:00 --end-time 2026-12-31T00:00',
    'esi offer create node-2 --lessee l1 --name for-l1',
  ],
  'offer list': ['esi offer list', 'esi offer list --resource-class gpu --availability-range 2026-12-01 2026-12-03 --long'],
  'offer show': ['esi offer show 4a1e…'],
  'offer delete': ['esi offer delete 4a1e…'],
  'offer claim': [
    'esi offer claim 4a1e… --start-time 2026-12-01T00:00 --end-time 2026-12-02T00:00',
    'esi offer claim 4a1e… -f value -c uuid',
  ],
  'lease create': ['esi lease create node-1 l1 --start-time 2026-12-01T00:00 --end-time 2026-12-08T00:00 --purpose ci'],
  'lease update': ['esi lease update 7c9d… --end-time 2026-12-10T00:00'],
  'lease list': ['esi lease list', 'esi lease list --all --status any --long'],
  'lease show': ['esi lease show 7c9d…'],
  'lease request': [
    'esi lease request --count 3 --resource-class gpu --duration 2d',
    'esi lease request --group "2 class=gpu : gpus >= 1" --group "1 class=storage" -f value -c uuid',
  ],
  'lease delete': ['esi lease delete 7c9d…'],
  'lease policy list': ['esi lease policy list', 'esi lease policy list --node node-1'],
  'lease policy show': ['esi lease policy show 2b6f…'],
  'lease policy create': [
    'esi lease policy create --max-lease-seconds 604800 --allowed-project l1 --allowed-project l2',
    'esi lease policy create --node node-1 --min-gap-seconds 3600 --erase-devices',
  ],
  'lease policy set': ['esi lease policy set 2b6f… --max-lease-seconds none --any-project'],
  'lease policy delete': ['esi lease policy delete 2b6f…'],
  'node list': ['esi node list', 'esi node list --long --property "memory_mb>=16384"'],
  'node provision': ['esi node provision node-1 --image debian-12 --ssh-key ~/.ssh/id_ed25519.pub --network net1 --wait'],
  'node unprovision': ['esi node unprovision node-1 --wait'],
  'node capture': ['esi node capture node-1 --name golden --wait'],
  'node console': ['esi node console node-1', 'esi node console node-1 --read-only --duration 30'],
  'node network list': ['esi node network list', 'esi node network list --node node-1 -f json'],
  'node network show': ['esi node network show node-1'],
  'node network attach': ['esi node network attach node-1 --network net1', 'esi node network attach node-1 --trunk t1'],
  'node network detach': ['esi node network detach node-1 --port node-1-net1', 'esi node network detach node-1 --all'],
  'event list': ['esi event list', 'esi event list --event-type esi_leap.lease.fulfill --resource-uuid node-1'],
  'token issue': ['esi token issue', 'esi token issue -f value -c id'],
  'token revoke': ['esi token revoke gAAAA…'],
  'catalog list': ['esi catalog list'],
  'quota list': ['esi quota list'],
  'quota show': ['esi quota show l1'],
  'quota set': ['esi quota set l1 --max-nodes 10 --max-node-hours 2000', 'esi quota set l1 --max-nodes none'],
  'quota delete': ['esi quota delete l1'],
  'trunk list': ['esi trunk list'],
  'trunk create': ['esi trunk create t1 --native-network net1 --tagged-networks net2 --tagged-networks net3'],
  'trunk add network': ['esi trunk add network t1 --tagged-networks net4'],
  'trunk remove network': ['esi trunk remove network t1 --tagged-networks net4'],
  'trunk delete': ['esi trunk delete t1'],
  'port forwarding create': ['esi port forwarding create -p 22 -p 8080:80 node-1 203.0.113.10'],
  'port forwarding delete': ['esi port forwarding delete -p 22 node-1 203.0.113.10'],
  'port forwarding purge': ['esi port forwarding purge 203.0.113.10'],
  'switch port list': ['esi switch port list tor1'],
  'switch port states': ['esi switch port states tor1'],
  'switch port register': ['esi switch port register tor1 swp3 node-1'],
  'switch port unregister': ['esi switch port unregister tor1 swp3'],
  'switch list': ['esi switch list'],
  'switch show': ['esi switch show tor1'],
  'switch create': [
    'esi switch create tor1 --switch-id 02:00:00:00:00:01 --driver linux-bridge --driver-info bridge=br-lab',
    'esi switch create tor2 --switch-id 0c:29:ef:00:00:01 --driver ssh-cli --driver-info host=10.0.0.2 --driver-info password=@pw.txt',
  ],
  'switch set': ['esi switch set tor1 --description "rack 1 top of rack"'],
  'switch delete': ['esi switch delete tor1'],
  'switch resync': ['esi switch resync tor1'],
  'image build debian': ['esi image build debian --upload --name debian-12', 'esi image build debian --output debian.qcow2'],
  'wait-ready': ['esi wait-ready', 'esi wait-ready --url http://127.0.0.1:8585 --timeout 120'],
  'webhook list': ['esi webhook list'],
  'webhook show': ['esi webhook show 5d0e…'],
  'webhook create': [
    'esi webhook create https://hooks.example.org/esi --secret "$(openssl rand -hex 32)" --event-type esi_leap.lease.fulfill',
  ],
  'webhook set': ['esi webhook set 5d0e… --disable'],
  'webhook delete': ['esi webhook delete 5d0e…'],
  'webhook deliveries': ['esi webhook deliveries 5d0e…'],
  'console auth token create': [
    'esi console auth token create node-1',
    'esi console auth token create node-1 --ttl 300 -f value -c access_url',
  ],
  'console auth token delete': ['esi console auth token delete node-1'],
};

/** The path of a command below the program, e.g. `lease policy create` (`''` for the program). */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * Add an `Examples:` section to the help of the program and of every command that has examples
 * in {@link EXAMPLES}.
 * @param program the `esi` program, after every command is registered
 */
export function addExamples(program: Command): void {
  const visit = (cmd: Command): void => {
    const lines = EXAMPLES[commandPath(cmd)];
    if (lines && lines.length > 0) cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`);
    for (const sub of cmd.commands) visit(sub);
  };
  visit(program);
}
