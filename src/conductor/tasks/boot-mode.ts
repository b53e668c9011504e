/**
 * Boot mode in the conductor's stages, after Ironic 21.4 `ironic/common/boot_mode_utils.py`:
 *
 * - the mode a deployment asks for is `instance_info.capabilities.boot_mode` (an object, or its
 *   JSON text), else `properties.capabilities` `boot_mode` (Ironic's `"k:v,k:v"` string, or an
 *   object); `uefi` or `bios`, anything else is ignored;
 * - before a deployment boots the node, that mode is set at the BMC when it differs
 *   (`sync_boot_mode`), and kept in `driver_internal_info.deploy_boot_mode`;
 * - the node's `boot_mode` field caches what the BMC reports (`node_cache_boot_mode`), on
 *   verify (manage) and after a deployment set it.
 *
 * Only for hardware types with a boot mode interface; reading is best effort.
 */
import { BOOT_MODES, type BootMode } from '../../domain/hardware/boot-mode.ts';
import type { Node } from '../../domain/inventory/model.ts';
import type { ConductorChanges } from '../../domain/inventory/ports.ts';
import { openNode, type OpenedNode, type TaskEnv } from './context.ts';

function modeOf(v: unknown): BootMode | null {
  return typeof v === 'string' && BOOT_MODES.includes(v.trim().toLowerCase() as BootMode) ? (v.trim().toLowerCase() as BootMode) : null;
}

function capability(caps: unknown, key: string): unknown {
  if (typeof caps === 'string') {
    const t = caps.trim();
    if (t.startsWith('{')) {
      try {
        return capability(JSON.parse(t), key);
      } catch {
        return undefined;
      }
    }
    for (const pair of t.split(',')) {
      const [k, ...rest] = pair.split(':');
      if (k?.trim() === key) return rest.join(':').trim();
    }
    return undefined;
  }
  return caps !== null && typeof caps === 'object' && !Array.isArray(caps) ? (caps as Record<string, unknown>)[key] : undefined;
}

/** The boot mode the node's deployment asks for (see the module doc), or null. */
export function requestedBootMode(node: Pick<Node, 'instance_info' | 'properties'>): BootMode | null {
  return modeOf(capability(node.instance_info.capabilities, 'boot_mode')) ?? modeOf(capability(node.properties.capabilities, 'boot_mode'));
}

/**
 * Sets the requested boot mode at the BMC when it differs (before a deployment boots).
 * @returns the node changes (`boot_mode`, and `deploy_boot_mode` in `driverInternalInfo`)
 * @throws what the driver throws when setting the mode fails (the deployment then fails)
 */
export async function syncBootMode(
  opened: OpenedNode,
  node: Node,
  driverInternalInfo: Readonly<Record<string, unknown>>,
): Promise<ConductorChanges> {
  const wanted = requestedBootMode(node);
  const iface = opened.hw.bootMode;
  if (wanted === null || iface === undefined) return {};
  if ((await iface.getBootMode(opened.driverNode)) !== wanted) await iface.setBootMode(opened.driverNode, wanted);
  return { boot_mode: wanted, driver_internal_info: { ...driverInternalInfo, deploy_boot_mode: wanted } };
}

/** The node's boot mode as its BMC reports it, as a `boot_mode` change; {} when unknown. */
export async function cachedBootMode(env: TaskEnv, node: Node): Promise<ConductorChanges> {
  try {
    const opened = openNode(env, node);
    const mode = opened.hw.bootMode === undefined ? null : await opened.hw.bootMode.getBootMode(opened.driverNode);
    return mode === null ? {} : { boot_mode: mode };
  } catch {
    return {};
  }
}
