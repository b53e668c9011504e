/**
 * The shape of esi's configuration: the typed, frozen {@link Config} that src/server/config.ts
 * builds once at start-up, the command-line {@link ConfigOptions} it reads, and the
 * {@link ConfigError} it throws. Types only (and the error class): no reading, no defaults.
 */
import type { VlanRange } from '../domain/networking/segments.ts';

/** A process role: `api` serves HTTP, `conductor` runs reconcile loops and the lease manager. */
export type Role = 'api' | 'conductor';

/** The complete, validated configuration. Durations are in seconds unless named otherwise. */
export interface Config {
  readonly host: string;
  readonly port: number;
  /** Base URL clients use to reach this server; used in the catalogue and links. No trailing slash. */
  readonly publicUrl: string;
  /** Absolute path of the data directory. */
  readonly dataDir: string;
  /** `postgres://…` URL, or null for the embedded SQLite database in the data directory. */
  readonly databaseUrl: string | null;
  /** Admin password for the first-start bootstrap, or null to generate one. */
  readonly adminPassword: string | null;
  /** Base64 of the 32-byte key sealing secrets at rest (`ESI_SECRET_KEY`), or null to use `<data-dir>/secret.key`. */
  readonly secretKey: string | null;
  readonly roles: readonly Role[];
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** `pretty`: one human line per entry (pino-pretty); `json`: pino's JSON lines; `auto`: pretty when stdout is a terminal. */
  readonly logFormat: 'pretty' | 'json' | 'auto';
  readonly policyFile: string | null;
  /** YAML file of inspection rules (docs/inspection.md), or null for none. */
  readonly inspectionRulesFile: string | null;
  /** Largest accepted request body, bytes. */
  readonly maxBodyBytes: number;
  /** Whether `GET /metrics` is served and requests are counted (docs/operations.md). */
  readonly metrics: boolean;
  readonly images: {
    /** Largest accepted image upload, bytes (Glance's `image_size_cap`: 1 TiB); larger is 413. */
    readonly maxImageBytes: number;
  };
  readonly identity: {
    /** Token lifetime, seconds (Keystone's default is 3600). */
    readonly tokenTtlS: number;
    readonly region: string;
  };
  readonly conductor: {
    /**
     * The name given with `--conductor-name` (`ESI_CONDUCTOR_HOSTNAME`, `conductor_hostname`), or
     * null for the default `<host>-<id>`, `<id>` persisted in `<data-dir>/conductor-id`.
     */
    readonly name: string | null;
    /**
     * This process's conductor name, unique among the live conductors (its registration, the
     * `reservation` it writes, the host of its history entries): {@link name} when given; else
     * the machine's host name until `startServer` (src/server/conductor-name.ts) appends the
     * persisted id, as it sets a port 0 to the one it picked.
     */
    readonly hostname: string;
    /** Interval of the periodic power-state sync, seconds (Ironic: 60). */
    readonly powerSyncIntervalS: number;
    /** How long a power change may take before it fails, seconds. */
    readonly powerTimeoutS: number;
    /** Conductor heartbeat interval, seconds (Ironic: 10). */
    readonly heartbeatIntervalS: number;
    /**
     * Silence after which this conductor counts as dead, seconds (`ESI_CONDUCTOR_DEAD_AFTER`,
     * default three heartbeat intervals, at least two; Ironic `heartbeat_timeout`: 60). Stored
     * with its registration, so every process judges it by the same value and the database's clock.
     */
    readonly deadAfterS: number;
    /** Run automated cleaning on `provide` and after undeploy (Ironic `[conductor] automated_clean`). */
    readonly automatedClean: boolean;
    /**
     * Node tasks (power, provision) one conductor runs at once; 0 = run no tasks and no
     * periodic work (the conductor only heartbeats: recorded intent stays pending).
     */
    readonly workers: number;
    /** Period of the take-over and wait-timeout checks, seconds (Ironic `check_provision_state_interval`: 60). */
    readonly checkProvisionStateIntervalS: number;
    /** Power-sync failures tolerated before maintenance (Ironic `power_state_sync_max_retries`: 3). */
    readonly powerSyncMaxRetries: number;
    /** Wait-state timeouts, seconds, 0 = never (Ironic defaults 1800 each). */
    readonly deployCallbackTimeoutS: number;
    readonly cleanCallbackTimeoutS: number;
    readonly inspectWaitTimeoutS: number;
    readonly rescueCallbackTimeoutS: number;
    /**
     * On a power-state mismatch found by the power sync, push the recorded state to the BMC
     * instead of recording the BMC's (Ironic `force_power_state_during_sync`, default false).
     */
    readonly forcePowerStateDuringSync: boolean;
    /** Deadline of one BMC power-state read by the power sync, seconds (10). */
    readonly bmcTimeoutS: number;
    /** BMC reads at once during a power sync (Ironic `sync_power_state_workers`: 8). */
    readonly powerSyncWorkers: number;
    /** History entries kept per node (Ironic `node_history_max_entries`: 300). */
    readonly nodeHistoryMaxEntries: number;
    /**
     * Period of the conductor's pending-work poll, ms (`ESI_CONDUCTOR_POLL_MS`, 1000): the
     * safety net behind the API's in-process wake-up and, on PostgreSQL, the change notifications.
     */
    readonly pollMs: number;
  };
  readonly leasing: {
    /** Lease length when a claim or lease omits `end_time`, seconds (esi-leap: 7 days). */
    readonly defaultLeaseS: number;
    /** Longest lease a non-admin may create, seconds (esi-leap: 21 days). */
    readonly maxLeaseS: number;
    /** Safety-net sweep of the event-driven lease manager, seconds. */
    readonly sweepIntervalS: number;
    /** Warning time of the "ending soon" lease notice, seconds (esi-leap email cron: 1 day). */
    readonly warningS: number;
    /** First retry delay of a failed webhook delivery, ms (doubles per attempt, ≤ 1 h). */
    readonly webhookRetryBaseMs: number;
    /** Attempts of a webhook delivery before it is marked failed. */
    readonly webhookMaxAttempts: number;
    /** Time allowed for one webhook POST, seconds. */
    readonly webhookTimeoutS: number;
    /** Interval of the webhook worker's delivery passes, ms. */
    readonly webhookPollMs: number;
    /**
     * Let every project's webhooks reach loopback, private, link-local and this server's own
     * addresses (default false: only webhook admins may name such hosts, by IP address).
     */
    readonly webhookAllowPrivate: boolean;
  };
  readonly network: {
    /** Physical networks accepting VLAN networks (ML2 `network_vlan_ranges` names). */
    readonly vlanPhysnets: readonly string[];
    /** The VLAN pool of project networks. */
    readonly vlanRanges: readonly VlanRange[];
    /** Physical networks accepting flat networks, `*` for any. */
    readonly flatNetworks: readonly string[] | '*';
    /** MTU of new networks, bytes. */
    readonly mtu: number;
    /** Attempts at one switch change before the VIF fails. */
    readonly switchMaxAttempts: number;
    /** First retry delay of a failed switch change, ms (doubles per attempt). */
    readonly switchRetryBaseMs: number;
    /** Longest one switch session may take, seconds. */
    readonly switchTimeoutS: number;
    /** Period of a conductor's look for switch work, ms. */
    readonly switchPollMs: number;
    /** Routers one project may hold (Neutron `quota_router`), -1 for no limit. */
    readonly routerQuota: number;
    /** Floating IPs one project may hold (Neutron `quota_floatingip`), -1 for no limit. */
    readonly floatingIpQuota: number;
    /**
     * The network (UUID or name) nodes' NICs are on while the deploy agent runs (Ironic
     * `[neutron] provisioning_network`), or null: switch ports stay as the VIFs say.
     */
    readonly provisioningNetwork: string | null;
    /**
     * The interface on the provisioning network on which this conductor runs the network's DHCP
     * and TFTP server (dnsmasq), or null: it runs none.
     */
    readonly provisioningInterface: string | null;
    /** The network namespace of that interface, or null for the host's. */
    readonly provisioningNetns: string | null;
    /** The user dnsmasq drops to (dnsmasq's default `nobody`). */
    readonly dhcpUser: string;
    /**
     * The tenant dataplane (docs/tenant-networking.md): the Linux bridge this process, as the
     * network node, plugs DHCP servers and routers into (`ESI_DATAPLANE_BRIDGE`), or null: it
     * runs no tenant DHCP or routers. With it: the bridge's namespace (null: the host's), how it
     * separates VLANs (`auto`, `vlan_filtering`, `bridge_per_vlan`), the VLAN of flat networks
     * on it, and the period of the reconciler's full pass (ms).
     */
    readonly dataplane: {
      readonly bridge: string;
      readonly netns: string | null;
      readonly mode: string;
      readonly flatVlan: number;
      readonly pollMs: number;
    } | null;
    /**
     * Directories a `file://` `deploy_kernel`, `deploy_ramdisk` may name (Ironic `[conductor]
     * file_url_allowed_paths`): esi reads and serves those files, so an owner who may edit
     * `driver_info` must not name any other file of the host.
     */
    readonly fileUrlAllowedPaths: readonly string[];
  };
  readonly hardware: {
    /** Hardware types the conductor loads (Ironic `enabled_hardware_types`). */
    readonly enabledTypes: readonly string[];
    /** The ipmi driver: kill an ipmitool run after this, seconds; further runs after no answer. */
    readonly ipmi: { readonly commandTimeoutS: number; readonly commandRetries: number };
  };
  readonly lab: {
    /** Number of virtual nodes to start in-process with the server (0 = no lab). */
    readonly nodes: number;
    readonly host: string;
    readonly port: number;
    /** Server models of the lab's first nodes, `name:count,…` (src/lab/hardware.ts), or null for default nodes. */
    readonly models: string | null;
    /** QEMU-backed lab nodes (src/lab/qemu/, docs/lab.md): how many (0 = none) and their settings. */
    readonly qemu: {
      readonly nodes: number;
      /** Memory per VM, MiB. */
      readonly memoryMiB: number;
      readonly vcpus: number;
      /** Disk per VM, GiB. */
      readonly diskGiB: number;
      readonly firmware: 'uefi' | 'bios';
      readonly accel: 'auto' | 'kvm' | 'tcg';
      readonly provisioningVlan: number;
      /** The host's address in the provisioning VLAN, with prefix length. */
      readonly provisioningAddress: string;
      /** Name prefix of the network objects (namespace `<prefix>-sw`, …), or null for `q<lab port>`. */
      readonly prefix: string | null;
    };
  };
}

/** Options as given on the command line (all optional; strings as typed by the user). */
export interface ConfigOptions {
  config?: string;
  host?: string;
  port?: string | number;
  dataDir?: string;
  databaseUrl?: string;
  publicUrl?: string;
  roles?: string;
  conductorName?: string;
  lab?: string | number;
  labPort?: string | number;
  labModels?: string;
  labQemu?: string | number;
  policyFile?: string;
  logLevel?: string;
  logFormat?: string;
}

/** Thrown for a configuration that cannot work; the message names the setting. */
export class ConfigError extends Error {}
