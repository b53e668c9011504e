/**
 * Rendering of compute objects in Nova's JSON shapes, per microversion: flavors (description
 * ≥ 2.55, extra specs ≥ 2.61, `swap` "" for 0 before 2.75), key pairs (type ≥ 2.2, user_id on
 * show), servers (Nova's v2.1 server view: `OS-EXT-STS:*`, `OS-SRV-USG:*`, fault for ERROR and
 * DELETED, the embedded flavor ≥ 2.47, description ≥ 2.19, locked ≥ 2.9, tags ≥ 2.26,
 * trusted_image_certificates ≥ 2.63, server_groups ≥ 2.71, locked_reason ≥ 2.73; admins
 * also see `OS-EXT-SRV-ATTR:*` with the node's UUID as `hypervisor_hostname`), and the version
 * documents. Timestamps are ISO-8601 UTC without fractions (`2026-01-02T03:04:05Z`), as Nova.
 *
 * esi's one addition: `esi:node`, the UUID of the server's node, for callers who may see that
 * node (its owner and lessee) — the node stays reachable through the baremetal API.
 */
import { createHash } from 'node:crypto';
import type { Flavor, Keypair, ServerFault } from '../../domain/compute/model.ts';
import type { ServerView } from '../../domain/compute/servers.ts';
import { MAX_MINOR, MIN_MINOR } from './microversion.ts';

/** Statuses of a server that was launched (`OS-SRV-USG:launched_at` is set). */
const LAUNCHED: ReadonlySet<string> = new Set(['ACTIVE', 'SHUTOFF', 'REBOOT', 'HARD_REBOOT', 'REBUILD']);

/** Nova's time format. */
export function novaTime(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `self` and `bookmark` links (`<compute>/v2.1/<path>` and `<compute>/<path>`). */
export function links(base: string, path: string): Array<{ rel: string; href: string }> {
  return [
    { rel: 'self', href: `${base}/v2.1/${path}` },
    { rel: 'bookmark', href: `${base}/${path}` },
  ];
}

/** The v2.1 version object. */
export function versionObject(base: string): Record<string, unknown> {
  return {
    id: 'v2.1',
    status: 'CURRENT',
    version: `2.${MAX_MINOR}`,
    min_version: `2.${MIN_MINOR}`,
    updated: '2013-07-23T11:33:21Z',
    links: [
      { rel: 'self', href: `${base}/v2.1/` },
      { rel: 'describedby', type: 'text/html', href: 'https://docs.openstack.org/' },
    ],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.compute+json;version=2.1' }],
  };
}

/** A flavor; `detail` false gives the list summary (id, name, links, description ≥ 2.55). */
export function renderFlavor(f: Flavor, v: number, base: string, detail: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { id: f.flavorid, name: f.name };
  if (detail) {
    Object.assign(out, {
      ram: f.ram,
      disk: f.disk,
      vcpus: f.vcpus,
      'OS-FLV-EXT-DATA:ephemeral': f.ephemeral,
      'OS-FLV-DISABLED:disabled': f.disabled,
      swap: f.swap === 0 && v < 75 ? '' : f.swap,
      rxtx_factor: f.rxtx_factor,
      'os-flavor-access:is_public': f.is_public,
    });
  }
  out.links = links(base, `flavors/${encodeURIComponent(f.flavorid)}`);
  if (v >= 55) out.description = f.description;
  if (detail && v >= 61) out.extra_specs = { ...f.extra_specs };
  return out;
}

/** A key pair as listed (`{keypair: {...}}` items), shown, or created. */
export function renderKeypair(
  k: Keypair,
  v: number,
  mode: 'list' | 'show' | 'create',
  privateKey: string | null = null,
): Record<string, unknown> {
  const out: Record<string, unknown> = { name: k.name, public_key: k.public_key, fingerprint: k.fingerprint };
  if (v >= 2) out.type = k.type;
  if (mode !== 'list') out.user_id = k.user_id;
  if (mode === 'show')
    Object.assign(out, { id: k.id, created_at: novaTime(k.created_at), updated_at: null, deleted_at: null, deleted: false });
  if (mode === 'create' && privateKey !== null) out.private_key = privateKey;
  return out;
}

/** A server as listed by `GET /servers` (id, name, links). */
export function renderServerSummary(view: ServerView, base: string): Record<string, unknown> {
  return { id: view.server.uuid, name: view.server.name, links: links(base, `servers/${view.server.uuid}`) };
}

function renderFault(f: ServerFault, admin: boolean): Record<string, unknown> {
  return { code: f.code, created: novaTime(f.created), message: f.message, ...(admin && f.details ? { details: f.details } : {}) };
}

/** A server in full (Nova's detailed view; see the module documentation). */
export function renderServer(view: ServerView, v: number, base: string): Record<string, unknown> {
  const { server: s, state, node } = view;
  const out: Record<string, unknown> = {
    id: s.uuid,
    name: s.name,
    status: state.status,
    tenant_id: s.project_id,
    user_id: s.user_id,
    metadata: { ...s.metadata },
    hostId: node === null ? '' : createHash('sha224').update(`${s.project_id}${node.uuid}`).digest('hex'),
    image: s.image_id === null ? '' : { id: s.image_id, links: [{ rel: 'bookmark', href: `${base}/images/${s.image_id}` }] },
    flavor:
      v >= 47
        ? {
            vcpus: s.flavor.vcpus,
            ram: s.flavor.ram,
            disk: s.flavor.disk,
            ephemeral: s.flavor.ephemeral,
            swap: s.flavor.swap,
            original_name: s.flavor.name,
            extra_specs: { ...s.flavor.extra_specs },
          }
        : { id: s.flavor.id, links: [{ rel: 'bookmark', href: `${base}/flavors/${encodeURIComponent(s.flavor.id)}` }] },
    created: novaTime(s.created_at),
    // The server changes when its node does (deploy, power): the latest of both.
    updated: novaTime(Math.max(s.updated_at ?? s.created_at, node?.updated_at ?? 0)),
    addresses: {},
    accessIPv4: '',
    accessIPv6: '',
    links: links(base, `servers/${s.uuid}`),
    'OS-DCF:diskConfig': 'MANUAL',
    'OS-EXT-AZ:availability_zone': 'nova',
    config_drive: 'True',
    key_name: s.key_name,
    'OS-SRV-USG:launched_at': LAUNCHED.has(state.status) ? novaTime(node?.provision_updated_at ?? null) : null,
    'OS-SRV-USG:terminated_at': s.deleted_at === null ? null : novaTime(s.deleted_at),
    'OS-EXT-STS:task_state': state.taskState,
    'OS-EXT-STS:vm_state': state.vmState,
    'OS-EXT-STS:power_state': state.powerState,
    'os-extended-volumes:volumes_attached': [],
    security_groups: [{ name: 'default' }],
  };
  if (state.status === 'BUILD' || state.status === 'ACTIVE' || state.status === 'REBUILD') out.progress = state.progress;
  if (state.fault !== null && (state.status === 'ERROR' || state.status === 'DELETED')) out.fault = renderFault(state.fault, view.admin);
  if (view.admin) {
    Object.assign(out, {
      'OS-EXT-SRV-ATTR:host': node === null ? null : 'esi',
      'OS-EXT-SRV-ATTR:instance_name': `instance-${s.id.toString(16).padStart(8, '0')}`,
      'OS-EXT-SRV-ATTR:hypervisor_hostname': node?.uuid ?? s.node_uuid,
    });
    if (v >= 3) {
      Object.assign(out, {
        'OS-EXT-SRV-ATTR:reservation_id': s.reservation_id,
        'OS-EXT-SRV-ATTR:launch_index': s.launch_index,
        'OS-EXT-SRV-ATTR:hostname': s.hostname,
        'OS-EXT-SRV-ATTR:kernel_id': '',
        'OS-EXT-SRV-ATTR:ramdisk_id': '',
        'OS-EXT-SRV-ATTR:root_device_name': null,
        'OS-EXT-SRV-ATTR:user_data': null,
      });
    }
    if (v >= 16) out.host_status = node === null ? '' : 'UP';
  }
  if (v >= 9) out.locked = false;
  if (v >= 19) out.description = s.description;
  if (v >= 26) out.tags = [];
  if (v >= 63) out.trusted_image_certificates = null;
  if (v >= 71) out.server_groups = [];
  if (v >= 73) out.locked_reason = null;
  if (view.showNode && node !== null) out['esi:node'] = node.uuid;
  return out;
}
