/**
 * Rendering of inventory objects in Ironic's JSON shapes (https://docs.openstack.org/api-ref/baremetal/,
 * `hide_fields_in_newer_versions` in Ironic 21.4 `ironic/api/controllers/v1/node.py`): fields hidden by microversion, ISO-8601 timestamps with microseconds and offset
 * (`2016-08-18T22:28:49.653000+00:00`), self/bookmark links on the public URL, legacy provision
 * state names for old versions, link lists on full nodes, collection envelopes with `next`.
 */
import type { Conductor, Port } from '../../domain/inventory/model.ts';
import { shownValue, type NodeView } from '../../domain/inventory/presentation.ts';
import { portFieldAllowed } from './microversion.ts';
import { NodeRenderCache } from './render-cache.ts';
import { isoTime, legacyState, links, nodeFieldsAt, NODE_TIME_FIELDS } from './render-fields.ts';
import type { DisplayView } from './node-document.ts';
import { nodeTextJson } from './render-text.ts';

export { isoTime, legacyState, links, nodeFieldsAt, type Links } from './render-fields.ts';

/** The value of one node field for the response. */
export function nodeValue(view: NodeView, field: string, version: number): unknown {
  if (field === 'conductor') return view.conductor ?? null;
  const v = shownValue(view, field as never);
  if (NODE_TIME_FIELDS.has(field)) return isoTime(v as number | null);
  if (field === 'provision_state') return legacyState(v, version);
  return v;
}

/**
 * A node in Ironic's shape.
 * @param fields fields to show (already version-checked), or null for all fields of the version,
 *   in which case the `ports`, `states` (≥1.14), `portgroups` (≥1.24) and `volume` (≥1.32) link
 *   lists are added
 */
export function renderNode(view: DisplayView, version: number, base: string, fields: readonly string[] | null): Record<string, unknown> {
  if (view.text !== undefined) return JSON.parse(nodeTextJson(view, view.text, version, base, fields)) as Record<string, unknown>;
  return renderNodeObject(view, version, base, fields);
}

/**
 * {@link renderNode} from `view.node` (a parsed node): the straightforward renderer, which the
 * text renderer (`render-text.ts`) must match byte for byte.
 */
export function renderNodeObject(view: NodeView, version: number, base: string, fields: readonly string[] | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields ?? nodeFieldsAt(version)) out[f] = nodeValue(view, f, version);
  const uuid = view.node.uuid;
  out.links = links(base, `nodes/${uuid}`);
  if (fields === null) {
    out.ports = links(base, `nodes/${uuid}/ports`);
    if (version >= 14) out.states = links(base, `nodes/${uuid}/states`);
    if (version >= 24) out.portgroups = links(base, `nodes/${uuid}/portgroups`);
    if (version >= 32) out.volume = links(base, `nodes/${uuid}/volume`);
  }
  return out;
}

/** `GET /v1/nodes/{id}/states` (raid configs from 1.12, boot mode from 1.75). */
export function renderStates(view: NodeView, version: number): Record<string, unknown> {
  const fields = [
    'console_enabled',
    'last_error',
    'power_state',
    'provision_state',
    'provision_updated_at',
    'target_power_state',
    'target_provision_state',
  ];
  if (version >= 12) fields.push('raid_config', 'target_raid_config');
  if (version >= 75) fields.push('boot_mode', 'secure_boot');
  const out: Record<string, unknown> = {};
  for (const f of fields) out[f] = nodeValue(view, f, version);
  return out;
}

const PORT_FIELDS = [
  'uuid',
  'address',
  'node_uuid',
  'portgroup_uuid',
  'extra',
  'internal_info',
  'local_link_connection',
  'pxe_enabled',
  'physical_network',
  'is_smartnic',
  'created_at',
  'updated_at',
];

/** Every port field shown at a version. */
export function portFieldsAt(version: number): string[] {
  return PORT_FIELDS.filter((f) => portFieldAllowed(f, version));
}

/** A port in Ironic's shape; `fields` already version-checked, null for all. */
export function renderPort(port: Port, version: number, base: string, fields: readonly string[] | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields ?? portFieldsAt(version)) {
    const v = (port as unknown as Record<string, unknown>)[f];
    out[f] = f === 'created_at' || f === 'updated_at' ? isoTime(v as number | null) : (v ?? null);
  }
  out.links = links(base, `ports/${port.uuid}`);
  return out;
}

/** A conductor (`GET /v1/conductors`); `drivers` only when `detail`. */
export function renderConductor(c: Conductor & { alive: boolean }, base: string, detail: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { hostname: c.hostname, conductor_group: c.conductor_group, alive: c.alive };
  if (detail) {
    out.drivers = [...c.drivers];
    out.created_at = isoTime(c.created_at);
    out.updated_at = isoTime(c.updated_at);
  }
  out.links = links(base, `conductors/${c.hostname}`);
  return out;
}

/** Where a page sits in its collection, to build the `next` link. */
export interface PageInfo {
  readonly limit: number;
  /** Marker of the last item (UUID, or hostname for conductors), null for an empty page. */
  readonly lastUuid: string | null;
  readonly base: string;
  /** Path of the collection below `/v1` (e.g. `nodes/detail`). */
  readonly resource: string;
  /** The `next` query prefix (see `nextArgs`), ending with `&` or empty. */
  readonly args: string;
  readonly suppressNext?: boolean;
}

/** The `next` link of a page of `count` items: present only when the page is full. */
export function nextLink(count: number, page: PageInfo): string | undefined {
  if (page.suppressNext || count === 0 || count !== page.limit || page.lastUuid === null) return undefined;
  return `${page.base}/v1/${page.resource}?${page.args}limit=${page.limit}&marker=${page.lastUuid}`;
}

/** A collection envelope `{<key>: items, next?}`. */
export function collection(key: string, items: unknown[], page: PageInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { [key]: items };
  const next = nextLink(items.length, page);
  if (next !== undefined) out.next = next;
  return out;
}

/**
 * The UTF-8 JSON of a full node (all fields of the version), from the render cache when this
 * exact rendering is there (see `NodeRenderCache`), else rendered — from the node's display
 * form when the view has one (`render-text.ts`) — and cached.
 */
export function fullNodeBody(view: DisplayView, version: number, base: string, cache: NodeRenderCache): Buffer {
  const key = NodeRenderCache.key(view, version);
  let body = cache.get(key);
  if (body === undefined) {
    body = Buffer.from(
      view.text !== undefined
        ? nodeTextJson(view, view.text, version, base, null)
        : JSON.stringify(renderNodeObject(view, version, base, null)),
    );
    cache.set(key, body);
  }
  return body;
}

/** A `{"nodes": [...], "next"?}` envelope from already-serialised node JSON texts. */
export function nodeCollectionJson(items: readonly string[], next: string | undefined): string {
  return `{"nodes":[${items.join(',')}]${next === undefined ? '' : `,"next":${JSON.stringify(next)}`}}`;
}

/**
 * {@link nodeCollectionJson} encoded as UTF-8 into one buffer: encoded items are copied, text
 * items are encoded in place (no intermediate buffer each). The buffer is sized for ASCII text
 * and grown when multi-byte text needs more.
 * @param written called with the index and the bytes of each text item right after it is
 *   encoded (a view of the buffer, valid during the call only: copy it to keep it)
 */
export function nodeCollectionBuffer(
  items: readonly (Buffer | string)[],
  next: string | undefined,
  written?: (index: number, bytes: Buffer) => void,
): Buffer {
  const head = '{"nodes":[';
  const tail = `]${next === undefined ? '' : `,"next":${JSON.stringify(next)}`}}`;
  const tailBytes = Buffer.byteLength(tail);
  let size = head.length + items.length + tailBytes;
  for (const item of items) size += item.length;
  let buf = Buffer.allocUnsafe(size);
  let off = buf.write(head, 0, 'latin1');
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    const room = buf.length - off - 1 - tailBytes;
    const bytes = typeof item !== 'string' ? item.length : room < item.length * 3 ? Buffer.byteLength(item) : 0;
    if (room < bytes) {
      const bigger = Buffer.allocUnsafe(Math.max(buf.length * 2, off + 1 + bytes + tailBytes));
      buf.copy(bigger, 0, 0, off);
      buf = bigger;
    }
    if (i > 0) buf[off++] = 0x2c; // ','
    if (typeof item !== 'string') off += item.copy(buf, off);
    else {
      const start = off;
      off += buf.write(item, off);
      written?.(i, buf.subarray(start, off));
    }
  }
  off += buf.write(tail, off);
  return buf.subarray(0, off);
}

/**
 * The encoded body of a node list page. Full nodes (`fields` null) come from the render cache,
 * and a page whose every node and `next` link is unchanged is served from the page cache.
 */
export function nodePage(
  views: readonly DisplayView[],
  version: number,
  base: string,
  fields: readonly string[] | null,
  next: string | undefined,
  cache: NodeRenderCache,
): Buffer | string {
  if (fields !== null) {
    return nodeCollectionJson(
      views.map((view) =>
        view.text !== undefined
          ? nodeTextJson(view, view.text, version, base, fields)
          : JSON.stringify(renderNodeObject(view, version, base, fields)),
      ),
      next,
    );
  }
  const keys = views.map((view) => NodeRenderCache.key(view, version));
  const pageKey = NodeRenderCache.pageKey(keys, next);
  let page = cache.getPage(pageKey);
  if (page === undefined) {
    // Cached renderings are copied; the others are rendered, encoded straight into the page,
    // and a copy of their bytes cached.
    let rendered = 0;
    const items = views.map((view, i) => {
      const cached = cache.get(keys[i]!);
      if (cached !== undefined) return cached;
      rendered++;
      return view.text !== undefined
        ? nodeTextJson(view, view.text, version, base, null)
        : JSON.stringify(renderNodeObject(view, version, base, null));
    });
    page = nodeCollectionBuffer(items, next, (i, bytes) => cache.set(keys[i]!, Buffer.from(bytes)));
    cache.setPage(pageKey, page);
    cache.notePage(views.length, rendered);
  } else {
    cache.notePage(views.length, 0);
  }
  return page;
}
