/**
 * Settings of the tenant dataplane: which Linux bridge stands for the switch its legs plug
 * into, and how that bridge separates VLANs — the same keys as the `linux-bridge` switch
 * driver's `driver_info` (src/drivers/switch/linux-bridge.ts), plus the VLAN of flat networks
 * (the switch's `flat_vlan`, so that a flat network's nodes and its DHCP and router legs meet).
 *
 * | key         | meaning                                                                          |
 * |-------------|----------------------------------------------------------------------------------|
 * | `bridge`    | the bridge (≤ 10 characters, so `<bridge>v<vlan>` fits the kernel's 15)           |
 * | `mode`      | `auto` (default: `vlan_filtering` when the bridge filters VLANs, else `bridge_per_vlan`), `vlan_filtering`, `bridge_per_vlan` |
 * | `netns`     | the namespace holding the bridge (default: the host's)                           |
 * | `flat_vlan` | the VLAN flat (untagged) networks use on the bridge, 1-4094 (default 1)          |
 */
import { DataplaneError } from '../../domain/networking/dataplane.ts';
import type { BridgeMode } from '../switch/bridge-plan.ts';
import { linuxBridgeSettings } from '../switch/linux-bridge.ts';

/** The checked settings. */
export interface SwitchSettings {
  readonly bridge: string;
  readonly mode: 'auto' | BridgeMode;
  readonly netns: string | null;
  readonly flatVlan: number;
}

/**
 * Check the settings (`{bridge, mode?, netns?, flat_vlan?}`).
 * @throws DataplaneError naming the bad key
 */
export function switchSettings(info: Readonly<Record<string, unknown>>): SwitchSettings {
  const { flat_vlan: flat, ...rest } = info;
  let bridge;
  try {
    bridge = linuxBridgeSettings(rest);
  } catch (err) {
    throw new DataplaneError(`dataplane switch settings: ${(err as Error).message}`, { cause: err });
  }
  const flatVlan = flat ?? 1;
  if (typeof flatVlan !== 'number' || !Number.isInteger(flatVlan) || flatVlan < 1 || flatVlan > 4094)
    throw new DataplaneError(`dataplane switch settings: flat_vlan must be a VLAN id 1-4094, not ${String(flat)}`);
  return Object.freeze({ ...bridge, flatVlan });
}
