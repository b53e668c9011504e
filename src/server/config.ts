/**
 * esi configuration: read once at start-up into a typed, frozen {@link Config} and passed down.
 *
 * Sources, highest precedence first: command-line options, environment variables (`ESI_*`),
 * a YAML config file (`--config` / `ESI_CONFIG`), built-in defaults. This is the only module
 * of the server that reads `process.env`. The config file refuses keys it does not know
 * (./config-file.ts; deploy/esi.yaml lists every key with its default).
 *
 * The parts: ./config-types.ts (the shapes), ./config-values.ts (the value parsers),
 * ./config-file.ts (the file and the option → environment → file lookup), ./config-lab.ts (the
 * virtual lab's settings); this module assembles them.
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
 * | conductor name       | `--conductor-name` | `ESI_CONDUCTOR_HOSTNAME` | `<host>-<id>`, `<id>` in `<data-dir>/conductor-id` |
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
 * `ESI_CONDUCTOR_HEARTBEAT_INTERVAL` (10 s), `ESI_CONDUCTOR_DEAD_AFTER` (3 heartbeats, at least
 * 2; docs/scale-out.md), `ESI_POWER_SYNC_INTERVAL` (60 s),
 * `ESI_POWER_SYNC_MAX_RETRIES` (3), `ESI_CHECK_PROVISION_STATE_INTERVAL` (60 s), and the
 * wait-state timeouts `ESI_DEPLOY_CALLBACK_TIMEOUT`, `ESI_CLEAN_CALLBACK_TIMEOUT`,
 * `ESI_INSPECT_WAIT_TIMEOUT`, `ESI_RESCUE_CALLBACK_TIMEOUT` (1800 s each, 0 = never; Ironic's
 * `[conductor]` defaults). Power sync and history (docs/power-sync.md):
 * `ESI_FORCE_POWER_STATE_DURING_SYNC` (false: the BMC wins), `ESI_BMC_TIMEOUT_S` (10 s per power
 * read), `ESI_SYNC_POWER_STATE_WORKERS` (8), `ESI_NODE_HISTORY_MAX_ENTRIES` (300 per node),
 * `ESI_CONDUCTOR_POLL_MS` (1000: the pending-work poll and the agent command watch).
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
import os from 'node:os';
import path from 'node:path';
import { parseFlatNetworks, parseVlanRanges } from '../domain/networking/segments.ts';
import { KNOWN_DRIVERS } from '../drivers/hardware/registry.ts';
import { cacheRoot } from '../osimage/cache.ts';
import { readConfigFile, settingReader } from './config-file.ts';
import { labConfig } from './config-lab.ts';
import { ConfigError, type Config, type ConfigOptions } from './config-types.ts';
import {
  deepFreeze,
  parseBool,
  parseHardwareTypes,
  parseLogFormat,
  parseLogLevel,
  parseRoles,
  parseSecretKey,
  redactUrl,
  toPort,
} from './config-values.ts';

export { ConfigError, type Config, type ConfigOptions, type Role } from './config-types.ts';
export { redactUrl } from './config-values.ts';

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
  const settings = settingReader(env, file);
  const { pick, num } = settings;

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
  const conductorName = parseConductorName(pick(options.conductorName, 'ESI_CONDUCTOR_HOSTNAME', 'conductor_hostname'));
  const heartbeatIntervalS = num('ESI_CONDUCTOR_HEARTBEAT_INTERVAL', 'conductor_heartbeat_interval', 10, 1, 3600);
  // Dead after three missed heartbeats unless set; shorter than two beats would declare a
  // conductor dead between two of its own heartbeats.
  const deadAfterS = num('ESI_CONDUCTOR_DEAD_AFTER', 'conductor_dead_after', 3 * heartbeatIntervalS, 2, 86_400);
  if (deadAfterS < 2 * heartbeatIntervalS) {
    throw new ConfigError(
      `ESI_CONDUCTOR_DEAD_AFTER (${deadAfterS} s) must be at least twice ESI_CONDUCTOR_HEARTBEAT_INTERVAL (${heartbeatIntervalS} s)`,
    );
  }

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
      name: conductorName,
      hostname: conductorName ?? os.hostname(),
      powerSyncIntervalS: num('ESI_POWER_SYNC_INTERVAL', 'power_sync_interval', 60, 1, 86_400),
      powerTimeoutS: num('ESI_POWER_TIMEOUT', 'power_timeout', 30, 1, 3600),
      heartbeatIntervalS,
      deadAfterS,
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
      pollMs: num('ESI_CONDUCTOR_POLL_MS', 'conductor_poll_ms', 1000, 10, 600_000),
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
    lab: labConfig(options, settings),
  });
}

/**
 * A conductor name as given (trimmed), or null when none is: printable, without white space or
 * `/` (it appears in URLs, `/v1/conductors/<name>`), at most 255 characters.
 * @throws ConfigError naming the setting
 */
function parseConductorName(given: string | undefined): string | null {
  const name = given?.trim() ?? '';
  if (name === '') return null;
  if (name.length > 255 || !/^[\x21-\x7e]+$/.test(name) || name.includes('/')) {
    throw new ConfigError(
      `conductor name (--conductor-name, ESI_CONDUCTOR_HOSTNAME) must be 1 to 255 printable characters without spaces or "/" (got ${JSON.stringify(name)})`,
    );
  }
  return name;
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
