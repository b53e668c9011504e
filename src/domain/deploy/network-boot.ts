/**
 * iPXE scripts for network boot, as Ironic's `ipxe` boot interface writes them
 * (`ironic/drivers/modules/ipxe_config.template`): the DHCP server gives iPXE clients the URL of
 * {@link NETWORK_BOOT_CHAIN} (the same for every machine), which chains to the script of the
 * booting NIC's MAC ({@link NetworkBootService.scriptFor}):
 *
 * - a node whose deploy agent is to boot (an agent phase: src/domain/networking/agent-phase.ts)
 *   and whose boot interface boots from the network gets `kernel <deploy_kernel> <params>`
 *   (a `file://` kernel or ramdisk is published by esi at a signed `/boot/media/…` URL),
 *   `initrd <deploy_ramdisk>`, `boot`, with the parameters ironic-python-agent reads
 *   (`ipa-api-url`, `BOOTIF`) and the serial console;
 * - any other MAC (unknown, or a node that is not booting the agent) gets a script that exits,
 *   so the firmware goes on to its next boot device (the instance's disk).
 *
 * The scripts are public (iPXE has no credentials) and reveal nothing secret: the ramdisk URLs
 * and the API URL, never a token.
 */
import { inAgentPhase } from '../networking/agent-phase.ts';
import type { NodeRepository, PortRepository } from '../inventory/ports.ts';
import type { Node } from '../inventory/model.ts';
import { NETWORK_BOOT_INTERFACES } from './readiness.ts';

/** The chain script every iPXE client gets first: it asks for the script of its own NIC. */
export function chainScript(scriptBaseUrl: string): string {
  return `#!ipxe\n# esi: fetch the boot script of this NIC\nchain --autofree ${scriptBaseUrl}?mac=\${netX/mac} || goto fail\n:fail\necho esi: no boot script; booting the next device\nexit 1\n`;
}

/** The path of the chain script below esi's public URL. */
export const NETWORK_BOOT_CHAIN = '/boot/boot.ipxe';
/** The path of the per-NIC scripts below esi's public URL (`?mac=`). */
export const NETWORK_BOOT_SCRIPT = '/boot/node.ipxe';

/** The script of a NIC esi does not boot: back to the firmware's next device. */
export function exitScript(reason: string): string {
  return `#!ipxe\necho esi: ${reason.replace(/[\r\n]/g, ' ')}\nexit 1\n`;
}

/**
 * The kernel parameters of the deploy agent, as ironic-python-agent names them: `ipa-api-url`,
 * and for an inspection boot `ipa-inspection-callback-url` (where the inventory goes, Ironic's
 * built-in inspection endpoint).
 * @param apiUrl the baremetal endpoint, e.g. `http://10.42.0.1:8585/baremetal`
 */
export function agentKernelParams(apiUrl: string, inspection: boolean): string {
  return [`ipa-api-url=${apiUrl}`, ...(inspection ? [`ipa-inspection-callback-url=${apiUrl}/v1/continue_inspection`] : [])].join(' ');
}

/**
 * Publishes a node's `deploy_kernel` and `deploy_ramdisk` over esi's HTTP when they are not
 * http(s) URLs (a `file://` path): signed URLs of `/boot/media/<node>/kernel` and `…/ramdisk`.
 */
export interface BootFileStager {
  /** @throws Error when a file cannot be read or fetched */
  stage(node: Pick<Node, 'uuid' | 'driver_info'>): Promise<{ kernel: string; ramdisk: string }>;
}

/** What {@link NetworkBootService} reads. */
export interface NetworkBootDeps {
  readonly nodes: Pick<NodeRepository, 'get'>;
  readonly ports: Pick<PortRepository, 'getByAddress'>;
  /** Publishes local kernels and ramdisks (absent: only http(s) ones boot). */
  readonly stager?: BootFileStager;
  /** The baremetal endpoint the agent calls back (`ipa-api-url`), e.g. `http://10.42.0.1:8585/baremetal`. */
  readonly apiUrl: string;
}

/** A MAC as iPXE's `${netX/mac}` gives it, canonical lower-case with colons, or null. */
export function canonicalMac(raw: string | undefined): string | null {
  const m = (raw ?? '').trim().toLowerCase().replace(/-/g, ':');
  return /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/.test(m) ? m : null;
}

/** True for an http(s) URL iPXE can fetch. */
function fetchable(v: unknown): v is string {
  return typeof v === 'string' && /^https?:\/\/\S+$/.test(v);
}

/** Serves the per-NIC iPXE scripts (see the module documentation). */
export class NetworkBootService {
  constructor(private readonly d: NetworkBootDeps) {}

  /**
   * The iPXE script for the NIC with this MAC (never throws for unknown MACs: they get
   * {@link exitScript}).
   */
  async scriptFor(rawMac: string | undefined): Promise<string> {
    const mac = canonicalMac(rawMac);
    if (mac === null) return exitScript('no valid MAC address in the request');
    const port = await this.d.ports.getByAddress(mac);
    const node = port === null ? null : await this.d.nodes.get(port.node_uuid);
    if (port === null || node === null) return exitScript(`MAC ${mac} is not enrolled`);
    const boot = node.driver_internal_info.agent_boot;
    const booting =
      port.pxe_enabled &&
      inAgentPhase({ node_provision_state: node.provision_state, node_agent_boot: typeof boot === 'string' ? boot : null }) &&
      NETWORK_BOOT_INTERFACES.includes(node.boot_interface ?? '');
    if (!booting) return exitScript(`node ${node.uuid} is not booting the deploy agent from the network`);
    let kernel = node.driver_info.deploy_kernel;
    let ramdisk = node.driver_info.deploy_ramdisk;
    if (!fetchable(kernel) || !fetchable(ramdisk)) {
      if (this.d.stager === undefined)
        return exitScript(`node ${node.uuid}: deploy_kernel and deploy_ramdisk must be http(s) URLs for network boot`);
      try {
        ({ kernel, ramdisk } = await this.d.stager.stage(node));
      } catch (err) {
        return exitScript(`node ${node.uuid}: the deploy ramdisk cannot be published: ${(err as Error).message}`);
      }
    }
    const params = [
      'initrd=ramdisk',
      agentKernelParams(this.d.apiUrl, boot === 'inspect'),
      `BOOTIF=01-${mac.replace(/:/g, '-')}`,
      'console=tty0',
      'console=ttyS0,115200n8',
    ];
    return `#!ipxe\necho esi: booting the deploy agent of node ${node.uuid}\nkernel --name kernel ${kernel} ${params.join(' ')} || goto fail\ninitrd --name ramdisk ${ramdisk} || goto fail\nboot\n:fail\necho esi: fetching the deploy ramdisk failed\nexit 1\n`;
  }
}
