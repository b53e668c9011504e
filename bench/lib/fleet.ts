/**
 * The fleet both servers are seeded with in the node benchmarks: identical node bodies on esi
 * and on the real Ironic, so that both return comparable payloads (the report prints the
 * response sizes to show it).
 *
 * Every node is a fake-hardware node in `available` with power off, with the properties a
 * scheduler reads (cpus, memory_mb, local_gb, cpu_arch), a resource class, BMC credentials in
 * `driver_info` (the password is masked as `******` in every response), an `extra` and one
 * port. Node k is named `bench-<k, 5 digits>`; its port's MAC is derived from k. All other
 * values are the same on every node, because the Ironic side copies one template node's rows.
 */

/** Who the nodes belong to: project ids (on Ironic they are plain strings). */
export interface FleetProjects {
  /** Owner project of every node. */
  readonly owner: string;
  /** Lessee project of the leased nodes. */
  readonly lessee: string;
}

/** How many nodes a lessee holds in every size of the benchmark. */
export const LEASED_NODES = 10;

/** Name of node `index`. */
export function nodeName(index: number): string {
  return `bench-${String(index).padStart(5, '0')}`;
}

/**
 * MAC address of node `index`'s single port (locally administered, 52:54:00 block; the Ironic
 * clone script uses 52:54:1x for its copies, so a template and its copies never collide).
 */
export function portAddress(index: number): string {
  const b = [(index >> 16) & 0xff, (index >> 8) & 0xff, index & 0xff].map((v) => v.toString(16).padStart(2, '0'));
  return `52:54:00:${b.join(':')}`;
}

/**
 * The create body of node `index` (Ironic `POST /v1/nodes` fields; `owner` is set after
 * creation with a PATCH on Ironic, because its noauth context refuses a foreign owner on create).
 */
export function nodeBody(index: number): Record<string, unknown> {
  return {
    name: nodeName(index),
    driver: 'fake-hardware',
    resource_class: 'baremetal.large',
    properties: { cpus: 32, memory_mb: 131072, local_gb: 960, cpu_arch: 'x86_64' },
    driver_info: {
      redfish_address: 'https://10.20.0.1',
      redfish_system_id: '/redfish/v1/Systems/1',
      redfish_username: 'root',
      redfish_password: 'bench-bmc-password',
    },
    extra: { rack: 'r12', row: 'b' },
  };
}

/** Fleets are at least this large; the leased nodes are spread over these first nodes. */
export const MIN_FLEET = 1000;

/** Which node indexes (0-based creation order) are leased: 10 spread over the first {@link MIN_FLEET}. */
export function leasedIndexes(): number[] {
  const step = Math.floor(MIN_FLEET / LEASED_NODES);
  return Array.from({ length: LEASED_NODES }, (_, i) => i * step + Math.floor(step / 2));
}

/**
 * The JSON-PATCH that marks a node changed (a new value of `extra.row`, same on every server),
 * so that a server caching renderings must render it again.
 * @param seq a number never used before on this server (the value is its 6-digit form)
 */
export function touchPatch(seq: number): Array<Record<string, unknown>> {
  return [{ op: 'replace', path: '/extra/row', value: String(seq).padStart(6, '0') }];
}
