/**
 * esi's YAML config file (`--config` / `ESI_CONFIG`; deploy/esi.yaml is the example that lists
 * every key with its default) and the reader that looks a setting up in the option, the
 * environment and the file, in that order.
 *
 * The file is a mapping of {@link CONFIG_FILE_KEYS} (the settings' snake_case names, the
 * environment's `ESI_*` names in lower case without the prefix). A key esi does not know is
 * refused at start, naming it and the nearest known key, so a typo is not silently ignored.
 */
import fs from 'node:fs';
import YAML from 'yaml';
import { ConfigError } from './config-types.ts';
import { toInt } from './config-values.ts';

/** Every key a config file may hold, grouped as deploy/esi.yaml lists them. */
export const CONFIG_FILE_KEYS = [
  // process
  'host',
  'port',
  'public_url',
  'data_dir',
  'database_url',
  'secret_key',
  'roles',
  'log_level',
  'log_format',
  'policy_file',
  'inspection_rules',
  'max_body_bytes',
  'metrics',
  // identity and images
  'token_ttl',
  'region',
  'max_image_size',
  // conductor
  'conductor_hostname',
  'conductor_workers',
  'conductor_heartbeat_interval',
  'conductor_dead_after',
  'power_sync_interval',
  'power_timeout',
  'power_sync_max_retries',
  'force_power_state_during_sync',
  'bmc_timeout_s',
  'sync_power_state_workers',
  'node_history_max_entries',
  'conductor_poll_ms',
  'automated_clean',
  'check_provision_state_interval',
  'deploy_callback_timeout',
  'clean_callback_timeout',
  'inspect_wait_timeout',
  'rescue_callback_timeout',
  // hardware
  'enabled_hardware_types',
  'ipmi_command_timeout',
  'ipmi_command_retries',
  // leasing
  'default_lease_time',
  'max_lease_time',
  'lease_sweep_interval',
  'lease_warning_time',
  'webhook_retry_base_ms',
  'webhook_max_attempts',
  'webhook_timeout',
  'webhook_poll_ms',
  'webhook_allow_private',
  // networking
  'network_vlan_ranges',
  'network_flat_networks',
  'network_mtu',
  'switch_max_attempts',
  'switch_retry_base_ms',
  'switch_timeout',
  'switch_poll_ms',
  'quota_router',
  'quota_floatingip',
  'provisioning_network',
  'provisioning_interface',
  'provisioning_netns',
  'dhcp_user',
  'dataplane_bridge',
  'dataplane_netns',
  'dataplane_mode',
  'dataplane_flat_vlan',
  'dataplane_poll_ms',
  'file_url_allowed_paths',
  // virtual lab
  'lab_nodes',
  'lab_host',
  'lab_port',
  'lab_models',
  'lab_qemu_nodes',
  'lab_qemu_memory_mib',
  'lab_qemu_cpus',
  'lab_qemu_disk_gib',
  'lab_qemu_firmware',
  'lab_qemu_accel',
  'lab_qemu_provisioning_vlan',
  'lab_qemu_provisioning_address',
  'lab_qemu_prefix',
] as const;

/** A key of the config file. */
export type ConfigFileKey = (typeof CONFIG_FILE_KEYS)[number];

/** The parsed config file: its keys, all known (values as YAML gave them). */
export type ConfigFile = Partial<Record<ConfigFileKey, unknown>>;

/**
 * Read and check a config file.
 * @returns its settings ({} for an empty file)
 * @throws ConfigError when it cannot be read, is not YAML, is not a mapping, or holds a key esi
 *   does not know (the message names every such key and the nearest known one)
 */
export function readConfigFile(filePath: string): ConfigFile {
  let text: string;
  try {
    text = fs.readFileSync(filePath, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${filePath}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = YAML.parse(text);
  } catch (err) {
    throw new ConfigError(`config file ${filePath} is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${filePath} must be a YAML mapping of settings`);
  }
  const unknown = Object.keys(parsed).filter((k) => !(CONFIG_FILE_KEYS as readonly string[]).includes(k));
  if (unknown.length > 0) {
    const named = unknown.map((k) => {
      const near = nearestKey(k);
      return near === null ? `"${k}"` : `"${k}" (did you mean "${near}"?)`;
    });
    throw new ConfigError(
      `config file ${filePath}: unknown ${unknown.length === 1 ? 'key' : 'keys'} ${named.join(', ')}; deploy/esi.yaml lists every key`,
    );
  }
  return parsed;
}

/** The known key nearest to `key` (Levenshtein distance ≤ 2, ignoring case and `-`/`_`), or null. */
export function nearestKey(key: string): string | null {
  const k = key.toLowerCase().replace(/-/g, '_');
  let best: { key: string; d: number } | null = null;
  for (const known of CONFIG_FILE_KEYS) {
    const d = levenshtein(k, known);
    if (d <= 2 && (best === null || d < best.d)) best = { key: known, d };
  }
  return best?.key ?? null;
}

/** Edit distance between `a` and `b`: insertions, deletions and substitutions of one character. */
export function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

/** Looks settings up: the option, else the environment variable, else the file key; blanks are unset. */
export interface SettingReader {
  /** The setting's text, or undefined when none of the three sets it. */
  pick(option: string | number | undefined, envName: string, fileKey: ConfigFileKey): string | undefined;
  /**
   * An integer setting without a command-line option.
   * @param def its default
   * @throws ConfigError naming `fileKey` when it is not an integer in [min, max]
   */
  num(envName: string, fileKey: ConfigFileKey, def: number, min: number, max: number): number;
}

/** The {@link SettingReader} over `env` and `file`. */
export function settingReader(env: NodeJS.ProcessEnv, file: ConfigFile): SettingReader {
  const pick = (opt: string | number | undefined, envName: string, fileKey: ConfigFileKey): string | undefined => {
    if (opt !== undefined && opt !== '') return String(opt);
    const e = env[envName];
    if (e !== undefined && e !== '') return e;
    const f = file[fileKey];
    return f === undefined || f === null ? undefined : String(f);
  };
  return {
    pick,
    num: (envName, fileKey, def, min, max) => toInt(pick(undefined, envName, fileKey) ?? String(def), fileKey, min, max),
  };
}
