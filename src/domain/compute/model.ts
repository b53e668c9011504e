/**
 * The compute model (a Nova v2.1 subset for bare metal): flavors with their access lists, key
 * pairs, and servers — an instance on one node, bound to it by an allocation whose UUID is the
 * server's UUID and the node's `instance_uuid`.
 *
 * Field names follow Nova's (`ram` in MiB, `disk` and `ephemeral` in GiB, `swap` in MiB);
 * timestamps are epoch milliseconds (UTC), rendered as ISO-8601 by the API.
 */

/** A flavor as stored. */
export interface Flavor {
  /** Internal id. */
  readonly id: number;
  /** The API id (Nova `flavorid`): any string the admin chose, or a UUID. */
  readonly flavorid: string;
  readonly name: string;
  readonly ram: number;
  readonly vcpus: number;
  readonly disk: number;
  readonly ephemeral: number;
  readonly swap: number;
  readonly rxtx_factor: number;
  readonly is_public: boolean;
  readonly disabled: boolean;
  readonly description: string | null;
  /** The project that created this private flavor (esi: projects create their own), or null. */
  readonly owner: string | null;
  readonly extra_specs: Readonly<Record<string, string>>;
  readonly created_at: number;
  readonly updated_at: number | null;
}

/** A key pair as stored (Nova: key pairs belong to a user). */
export interface Keypair {
  readonly id: number;
  readonly user_id: string;
  readonly name: string;
  /** `ssh` (esi does not take x509 certificates). */
  readonly type: string;
  readonly public_key: string;
  /** MD5 of the key blob, colon-separated hex (Nova's fingerprint of SSH keys). */
  readonly fingerprint: string;
  readonly created_at: number;
}

/** The flavor a server was created with (Nova ≥ 2.47 embeds it in the server). */
export interface FlavorSnapshot {
  readonly id: string;
  readonly name: string;
  readonly vcpus: number;
  readonly ram: number;
  readonly disk: number;
  readonly ephemeral: number;
  readonly swap: number;
  readonly extra_specs: Readonly<Record<string, string>>;
}

/** A network the server asked for (Nova `networks`: `[{uuid}]`, `[{port}]`). */
export interface RequestedNetwork {
  readonly uuid?: string;
  readonly port?: string;
  readonly fixed_ip?: string;
}

/** A server fault (Nova `fault`): what went wrong, shown with ERROR and DELETED servers. */
export interface ServerFault {
  /** An HTTP-like code (Nova uses 500 for build failures). */
  readonly code: number;
  readonly message: string;
  /** Epoch ms. */
  readonly created: number;
  /** More detail, shown to admins only (Nova). */
  readonly details?: string;
}

/** A server as stored. */
export interface Server {
  readonly id: number;
  /** = the allocation's UUID = the node's `instance_uuid`. */
  readonly uuid: string;
  readonly name: string;
  readonly project_id: string;
  readonly user_id: string;
  readonly flavor: FlavorSnapshot;
  readonly image_id: string | null;
  readonly key_name: string | null;
  /** The node it was placed on. */
  readonly node_uuid: string | null;
  /** Groups the servers of one create request (`r-…`). */
  readonly reservation_id: string;
  /** Index of the server in its create request (0-based). */
  readonly launch_index: number;
  readonly metadata: Readonly<Record<string, string>>;
  readonly networks: readonly RequestedNetwork[];
  readonly description: string | null;
  readonly hostname: string;
  /**
   * `deleting` while a delete waits for the node; `rebuilding` from a rebuild request on (read
   * only while the node deploys, `./server-status.ts`); else null.
   */
  readonly task_state: string | null;
  readonly fault: ServerFault | null;
  readonly created_at: number;
  readonly updated_at: number | null;
  /** Set when the server is gone (its allocation was released). */
  readonly deleted_at: number | null;
}

/** Nova statuses esi shows. */
export type ServerStatus = 'BUILD' | 'ACTIVE' | 'SHUTOFF' | 'REBOOT' | 'HARD_REBOOT' | 'REBUILD' | 'RESCUE' | 'ERROR' | 'DELETED';

/** Nova power states (`OS-EXT-STS:power_state`). */
export const POWER = Object.freeze({ NOSTATE: 0, RUNNING: 1, SHUTDOWN: 4 });

/** What a server is now, derived from its node (`./server-status.ts`). */
export interface ServerState {
  readonly status: ServerStatus;
  /** Nova `OS-EXT-STS:vm_state`: building, active, stopped, rescued, error, deleted. */
  readonly vmState: string;
  /**
   * Nova `OS-EXT-STS:task_state`: spawning, deleting, image_snapshot, powering-off,
   * powering-on, rebooting, rebooting_hard, rebuild_spawning, or null.
   */
  readonly taskState: string | null;
  readonly powerState: number;
  /** Build progress, 0–100 (the image bytes written while deploying). */
  readonly progress: number;
  readonly fault: ServerFault | null;
}
