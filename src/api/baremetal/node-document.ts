/**
 * The display document of a node, owned here with the node renderer (./render-text.ts) and
 * the render cache (./render-cache.ts): the domain knows nothing of it, and the store keeps it
 * opaque — it writes what {@link NODE_DOCUMENT_CODEC} encodes for each node version and hands
 * it back (src/store/inventory/node-display.ts).
 *
 * {@link NodeText} is what any caller may see of a node before per-caller redaction — every
 * field as JSON text, `driver_info`, `driver_internal_info` and `instance_info` only in their
 * public (masked) form (src/domain/inventory/public-forms.ts). It holds no secret.
 *
 * Most fields are kept together as one text, {@link NodeText.members}: the JSON members
 * `"field":value` joined by `,` (the body of a JSON object), with {@link NodeText.offsets}, the
 * start of each member in it. The stored document is both, so that a list reads one column per
 * node instead of ~60, and the renderer copies runs of members into a response by offset,
 * without splitting or parsing anything. The two fields a conductor changes while it holds a
 * node (`reservation`, `updated_at`) are kept as plain values beside it, so taking and
 * releasing a node's lock does not rewrite the document.
 */
import { createHash } from 'node:crypto';
import type { JsonObject } from '../../domain/inventory/masking.ts';
import { NODE_FIELDS, type Node, type NodeField, type NodeSlice } from '../../domain/inventory/model.ts';
import type { NodeView } from '../../domain/inventory/presentation.ts';
import { isPublicFormField, publicForm, PUBLIC_FORMS_REVISION } from '../../domain/inventory/public-forms.ts';

/**
 * Characters of one offset in {@link NodeText.offsets} (base 32, digits then `a`–`v`): up to
 * 32^6 − 1 ≈ 1.07 G, beyond the longest string V8 can hold.
 */
export const OFFSET_WIDTH = 6;
const DIGITS = '0123456789abcdefghijklmnopqrstuv';

/** Node fields a node text carries as plain values rather than members. */
export const NODE_TEXT_VALUE_FIELDS: readonly NodeField[] = Object.freeze(['reservation', 'updated_at']);

/** The fields of {@link NodeText.members}, in their order (that of `NODE_FIELDS`). */
export const NODE_TEXT_MEMBER_FIELDS: readonly NodeField[] = Object.freeze(NODE_FIELDS.filter((f) => !NODE_TEXT_VALUE_FIELDS.includes(f)));

/**
 * The plain values kept beside a node's display document: what policy and the conductor mapping
 * read, and the columns a conductor changes while it holds the node.
 */
export interface NodeDocumentKeys {
  readonly id: number;
  readonly version: number;
  readonly uuid: string;
  readonly owner: string | null;
  readonly lessee: string | null;
  readonly driver: string;
  readonly conductor_group: string;
  readonly reservation: string | null;
  /** Epoch ms, null until the first update. */
  readonly updated_at: number | null;
}

/** A node in display form. */
export interface NodeText extends NodeDocumentKeys {
  /**
   * Every field of {@link NODE_TEXT_MEMBER_FIELDS}, in that order, as the JSON member
   * `"field":value` — the value as `JSON.stringify` writes the node's value (timestamps as
   * epoch-ms numbers, booleans, objects), the secret-bearing objects in their public form —
   * joined by `,`.
   */
  readonly members: string;
  /** Where each member starts in `members`: {@link OFFSET_WIDTH} base-32 digits a member (see {@link memberOffset}). */
  readonly offsets: string;
}

/** The JSON member of one field of a node, in display form. */
function member(node: Node, field: NodeField): string {
  const value: unknown = node[field];
  const shown = isPublicFormField(field) ? publicForm(field, (value ?? {}) as JsonObject) : value === undefined ? null : value;
  return `${JSON.stringify(field)}:${JSON.stringify(shown)}`;
}

/** An offset as {@link OFFSET_WIDTH} base-32 digits. */
function encodeOffset(n: number): string {
  let out = '';
  for (let k = 0; k < OFFSET_WIDTH; k++) {
    out = DIGITS[n % 32]! + out;
    n = Math.floor(n / 32);
  }
  return out;
}

/** The start of member `index` in {@link NodeText.members}, from {@link NodeText.offsets}. */
export function memberOffset(offsets: string, index: number): number {
  let n = 0;
  for (let k = index * OFFSET_WIDTH, end = k + OFFSET_WIDTH; k < end; k++) {
    const c = offsets.charCodeAt(k);
    n = n * 32 + (c <= 57 ? c - 48 : c - 87);
  }
  return n;
}

/** {@link NodeText.members} and {@link NodeText.offsets} of a full node; the node is not modified. */
export function nodeMembersOf(node: Node): { members: string; offsets: string } {
  const parts = NODE_TEXT_MEMBER_FIELDS.map((f) => member(node, f));
  let offsets = '';
  let at = 0;
  for (const part of parts) {
    offsets += encodeOffset(at);
    at += part.length + 1;
  }
  return { members: parts.join(','), offsets };
}

/** Length of the offsets at the head of a stored document. */
export const DOCUMENT_OFFSETS_LENGTH = NODE_TEXT_MEMBER_FIELDS.length * OFFSET_WIDTH;

/** The document the store keeps for a node: its offsets followed by its members. */
export function nodeDocumentOf(node: Node): string {
  const { members, offsets } = nodeMembersOf(node);
  return offsets + members;
}

/** The members and offsets of a stored document ({@link nodeDocumentOf}). */
export function splitDocument(document: string): { members: string; offsets: string } {
  return { members: document.slice(DOCUMENT_OFFSETS_LENGTH), offsets: document.slice(0, DOCUMENT_OFFSETS_LENGTH) };
}

/** A node's stored document with the plain values kept beside it (what the store hands back). */
export interface StoredNodeDocument extends NodeDocumentKeys {
  /** {@link nodeDocumentOf} of this version of the node. */
  readonly document: string;
}

/** The display form of a stored document. */
export function textOfDocument(d: StoredNodeDocument): NodeText {
  return {
    id: d.id,
    version: d.version,
    uuid: d.uuid,
    owner: d.owner,
    lessee: d.lessee,
    driver: d.driver,
    conductor_group: d.conductor_group,
    reservation: d.reservation,
    updated_at: d.updated_at,
    ...splitDocument(d.document),
  };
}

/** The display form of a full node: what the store returns for the same row. */
export function nodeTextOf(node: Node): NodeText {
  return {
    id: node.id,
    version: node.version,
    uuid: node.uuid,
    owner: node.owner,
    lessee: node.lessee,
    driver: node.driver,
    conductor_group: node.conductor_group,
    reservation: node.reservation,
    updated_at: node.updated_at,
    ...nodeMembersOf(node),
  };
}

/**
 * Fingerprint (16 hex digits) of the code that makes {@link NodeText.members}: the field list,
 * the serialisation and the public-form rules. A stored text made under another fingerprint —
 * an older or newer release — is not used (the store rebuilds it from the node's columns).
 */
export const NODE_TEXT_REVISION: string = createHash('sha256')
  .update(
    JSON.stringify([
      PUBLIC_FORMS_REVISION,
      NODE_TEXT_MEMBER_FIELDS,
      DIGITS,
      [member, encodeOffset, memberOffset, nodeMembersOf, nodeDocumentOf].map(String),
    ]),
  )
  .digest('hex')
  .slice(0, 16);

/**
 * A caller's view of a node, with the node in display form when it was read that way (the same
 * `version` as `node`, which is then its {@link textSlice}); renderers read its fields from the text.
 */
export type DisplayView = NodeView & { readonly text?: NodeText };

/** The slice a `NodeView` keeps as its `node` beside a node text: identity, ownership, version, the conductor mapping's inputs. */
export function textSlice(text: NodeText): NodeSlice {
  return {
    id: text.id,
    version: text.version,
    uuid: text.uuid,
    owner: text.owner,
    lessee: text.lessee,
    driver: text.driver,
    conductor_group: text.conductor_group,
  };
}

/**
 * What the store needs to keep node documents without knowing their format: the format's
 * revision (a document of another revision is rebuilt) and the encoder.
 */
export const NODE_DOCUMENT_CODEC: { readonly revision: string; encode(node: Node): string } = Object.freeze({
  revision: NODE_TEXT_REVISION,
  encode: nodeDocumentOf,
});
