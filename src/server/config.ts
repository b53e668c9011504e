/**
 * esi configuration: read once at start-up into a typed, frozen {@link Config} and passed down.
 *
 * Sources, highest precedence first: command-line options, environment variables (`ESI_*`),
 * a YAML config file (`--config` / `ESI_CONFIG`), built-in defaults. This is the only module
 * of the server that reads `process.env`.
 *
 * | setting              | option          | environment            | default                      |
 * |----------------------|-----------------|------------------------|------------------------------|
 * | listen host          | `--host`        | `ESI_HOST`             | `127.0.0.1`                  |
 * | listen port          | `--port`        | `ESI_PORT`             | `8585`                       |
 * | data directory       | `--data-dir`    | `ESI_DATA_DIR`         | `./data`                     |
 * | database URL         | `--database-url`| `ESI_DATABASE_URL`     | SQLite `<data-dir>/esi.sqlite` |
 * | public URL           | `--public-url`  | `ESI_PUBLIC_URL`       | `http://<host>:<port>`       |
 * | admin password       |                 | `ESI_ADMIN_PASSWORD`   | generated on first start     |
 * | secret key (at rest) |                 | `ESI_SECRET_KEY`       | `<data-dir>/secret.key` (0600) |
 * | process roles        | `--roles`       | `ESI_ROLES`            | `api,conductor`              |
 * | lab nodes            | `--lab`         | `ESI_LAB_NODES`        | `0` (no lab)                 |
 * | lab port             | `--lab-port`    | `ESI_LAB_PORT`         | `8586`                       |
 * | lab server models    | `--lab-models`  | `ESI_LAB_MODELS`       | none (e.g. `gpu:2,storage:1,small:5`) |
 * | lab QEMU nodes       | `--lab-qemu`    | `ESI_LAB_QEMU_NODES`   | `0` (docs/lab.md)            |
 * | policy override file | `--policy-file` | `ESI_POLICY_FILE`      | none                         |
 * | inspection rules     |                 | `ESI_INSPECTION_RULES` | none (YAML file, docs/inspection.md) |
 * | log level            | `--log-level`   | `ESI_LOG_LEVEL`        | `info`                       |
 * | log format           | `--log-format`  | `ESI_LOG_FORMAT`       | `auto` (pretty on a terminal, else JSON) |
 * | largest image upload |                 | `ESI_MAX_IMAGE_SIZE`   | 1 TiB (`1099511627776` bytes) |
 * | conductor workers    |                 | `ESI_CONDUCTOR_WORKERS`| `64` (0: no conductor work)  |
 * | Prometheus metrics   |                 | `ESI_METRICS`          | `true` (`GET /metrics`)      |
 *
 * Conductor timing (environment, or the config file key in lower case without `ESI_`):
 * `ESI_POWER_SYNC_INTERVAL` (60 s),
 * `ESI_POWER_SYNC_MAX_RETRIES` (3), `ESI_CHECK_PROVISION_STATE_INTERVAL` (60 s), and the
 * wait-state timeouts `ESI_DEPLOY_CALLBACK_TIMEOUT`, `ESI_CLEAN_CALLBACK_TIMEOUT`,
 * `ESI_INSPECT_WAIT_TIMEOUT`, `ESI_RESCUE_CALLBACK_TIMEOUT` (1800 s each, 0 = never; Ironic's
 * `[conductor]` defaults). Power sync and history (docs/power-sync.md):
 * `ESI_FORCE_POWER_STATE_DURING_SYNC` (false: the BMC wins), `ESI_BMC_TIMEOUT_S` (10 s per power
 * read), `ESI_SYNC_POWER_STATE_WORKERS` (8), `ESI_NODE_HISTORY_MAX_ENTRIES` (300 per node).
 *
 * Networking (docs/networking.md): `ESI_NETWORK_VLAN_RANGES` (ML2 `network_vlan_ranges`,
 * `physnet:min:max` or `physnet`, comma separated; default `physnet1:100:199`: the pool project
 * networks take VLANs from), `ESI_NETWORK_FLAT_NETWORKS` (ML2 `flat_networks`, default `*`),
 * `ESI_NETWORK_MTU` (1500), and for switch changes `ESI_SWITCH_MAX_ATTEMPTS` (4),
 * `ESI_SWITCH_RETRY_BASE_MS` (500, doubling), `ESI_SWITCH_TIMEOUT` (30 s per session),
 * `ESI_SWITCH_POLL_MS` (1000: how often a conductor looks for switch work recorded elsewhere),
 * `ESI_QUOTA_ROUTER` (Neutron's `[quotas] quota_router`: routers per project, default 10, -1
 * for no limit), `ESI_QUOTA_FLOATINGIP` (`quota_floatingip`: floating IPs per project, default
 * 50, -1 for no limit). Tenant dataplane (docs/tenant-networking.md; set on the one process that is the
 * network node): `ESI_DATAPLANE_BRIDGE` (none: no tenant DHCP or routers), `ESI_DATAPLANE_NETNS`,
 * `ESI_DATAPLANE_MODE` (`auto`), `ESI_DATAPLANE_FLAT_VLAN` (1), `ESI_DATAPLANE_POLL_MS` (10000).
 *
 * QEMU lab nodes (docs/lab.md): `ESI_LAB_QEMU_MEMORY_MIB` (2048), `ESI_LAB_QEMU_CPUS` (2),
 * `ESI_LAB_QEMU_DISK_GIB` (8), `ESI_LAB_QEMU_FIRMWARE` (`uefi` or `bios`), `ESI_LAB_QEMU_ACCEL`
 * (`auto`, `kvm`, `tcg`), `ESI_LAB_QEMU_PROVISIONING_VLAN` (3900), `ESI_LAB_QEMU_PROVISIONING_ADDRESS`
 * (`10.42.0.1/24`), `ESI_LAB_QEMU_PREFIX` (names of the network objects, default `q<lab port>`).
 *
 * Hardware (docs/ipmi.md): `ESI_ENABLED_HARDWARE_TYPES` (Ironic's `enabled_hardware_types`,
 * default `fake-hardware,ipmi,redfish`), `ESI_IPMI_COMMAND_TIMEOUT` (default `ESI_BMC_TIMEOUT_S`, 10 s: one
 * ipmitool run is killed after it), `ESI_IPMI_COMMAND_RETRIES` (2: further runs after a BMC did not answer or was busy).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { parseFlatNetworks, parseVlanRanges, type VlanRange } from '../domain/networking/segments.ts';
import { KNOWN_DRIVERS } from '../drivers/hardware/registry.ts';
import { cacheRoot } from '../osimage/cache.ts';

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
    /** Conductor host name, unique per conductor process. */
    readonly hostname: string;
    /** Interval of the periodic power-state sync, seconds (Ironic: 60). */
    readonly powerSyncIntervalS: number;
    /** How long a power change may take before it fails, seconds. */
    readonly powerTimeoutS: number;
    /** Conductor heartbeat interval, seconds (Ironic: 10). */
    readonly heartbeatIntervalS: number;
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

/**
 * Build the configuration from options, environment and config file.
 * @param options command-line options (strings as typed)
 * @param env the environment (normally `process.env`)
 * @returns a deeply frozen {@link Config}
 * @throws ConfigError naming the bad setting
 */
export function loadConfig(options: ConfigOptions = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const filePath = options.config ?? env.ESI_CONFIG;
  const file = filePath ? readConfigFile(filePath) : {};
  const pick = (opt: string | number | undefined, envName: string, fileKey: string): string | undefined => {
    if (opt !== undefined && opt !== '') return String(opt);
    const e = env[envName];
    if (e !== undefined && e !== '') return e;
    const f = file[fileKey];
    return f === undefined || f === null ? undefined : String(f);
  };

  const host = pick(options.host, 'ESI_HOST', 'host') ?? '127.0.0.1';
  const port = toPort(pick(options.port, 'ESI_PORT', 'port') ?? '8585', 'port');
  const dataDir = path.resolve(pick(options.dataDir, 'ESI_DATA_DIR', 'data_dir') ?? './data');
  const databaseUrl = pick(options.databaseUrl, 'ESI_DATABASE_URL', 'database_url') ?? null;
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(`database URL must start with postgres:// or postgresql:// (got ${redactUrl(databaseUrl)})`);
  }
  const displayHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const publicUrl = (pick(options.publicUrl, 'ESI_PUBLIC_URL', 'public_url') ?? `http://${displayHost}:${port}`).replace(/\/+$/, '');
  const roles = parseRoles(pick(options.roles, 'ESI_ROLES', 'roles') ?? 'api,conductor');
  const logLevel = parseLogLevel(pick(options.logLevel, 'ESI_LOG_LEVEL', 'log_level') ?? 'info');
  const labNodes = toInt(pick(options.lab, 'ESI_LAB_NODES', 'lab_nodes') ?? '0', 'lab nodes', 0, 10_000);
  const labPort = toPort(pick(options.labPort, 'ESI_LAB_PORT', 'lab_port') ?? '8586', 'lab port');
  const num = (envName: string, fileKey: string, def: number, min: number, max: number): number =>
    toInt(pick(undefined, envName, fileKey) ?? String(def), fileKey, min, max);

  return deepFreeze({
    host,
    port,
    publicUrl,
    dataDir,
    databaseUrl,
    adminPassword: env.ESI_ADMIN_PASSWORD && env.ESI_ADMIN_PASSWORD !== '' ? env.ESI_ADMIN_PASSWORD : null,
    secretKey: parseSecretKey(pick(undefined, 'ESI_SECRET_KEY', 'secret_key') ?? null),
    roles,
    logLevel,
    logFormat: parseLogFormat(pick(options.logFormat, 'ESI_LOG_FORMAT', 'log_format') ?? 'auto'),
    policyFile: pick(options.policyFile, 'ESI_POLICY_FILE', 'policy_file') ?? null,
    inspectionRulesFile: pick(undefined, 'ESI_INSPECTION_RULES', 'inspection_rules') ?? null,
    maxBodyBytes: num('ESI_MAX_BODY_BYTES', 'max_body_bytes', 1024 * 1024, 1024, 1024 * 1024 * 1024),
    metrics: parseBool(pick(undefined, 'ESI_METRICS', 'metrics') ?? 'true', 'metrics'),
    images: { maxImageBytes: num('ESI_MAX_IMAGE_SIZE', 'max_image_size', 1024 ** 4, 1, Number.MAX_SAFE_INTEGER) },
    identity: {
      tokenTtlS: num('ESI_TOKEN_TTL', 'token_ttl', 3600, 60, 7 * 24 * 3600),
      region: pick(undefined, 'ESI_REGION', 'region') ?? 'RegionOne',
    },
    conductor: {
      hostname: pick(undefined, 'ESI_CONDUCTOR_HOSTNAME', 'conductor_hostname') ?? `${os.hostname()}-${port}`,
      powerSyncIntervalS: num('ESI_POWER_SYNC_INTERVAL', 'power_sync_interval', 60, 1, 86_400),
      powerTimeoutS: num('ESI_POWER_TIMEOUT', 'power_timeout', 30, 1, 3600),
      heartbeatIntervalS: num('ESI_CONDUCTOR_HEARTBEAT_INTERVAL', 'conductor_heartbeat_interval', 10, 1, 3600),
      automatedClean: parseBool(pick(undefined, 'ESI_AUTOMATED_CLEAN', 'automated_clean') ?? 'true', 'automated_clean'),
      workers: num('ESI_CONDUCTOR_WORKERS', 'conductor_workers', 64, 0, 1000),
      checkProvisionStateIntervalS: num('ESI_CHECK_PROVISION_STATE_INTERVAL', 'check_provision_state_interval', 60, 1, 86_400),
      powerSyncMaxRetries: num('ESI_POWER_SYNC_MAX_RETRIES', 'power_sync_max_retries', 3, 0, 100),
      deployCallbackTimeoutS: num('ESI_DEPLOY_CALLBACK_TIMEOUT', 'deploy_callback_timeout', 1800, 0, 7 * 86_400),
      cleanCallbackTimeoutS: num('ESI_CLEAN_CALLBACK_TIMEOUT', 'clean_callback_timeout', 1800, 0, 7 * 86_400),
      inspectWaitTimeoutS: num('ESI_INSPECT_WAIT_TIMEOUT', 'inspect_wait_timeout', 1800, 0, 7 * 86_400),
      rescueCallbackTimeoutS: num('ESI_RESCUE_CALLBACK_TIMEOUT', 'rescue_callback_timeout', 1800, 0, 7 * 86_400),
      forcePowerStateDuringSync: parseBool(
        pick(undefined, 'ESI_FORCE_POWER_STATE_DURING_SYNC', 'force_power_state_during_sync') ?? 'false',
        'force_power_state_during_sync',
      ),
      bmcTimeoutS: num('ESI_BMC_TIMEOUT_S', 'bmc_timeout_s', 10, 1, 600),
      powerSyncWorkers: num('ESI_SYNC_POWER_STATE_WORKERS', 'sync_power_state_workers', 8, 1, 1000),
      nodeHistoryMaxEntries: num('ESI_NODE_HISTORY_MAX_ENTRIES', 'node_history_max_entries', 300, 1, 100_000),
    },
    leasing: {
      defaultLeaseS: num('ESI_DEFAULT_LEASE_TIME', 'default_lease_time', 7 * 86_400, 60, 3650 * 86_400),
      maxLeaseS: num('ESI_MAX_LEASE_TIME', 'max_lease_time', 21 * 86_400, 60, 3650 * 86_400),
      sweepIntervalS: num('ESI_LEASE_SWEEP_INTERVAL', 'lease_sweep_interval', 30, 1, 3600),
      warningS: num('ESI_LEASE_WARNING_TIME', 'lease_warning_time', 86_400, 60, 30 * 86_400),
      webhookRetryBaseMs: num('ESI_WEBHOOK_RETRY_BASE_MS', 'webhook_retry_base_ms', 5000, 10, 3_600_000),
      webhookMaxAttempts: num('ESI_WEBHOOK_MAX_ATTEMPTS', 'webhook_max_attempts', 8, 1, 100),
      webhookTimeoutS: num('ESI_WEBHOOK_TIMEOUT', 'webhook_timeout', 10, 1, 300),
      webhookPollMs: num('ESI_WEBHOOK_POLL_MS', 'webhook_poll_ms', 500, 10, 60_000),
      webhookAllowPrivate: parseBool(
        pick(undefined, 'ESI_WEBHOOK_ALLOW_PRIVATE', 'webhook_allow_private') ?? 'false',
        'webhook_allow_private',
      ),
    },
    // A blank ESI_NETWORK_VLAN_RANGES is meaningful (no pool), so it is read as given.
    network: networkConfig(
      env.ESI_NETWORK_VLAN_RANGES ?? (file.network_vlan_ranges === undefined ? 'physnet1:100:199' : String(file.network_vlan_ranges ?? '')),
      pick(undefined, 'ESI_NETWORK_FLAT_NETWORKS', 'network_flat_networks') ?? '*',
      {
        mtu: num('ESI_NETWORK_MTU', 'network_mtu', 1500, 68, 9216),
        switchMaxAttempts: num('ESI_SWITCH_MAX_ATTEMPTS', 'switch_max_attempts', 4, 1, 100),
        switchRetryBaseMs: num('ESI_SWITCH_RETRY_BASE_MS', 'switch_retry_base_ms', 500, 1, 600_000),
        switchTimeoutS: num('ESI_SWITCH_TIMEOUT', 'switch_timeout', 30, 1, 3600),
        switchPollMs: num('ESI_SWITCH_POLL_MS', 'switch_poll_ms', 1000, 10, 600_000),
        routerQuota: num('ESI_QUOTA_ROUTER', 'quota_router', 10, -1, 1_000_000),
        floatingIpQuota: num('ESI_QUOTA_FLOATINGIP', 'quota_floatingip', 50, -1, 1_000_000),
        provisioningNetwork: pick(undefined, 'ESI_PROVISIONING_NETWORK', 'provisioning_network')?.trim() || null,
        provisioningInterface: pick(undefined, 'ESI_PROVISIONING_INTERFACE', 'provisioning_interface')?.trim() || null,
        provisioningNetns: pick(undefined, 'ESI_PROVISIONING_NETNS', 'provisioning_netns')?.trim() || null,
        dhcpUser: pick(undefined, 'ESI_DHCP_USER', 'dhcp_user')?.trim() || 'nobody',
        dataplane: (() => {
          const bridge = pick(undefined, 'ESI_DATAPLANE_BRIDGE', 'dataplane_bridge')?.trim();
          if (!bridge) return null;
          return {
            bridge,
            netns: pick(undefined, 'ESI_DATAPLANE_NETNS', 'dataplane_netns')?.trim() || null,
            mode: pick(undefined, 'ESI_DATAPLANE_MODE', 'dataplane_mode')?.trim() || 'auto',
            flatVlan: num('ESI_DATAPLANE_FLAT_VLAN', 'dataplane_flat_vlan', 1, 1, 4094),
            pollMs: num('ESI_DATAPLANE_POLL_MS', 'dataplane_poll_ms', 10_000, 100, 3_600_000),
          };
        })(),
        fileUrlAllowedPaths: (
          pick(undefined, 'ESI_FILE_URL_ALLOWED_PATHS', 'file_url_allowed_paths') ??
          [cacheRoot(env), path.join(dataDir, 'boot-files')].join(',')
        )
          .split(',')
          .map((d) => d.trim())
          .filter((d) => d !== '')
          .map((d) => path.resolve(d)),
      },
    ),
    hardware: {
      enabledTypes: parseHardwareTypes(pick(undefined, 'ESI_ENABLED_HARDWARE_TYPES', 'enabled_hardware_types') ?? KNOWN_DRIVERS.join(',')),
      ipmi: {
        // Default: the BMC deadline of the conductor (ESI_BMC_TIMEOUT_S).
        commandTimeoutS: num(
          'ESI_IPMI_COMMAND_TIMEOUT',
          'ipmi_command_timeout',
          num('ESI_BMC_TIMEOUT_S', 'bmc_timeout_s', 10, 1, 600),
          1,
          600,
        ),
        commandRetries: num('ESI_IPMI_COMMAND_RETRIES', 'ipmi_command_retries', 2, 0, 10),
      },
    },
    lab: {
      nodes: labNodes,
      host: pick(undefined, 'ESI_LAB_HOST', 'lab_host') ?? '127.0.0.1',
      port: labPort,
      models: pick(options.labModels, 'ESI_LAB_MODELS', 'lab_models') ?? null,
      qemu: {
        nodes: toInt(pick(options.labQemu, 'ESI_LAB_QEMU_NODES', 'lab_qemu_nodes') ?? '0', 'lab QEMU nodes', 0, 64),
        memoryMiB: num('ESI_LAB_QEMU_MEMORY_MIB', 'lab_qemu_memory_mib', 2048, 128, 1024 * 1024),
        vcpus: num('ESI_LAB_QEMU_CPUS', 'lab_qemu_cpus', 2, 1, 64),
        diskGiB: num('ESI_LAB_QEMU_DISK_GIB', 'lab_qemu_disk_gib', 8, 1, 64 * 1024),
        firmware: oneOfSetting(pick(undefined, 'ESI_LAB_QEMU_FIRMWARE', 'lab_qemu_firmware') ?? 'uefi', 'lab_qemu_firmware', [
          'uefi',
          'bios',
        ] as const),
        accel: oneOfSetting(pick(undefined, 'ESI_LAB_QEMU_ACCEL', 'lab_qemu_accel') ?? 'auto', 'lab_qemu_accel', [
          'auto',
          'kvm',
          'tcg',
        ] as const),
        provisioningVlan: num('ESI_LAB_QEMU_PROVISIONING_VLAN', 'lab_qemu_provisioning_vlan', 3900, 1, 4094),
        provisioningAddress: pick(undefined, 'ESI_LAB_QEMU_PROVISIONING_ADDRESS', 'lab_qemu_provisioning_address') ?? '10.42.0.1/24',
        prefix: pick(undefined, 'ESI_LAB_QEMU_PREFIX', 'lab_qemu_prefix') ?? null,
      },
    },
  });
}

/** `value` when it is one of `allowed`. @throws ConfigError naming the setting */
function oneOfSetting<T extends string>(value: string, name: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got ${value})`);
  return value as T;
}

/** The networking settings; the VLAN ranges may be blank (no pool, no VLAN physical networks). */
function networkConfig(
  ranges: string,
  flat: string,
  rest: Omit<Config['network'], 'vlanPhysnets' | 'vlanRanges' | 'flatNetworks'>,
): Config['network'] {
  try {
    const { physnets, ranges: parsed } = parseVlanRanges(ranges);
    return { vlanPhysnets: physnets, vlanRanges: parsed, flatNetworks: parseFlatNetworks(flat), ...rest };
  } catch (err) {
    throw new ConfigError(`network settings (ESI_NETWORK_VLAN_RANGES, ESI_NETWORK_FLAT_NETWORKS): ${(err as Error).message}`);
  }
}

function readConfigFile(filePath: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(filePath, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${filePath}: ${(err as Error).message}`);
  }
  const parsed: unknown = YAML.parse(text);
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${filePath} must be a YAML mapping of settings`);
  }
  return parsed as Record<string, unknown>;
}

function toInt(value: string, name: string, min: number, max: number): number {
  if (!/^-?\d+$/.test(value.trim())) throw new ConfigError(`${name} must be an integer (got "${value}")`);
  const n = Number(value);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max} (got ${n})`);
  return n;
}

function parseSecretKey(value: string | null): string | null {
  if (value === null) return null;
  const v = value.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(v) || Buffer.from(v, 'base64').length !== 32) {
    throw new ConfigError('secret key (ESI_SECRET_KEY) must be the base64 encoding of 32 bytes');
  }
  return v;
}

function toPort(value: string, name: string): number {
  return toInt(value, name, 0, 65_535);
}

function parseBool(value: string, name: string): boolean {
  const v = value.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false (got "${value}")`);
}

function parseRoles(value: string): Role[] {
  const roles = value
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  if (roles.length === 0) throw new ConfigError('roles must name at least one of: api, conductor');
  for (const r of roles) {
    if (r !== 'api' && r !== 'conductor') throw new ConfigError(`unknown role "${r}" (roles are api, conductor)`);
  }
  return [...new Set(roles)] as Role[];
}

function parseHardwareTypes(value: string): string[] {
  const names = [
    ...new Set(
      value
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean),
    ),
  ];
  if (names.length === 0) throw new ConfigError(`enabled hardware types must name at least one of: ${KNOWN_DRIVERS.join(', ')}`);
  const unknown = names.filter((n) => !KNOWN_DRIVERS.includes(n));
  if (unknown.length > 0) throw new ConfigError(`unknown hardware types ${unknown.join(', ')} (known: ${KNOWN_DRIVERS.join(', ')})`);
  return names;
}

function parseLogFormat(value: string): Config['logFormat'] {
  const v = value.trim().toLowerCase();
  if (v === 'pretty' || v === 'json' || v === 'auto') return v;
  throw new ConfigError(`log format must be one of pretty, json, auto (got "${value}")`);
}

function parseLogLevel(value: string): Config['logLevel'] {
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
  const v = value.trim().toLowerCase();
  if ((levels as readonly string[]).includes(v)) return v as Config['logLevel'];
  throw new ConfigError(`log level must be one of ${levels.join(', ')} (got "${value}")`);
}

/** Hide the password of a database URL for messages. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):([^@]*)@/, '//$1:******@');
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
