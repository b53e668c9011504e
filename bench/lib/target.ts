/**
 * A server under test as the node benchmarks see it, whether esi or the real Ironic: HTTP
 * clients for an admin and for a lessee, how to grow its fleet, and which nodes to read.
 * Every request both kinds of target get is sent by the same code through these clients.
 */
import { HttpClient, sendJson } from './http.ts';
import { leasedIndexes, nodeName, touchPatch, type FleetProjects } from './fleet.ts';
import { cloneNodes, createTemplateNode, ironicHeaders, setLessee, startIronic, type IronicPeer } from '../peers/ironic.ts';
import { onCleanup } from './cleanup.ts';

/** One server under test. */
export interface Target {
  /** Short label for tables: `esi/sqlite`, `esi/postgres`, `ironic`. */
  readonly label: string;
  readonly kind: 'esi' | 'ironic';
  /** A description for the report (version, database). */
  readonly describe: string;
  /** Client whose base URL makes `/v1/nodes` the node collection, with admin credentials. */
  readonly admin: HttpClient;
  /** Same, with the lessee's credentials (Ironic: ignored under noauth). */
  readonly lessee: HttpClient;
  /**
   * Query added to the lessee's list request: '' on esi (its policy filters the list to the
   * lessee's nodes); `&project=<lessee>` on Ironic, whose noauth mode passes every policy check.
   */
  readonly lesseeListQuery: string;
  /** Things the report must say about how this target was set up (filled while seeding). */
  readonly notes: readonly string[];
  /** Absolute URL of one node for the load test, and the admin headers to send with it. */
  loadTarget(uuid: string): { url: string; headers: Record<string, string> };
  /** Current fleet size. */
  count(): number;
  /** Grow the fleet to `count` nodes (first call: create and lease; later calls: add). */
  growTo(count: number): Promise<void>;
  /**
   * Change nodes through the API as an admin (`PATCH /v1/nodes/{name}`, see `touchPatch`),
   * one request each; not timed.
   */
  touch(indexes: readonly number[]): Promise<void>;
  /** UUID of node `index` (resolved through the API by name). */
  uuidOf(index: number): Promise<string>;
  close(): Promise<void>;
}

/**
 * Start a private Ironic and return it as a target. Seeding: the template node through the API,
 * its rows copied by `ironic_clone.py`, the leased nodes' `lessee` set by API PATCH.
 * @throws Error when Ironic cannot start or seed
 */
export async function ironicTarget(projects: FleetProjects, log: (line: string) => void): Promise<Target> {
  const peer: IronicPeer = await startIronic(log);
  const release = onCleanup('ironic', () => peer.stop());
  const headers = ironicHeaders();
  const admin = new HttpClient(peer.url, headers);
  const lessee = new HttpClient(peer.url, headers);
  let size = 0;
  let template = '';
  let seq = 0;
  const uuidOf = async (index: number): Promise<string> =>
    (await admin.getJson<{ uuid: string }>(`/v1/nodes/${nodeName(index)}?fields=uuid`)).uuid;
  return {
    label: 'ironic',
    kind: 'ironic',
    describe: `${peer.version} (Debian, noauth, SQLite, 1 API worker)`,
    admin,
    lessee,
    lesseeListQuery: `&project=${encodeURIComponent(projects.lessee)}`,
    notes: [],
    loadTarget: (uuid) => ({ url: `${peer.url}/v1/nodes/${uuid}`, headers }),
    count: () => size,
    async growTo(count) {
      if (count <= size) return;
      const t0 = Date.now();
      if (size === 0) {
        template = await createTemplateNode(peer, projects.owner);
        size = 1;
      }
      await cloneNodes(peer, template, size, count - size);
      const first = size === 1;
      size = count;
      if (first) {
        for (const i of leasedIndexes()) await setLessee(peer, await uuidOf(i), projects.lessee);
      }
      log(`ironic: ${count} nodes (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    },
    uuidOf,
    async touch(indexes) {
      for (const i of indexes) {
        const r = await sendJson('PATCH', `${peer.url}/v1/nodes/${nodeName(i)}`, headers, touchPatch(++seq));
        if (r.status !== 200) throw new Error(`ironic PATCH ${nodeName(i)} answered ${r.status}`);
      }
    },
    async close() {
      await admin.close();
      await lessee.close();
      await release();
    },
  };
}
