/**
 * The `linux-bridge` switch driver: a Linux bridge on this host stands in for a top-of-rack
 * switch, its ports are the bridge's member interfaces (in the lab, the host ends of the veth
 * pairs whose other ends are the virtual nodes' NICs, each in its own network namespace).
 *
 * `driver_info`:
 * | key      | meaning                                                                     |
 * |----------|-----------------------------------------------------------------------------|
 * | `bridge` | the bridge's name (≤ 10 characters, so `<bridge>v<vlan>` fits 15)            |
 * | `mode`   | `auto` (default): `vlan_filtering` when the bridge has it, else `bridge_per_vlan` (./bridge-plan.ts) |
 * | `netns`  | the network namespace holding the bridge and its ports (default: the host's) |
 *
 * Each `apply` reads the state (`ip -j link show`, and `bridge -j vlan show` with VLAN
 * filtering), plans the difference (./bridge-plan.ts) and runs it as `ip -batch` / `bridge
 * -batch` — so applying the same configuration again runs nothing. The mode `auto` resolves
 * once per driver instance (one more `ip -d link show` the first time). Needs CAP_NET_ADMIN (root). Failures are
 * `SwitchError`s carrying iproute2's message.
 */
import { execFile } from 'node:child_process';
import { SwitchError, type PortChange, type SwitchDriver } from '../../domain/networking/ports.ts';
import { missingToolError } from '../host-tools.ts';
import {
  checkIfname,
  enslaveCommands,
  parseVlanShow,
  planPerVlan,
  planVlanFiltering,
  type BridgeMode,
  type LinkInfo,
} from './bridge-plan.ts';

/** Settings of one linux-bridge switch. */
export interface LinuxBridgeSettings {
  readonly bridge: string;
  readonly mode: 'auto' | BridgeMode;
  readonly netns: string | null;
}

/**
 * Check and read `driver_info` of a linux-bridge switch.
 * @throws SwitchError (not retriable) naming the bad setting
 */
export function linuxBridgeSettings(info: Readonly<Record<string, unknown>>): LinuxBridgeSettings {
  const unknown = Object.keys(info).filter((k) => !['bridge', 'mode', 'netns'].includes(k));
  if (unknown.length > 0)
    throw new SwitchError(`unknown linux-bridge driver_info key(s): ${unknown.join(', ')} (known: bridge, mode, netns)`, false);
  const bridge = info.bridge;
  if (typeof bridge !== 'string' || bridge.length > 10)
    throw new SwitchError('linux-bridge driver_info.bridge must be a bridge name of at most 10 characters', false);
  checkIfname(bridge, 'bridge');
  const mode = info.mode ?? 'auto';
  if (mode !== 'auto' && mode !== 'vlan_filtering' && mode !== 'bridge_per_vlan')
    throw new SwitchError('linux-bridge driver_info.mode must be auto, vlan_filtering or bridge_per_vlan', false);
  const netns = info.netns ?? null;
  if (netns !== null && (typeof netns !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(netns)))
    throw new SwitchError('linux-bridge driver_info.netns must be a namespace name', false);
  return { bridge, mode, netns };
}

/** Run an iproute2 tool, optionally in a namespace, with batch input on stdin. */
export function iproute(
  tool: 'ip' | 'bridge',
  netns: string | null,
  args: readonly string[],
  input?: string,
  signal?: AbortSignal,
): Promise<string> {
  const full = [...(netns ? ['-n', netns] : []), ...args];
  return new Promise((resolve, reject) => {
    const child = execFile(
      tool,
      full,
      { timeout: 30_000, maxBuffer: 64 * 1024 * 1024, ...(signal ? { signal } : {}) },
      (err, stdout, stderr) => {
        if (err) {
          const missing = missingToolError(tool, err);
          const detail = missing?.message ?? (stderr || err.message).trim().split('\n').slice(0, 3).join('; ');
          reject(new SwitchError(`${tool} ${full.join(' ')} failed: ${detail}`));
        } else resolve(stdout);
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** A Linux bridge as a switch; see the module documentation. */
export class LinuxBridgeSwitch implements SwitchDriver {
  /** The detected mode (auto), once known: a bridge does not change kind under us. */
  #mode: BridgeMode | null = null;

  constructor(private readonly settings: LinuxBridgeSettings) {}

  private async links(signal?: AbortSignal): Promise<Map<string, LinkInfo>> {
    const out = await iproute('ip', this.settings.netns, ['-j', 'link', 'show'], undefined, signal);
    return new Map((JSON.parse(out || '[]') as LinkInfo[]).map((l) => [l.ifname, l]));
  }

  /** The mode in effect: the configured one, or (auto) what the bridge supports. */
  async mode(signal?: AbortSignal): Promise<BridgeMode> {
    if (this.settings.mode !== 'auto') return this.settings.mode;
    if (this.#mode !== null) return this.#mode;
    const out = await iproute('ip', this.settings.netns, ['-d', '-j', 'link', 'show', 'dev', this.settings.bridge], undefined, signal);
    const info = (JSON.parse(out || '[]') as Array<{ linkinfo?: { info_kind?: string; info_data?: Record<string, unknown> } }>)[0]
      ?.linkinfo;
    if (info?.info_kind !== 'bridge') throw new SwitchError(`${this.settings.bridge} is not a bridge`, false);
    this.#mode = info.info_data?.vlan_filtering === 1 ? 'vlan_filtering' : 'bridge_per_vlan';
    return this.#mode;
  }

  private async batch(tool: 'ip' | 'bridge', lines: readonly string[], signal?: AbortSignal): Promise<void> {
    if (lines.length > 0) await iproute(tool, this.settings.netns, ['-batch', '-'], `${lines.join('\n')}\n`, signal);
  }

  async apply(changes: readonly PortChange[], signal?: AbortSignal): Promise<void> {
    if (changes.length === 0) return;
    for (const c of changes) checkIfname(c.port, 'port');
    const { bridge } = this.settings;
    let links = await this.links(signal);
    if (!links.has(bridge))
      throw new SwitchError(`bridge ${bridge} does not exist${this.settings.netns ? ` in namespace ${this.settings.netns}` : ''}`);
    if ((await this.mode(signal)) === 'bridge_per_vlan') {
      const plan = planPerVlan(bridge, changes, links);
      // One `ip -batch`: its lines run in order, the "before" part first.
      await this.batch('ip', [...plan.ipBefore, ...plan.ipAfter], signal);
      return;
    }
    const enslave = enslaveCommands(bridge, changes, links);
    if (enslave.length > 0) {
      await this.batch('ip', enslave, signal);
      links = await this.links(signal);
    }
    const vlans = parseVlanShow(await iproute('bridge', this.settings.netns, ['-j', 'vlan', 'show'], undefined, signal));
    const plan = planVlanFiltering(changes, links, vlans);
    await this.batch('bridge', plan.bridge, signal);
    await this.batch('ip', plan.ipAfter, signal);
  }

  async close(): Promise<void> {}
}
