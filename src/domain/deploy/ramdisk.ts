/**
 * The ramdisk (deploy agent) side of the baremetal API: lookup and heartbeat (Ironic 21.4
 * `ironic/api/controllers/v1/ramdisk.py` and the conductor's `heartbeat`,
 * https://opendev.org/openstack/ironic). Both are public: the agent has no Keystone token, it
 * proves itself with the agent token it received on its first lookup
 * (src/domain/deploy/agent-token.ts).
 *
 * - {@link RamdiskService.lookup}: find the node by `node_uuid` or by one of the agent's MAC
 *   addresses (the node's ports); only nodes in the lookup states are found (`[api]
 *   restrict_lookup`). The first lookup of a ramdisk session generates the token and shows it;
 *   later lookups show `******`.
 * - {@link RamdiskService.heartbeat}: check the token, record `agent_url`,
 *   `agent_last_heartbeat` and `agent_version` in `driver_internal_info`; a node waiting for
 *   its agent (`wait call-back`, `clean wait`) resumes (`deploying`, `cleaning`) and the
 *   conductor is woken — unless the agent runs a long command the conductor follows itself
 *   (`driver_internal_info.agent_command`, src/domain/deploy/agent-node.ts). While the conductor holds the node (it is talking to the agent), a
 *   heartbeat whose URL is already recorded is accepted without a write.
 */
import type { Clock } from '../clock.ts';
import { InvalidInputError, LockedError, NotFoundError } from '../errors.ts';
import { isUuidLike } from '../ids.ts';
import type { SecretBox } from '../secrets.ts';
import { maskDriverInternalInfo, maskInstanceInfo, type JsonObject } from '../inventory/masking.ts';
import type { Node } from '../inventory/model.ts';
import type { ConductorPort, NodeChanges, NodeRepository, PortRepository } from '../inventory/ports.ts';
import { next, type ProvisionState } from '../inventory/states.ts';
import { canonicalUuid } from '../inventory/validation.ts';
import { pendingAgentCommand } from './agent-node.ts';
import { agentTokenMatches, hashAgentToken, newAgentToken } from './agent-token.ts';

/** States in which lookup finds a node (Ironic `LOOKUP_ALLOWED_STATES`). */
export const LOOKUP_STATES: ReadonlySet<ProvisionState> = new Set<ProvisionState>([
  'deploying',
  'wait call-back',
  'cleaning',
  'clean wait',
  'inspecting',
  'inspect wait',
  'rescuing',
  'rescue wait',
  'servicing',
  'service wait',
]);

/** Wait states a heartbeat resumes from. */
const RESUMABLE: ReadonlySet<ProvisionState> = new Set<ProvisionState>(['wait call-back', 'clean wait', 'service wait']);

/** Ironic's default `[api] ramdisk_heartbeat_timeout`, seconds. */
export const HEARTBEAT_TIMEOUT_S = 300;

/** What lookup returns (Ironic's `LookupResult`, minus `links`, which the API adds). */
export interface LookupResult {
  readonly node: { uuid: string; properties: JsonObject; instance_info: JsonObject; driver_internal_info: JsonObject };
  readonly config: JsonObject;
}

/** A heartbeat as the agent sends it. */
export interface Heartbeat {
  readonly callbackUrl: unknown;
  readonly agentToken: unknown;
  readonly agentVersion?: unknown;
  readonly agentStatus?: unknown;
  readonly agentStatusMessage?: unknown;
}

/** What the service needs. */
export interface RamdiskDeps {
  readonly nodes: NodeRepository;
  readonly ports: PortRepository;
  readonly clock: Clock;
  readonly secrets: SecretBox;
  /** Wakes the conductor for a node. */
  readonly conductor: ConductorPort;
}

/** Attempts of a versioned write before giving up (concurrent API writes). */
const WRITE_ATTEMPTS = 3;

/** Lookup and heartbeat of the deploy agent (see the module documentation). */
export class RamdiskService {
  constructor(private readonly d: RamdiskDeps) {}

  /**
   * Find the node of an agent.
   * @param addresses the `addresses` query value: comma-separated MACs (invalid ones ignored)
   * @param nodeUuid the `node_uuid` query value, when given
   * @throws InvalidInputError without one valid MAC or UUID; NotFoundError when no node in a
   *   lookup state matches; LockedError when the node is busy (the agent retries)
   */
  async lookup(addresses: string | undefined, nodeUuid: string | undefined): Promise<LookupResult> {
    const macs = (addresses ?? '')
      .split(',')
      .map((a) => a.trim().toLowerCase())
      .filter((a) => /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/.test(a));
    const uuid = nodeUuid !== undefined && nodeUuid !== '' ? canonicalUuid(nodeUuid) : null;
    if (nodeUuid !== undefined && nodeUuid !== '' && uuid === null)
      throw new InvalidInputError(`Expected a UUID for node_uuid: ${nodeUuid}`, 'InvalidUUID');
    if (macs.length === 0 && uuid === null)
      throw new InvalidInputError('The "addresses" or "node_uuid" parameter is required and must hold a valid MAC address or UUID.');
    const node = await this.#find(macs, uuid);
    if (node === null || !LOOKUP_STATES.has(node.provision_state))
      throw new NotFoundError('node', uuid ?? macs.join(','), 'Node could not be found.');
    return this.#issue(node);
  }

  /**
   * Record a heartbeat of the agent of node `ident` (UUID or name).
   * @throws InvalidInputError for a missing or wrong token, a bad or changed `callback_url`;
   *   NotFoundError for an unknown node or one that expects no agent; LockedError when the
   *   heartbeat must be recorded but the node stays busy
   */
  async heartbeat(ident: string, hb: Heartbeat): Promise<void> {
    if (typeof hb.agentToken !== 'string' || hb.agentToken === '')
      throw new InvalidInputError('Agent token is required for heartbeat processing.');
    const url = callbackUrl(hb.callbackUrl);
    const version = typeof hb.agentVersion === 'string' ? hb.agentVersion.slice(0, 64) : null;
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const node = isUuidLike(ident) ? await this.d.nodes.get(canonicalUuid(ident) ?? ident) : await this.d.nodes.getByName(ident);
      if (node === null || !LOOKUP_STATES.has(node.provision_state)) throw new NotFoundError('node', ident);
      if (!agentTokenMatches(node.driver_internal_info.agent_secret_token, hb.agentToken))
        throw new InvalidInputError('Invalid or missing agent token received.', 'InvalidParameterValue');
      const stored = node.driver_internal_info.agent_url;
      if (typeof stored === 'string' && stored !== url) {
        throw new InvalidInputError(
          `The callback_url ${url} differs from the agent URL ${stored} recorded for node ${node.uuid}.`,
          'InvalidParameterValue',
        );
      }
      const now = this.d.clock.now();
      const dii: JsonObject = { ...node.driver_internal_info, agent_url: url, agent_last_heartbeat: new Date(now).toISOString() };
      if (version !== null) dii.agent_version = version;
      const changes: NodeChanges = { driver_internal_info: dii };
      // A node whose agent runs a long command is resumed by the conductor's command watcher.
      const following = pendingAgentCommand(node) !== null;
      const resume = RESUMABLE.has(node.provision_state) && !following;
      if (resume) {
        const t = next(node.provision_state, 'resume', node.target_provision_state ?? undefined);
        Object.assign(changes, {
          provision_state: t.state,
          target_provision_state: node.target_provision_state ?? t.target,
          provision_updated_at: now,
        });
      }
      const r = await this.d.nodes.update(node.uuid, node.version, changes, now);
      if (r.ok) {
        if (resume) this.d.conductor.notifyNode(node.uuid);
        else if (following) this.d.conductor.notifyAgentCommand?.(node.uuid);
        return;
      }
      if (r.reason === 'missing') throw new NotFoundError('node', ident);
      // The conductor holds the node while it drives the agent: nothing to record then.
      if (r.reason === 'reserved' && stored === url && !resume) return;
      if (r.reason === 'reserved') throw new LockedError(`Node ${node.uuid} is locked by a conductor; retry the heartbeat.`);
    }
    throw new LockedError(`Node ${ident} changed during the heartbeat; retry it.`);
  }

  async #find(macs: readonly string[], uuid: string | null): Promise<Node | null> {
    if (uuid !== null) {
      const n = await this.d.nodes.get(uuid);
      if (n !== null) return n;
    }
    for (const mac of macs) {
      const port = await this.d.ports.getByAddress(mac);
      if (port !== null) return this.d.nodes.get(port.node_uuid);
    }
    return null;
  }

  /** Generate the session's token on the first lookup; show `******` afterwards. */
  async #issue(first: Node): Promise<LookupResult> {
    let node = first;
    let token = '******';
    for (let attempt = 0; node.driver_internal_info.agent_secret_token === undefined; attempt++) {
      if (attempt >= WRITE_ATTEMPTS) throw new LockedError(`Node ${node.uuid} changed during the lookup; retry it.`);
      const fresh = newAgentToken();
      const dii: JsonObject = {
        ...node.driver_internal_info,
        agent_secret_token: hashAgentToken(fresh),
        agent_token_sealed: this.d.secrets.seal(fresh),
      };
      const r = await this.d.nodes.update(node.uuid, node.version, { driver_internal_info: dii }, this.d.clock.now());
      if (r.ok) {
        node = r.node;
        token = fresh;
        break;
      }
      if (r.reason === 'reserved') throw new LockedError(`Node ${node.uuid} is locked by a conductor; retry the lookup.`);
      const again = await this.d.nodes.get(node.uuid);
      if (again === null || !LOOKUP_STATES.has(again.provision_state))
        throw new NotFoundError('node', node.uuid, 'Node could not be found.');
      node = again;
    }
    const dii = { ...maskDriverInternalInfo(node.driver_internal_info) };
    return {
      node: {
        uuid: node.uuid,
        properties: node.properties,
        instance_info: maskInstanceInfo(node.instance_info),
        driver_internal_info: dii,
      },
      config: {
        metrics: { backend: 'noop', prepend_host: false, prepend_uuid: false, prepend_host_reverse: true, global_prefix: null },
        metrics_statsd: { statsd_host: 'localhost', statsd_port: 8125 },
        heartbeat_timeout: HEARTBEAT_TIMEOUT_S,
        agent_token: token,
        agent_token_required: true,
        disable_deep_image_inspection: false,
        permitted_image_formats: ['raw', 'qcow2', 'iso'],
        enable_bios_bootloader_install: false,
      },
    };
  }
}

/**
 * Validate a heartbeat's `callback_url`: an absolute `http(s)` URL without credentials.
 * @throws InvalidInputError otherwise
 */
export function callbackUrl(value: unknown): string {
  if (typeof value !== 'string' || value.length > 2048) throw new InvalidInputError('callback_url is required and must be an http(s) URL.');
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new InvalidInputError(`Invalid callback_url: ${JSON.stringify(value.slice(0, 200))} is not a URL.`);
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username !== '' || u.password !== '') {
    throw new InvalidInputError('callback_url must be an http(s) URL without credentials.');
  }
  return value.replace(/\/+$/, '');
}
