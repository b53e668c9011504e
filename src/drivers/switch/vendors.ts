/**
 * Vendor profiles of the `ssh-cli` switch driver: the CLI command sets that configure an
 * access port, a trunk (native and allowed VLANs), a quarantined port, and save the
 * configuration — as networking-generic-switch's Netmiko device classes and
 * networking-ansible's roles drive Cisco NX-OS and Arista EOS (facts from their documented
 * command sets; the commands are the vendors' CLI).
 *
 * Each port change is declarative: the whole configuration of the port is sent, so re-sending
 * it is harmless, and a port moved from trunk to access loses its trunk VLANs. VLANs a port
 * needs are created first (`vlan N` is idempotent on both). Trunks allow the native VLAN too
 * (untagged frames of the native VLAN are only forwarded when it is allowed). Quarantine shuts
 * the port down and leaves it with no access VLAN and no allowed trunk VLAN.
 */
import type { SwitchPortConfig } from '../../domain/networking/model.ts';
import type { PortChange } from '../../domain/networking/ports.ts';

/** A vendor's CLI. */
export interface VendorProfile {
  readonly name: string;
  /** Prompt at the end of output: `host#`, `host(config)#`, `host(config-if)#`, `host>`. */
  readonly prompt: RegExp;
  /** Lines of output that mean the command was refused (both CLIs start them with `%`; warnings excepted). */
  readonly error: RegExp;
  /** Commands after login (paging off). */
  readonly setup: readonly string[];
  /** Enter configuration mode. */
  readonly configure: string;
  /** Leave configuration mode. */
  readonly end: string;
  /** Save the running configuration. */
  readonly save: string;
  /** Commands for a VLAN's existence (inside configuration mode). */
  vlan(id: number): string[];
  /** Commands configuring one port (inside configuration mode). */
  port(port: string, config: SwitchPortConfig): string[];
}

function vlanList(ids: readonly number[]): string {
  return ids.length === 0 ? 'none' : ids.join(',');
}

function portCommands(port: string, config: SwitchPortConfig, l2: readonly string[]): string[] {
  const out = [`interface ${port}`, ...l2];
  switch (config.mode) {
    case 'access':
      out.push('switchport mode access', `switchport access vlan ${config.vlan}`, 'no shutdown');
      break;
    case 'trunk': {
      const allowed = [...new Set([...(config.native_vlan === null ? [] : [config.native_vlan]), ...config.allowed_vlans])].sort(
        (a, b) => a - b,
      );
      out.push('switchport mode trunk');
      out.push(config.native_vlan === null ? 'no switchport trunk native vlan' : `switchport trunk native vlan ${config.native_vlan}`);
      out.push(`switchport trunk allowed vlan ${vlanList(allowed)}`, 'no shutdown');
      break;
    }
    case 'quarantine':
      out.push(
        'shutdown',
        'switchport mode access',
        'no switchport access vlan',
        'no switchport trunk native vlan',
        'switchport trunk allowed vlan none',
      );
      break;
  }
  out.push('exit');
  return out;
}

/** Cisco NX-OS: ports are made layer 2 (`switchport`) first; `copy running-config startup-config` saves. */
export const CISCO_NXOS: VendorProfile = {
  name: 'cisco_nxos',
  prompt: /(^|\n)[\w.\-/]+(\([\w.\-/]+\))?[#>] ?$/,
  error: /^\s*%(?! ?Warning)/m,
  setup: ['terminal length 0'],
  configure: 'configure terminal',
  end: 'end',
  save: 'copy running-config startup-config',
  vlan: (id) => [`vlan ${id}`, 'exit'],
  port: (port, config) => portCommands(port, config, ['switchport']),
};

/** Arista EOS: ports are switchports by default; `write memory` saves. */
export const ARISTA_EOS: VendorProfile = {
  name: 'arista_eos',
  prompt: /(^|\n)[\w.\-/]+(\([\w.\-/]+\))?[#>] ?$/,
  error: /^\s*%(?! ?Warning)/m,
  setup: ['terminal length 0'],
  configure: 'configure terminal',
  end: 'end',
  save: 'write memory',
  vlan: (id) => [`vlan ${id}`, 'exit'],
  port: (port, config) => portCommands(port, config, []),
};

/** Profiles by name. */
export const VENDORS: Readonly<Record<string, VendorProfile>> = Object.freeze({ cisco_nxos: CISCO_NXOS, arista_eos: ARISTA_EOS });

/** The whole configuration-mode script of a batch: VLANs first, then ports. */
export function configScript(profile: VendorProfile, changes: readonly PortChange[]): string[] {
  const vlans = new Set<number>();
  for (const { config } of changes) {
    if (config.mode === 'access') vlans.add(config.vlan);
    if (config.mode === 'trunk') {
      if (config.native_vlan !== null) vlans.add(config.native_vlan);
      for (const v of config.allowed_vlans) vlans.add(v);
    }
  }
  return [...[...vlans].sort((a, b) => a - b).flatMap((v) => profile.vlan(v)), ...changes.flatMap((c) => profile.port(c.port, c.config))];
}
