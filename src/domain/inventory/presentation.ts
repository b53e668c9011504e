/**
 * What a caller may see of a node: field redaction by policy and secret masking.
 *
 * Source: Ironic 21.4 `_node_sanitize_extended` and `node_sanitize`
 * (`ironic/api/controllers/v1/node.py`): callers who fail `baremetal:node:get:filter_threshold` get `last_error`,
 * `reservation`, `driver_internal_info` and `driver_info` replaced by a redaction notice, each
 * only if they also fail that field's own policy (owners pass, lessees fail). Secret masking
 * applies to everyone on top (the `show_password` / `show_instance_secrets` rules are `!`).
 *
 * The redaction decision is a small bit mask computed once per node (and memoised per
 * owner/lessee pair within a list), so rendering never evaluates policy.
 */
import type { AuthContext } from '../auth.ts';
import type { Policy } from '../policy/types.ts';
import type { NodeField, NodeSlice } from './model.ts';
import { publicForm } from './public-forms.ts';

/** Redaction bits. */
export const REDACT_LAST_ERROR = 1;
export const REDACT_RESERVATION = 2;
export const REDACT_DRIVER_INTERNAL_INFO = 4;
export const REDACT_DRIVER_INFO = 8;

/** The notices Ironic 21.4 shows instead of redacted values. */
export const REDACTION_TEXT = Object.freeze({
  last_error: '** Value Redacted - Requires baremetal:node:get:last_error permission. **',
  reservation: '** Redacted - requires baremetal:node:get:reservation permission. **',
  driver_internal_info: '** Redacted - Requires baremetal:node:get:driver_internal_info permission. **',
  driver_info: '** Redacted - requires baremetal:node:get:driver_info permission. **',
});

/** A node (or part of one) together with what its caller may see of it. */
export interface NodeView {
  /** The node, or the part of it that was read. */
  readonly node: NodeSlice;
  /** Bit mask of `REDACT_*` flags for this caller. */
  readonly redaction: number;
  /** Hostname of the conductor serving the node, null for none; undefined when not computed. */
  readonly conductor?: string | null;
}

/** The flat policy target of a node (`node.owner`, `node.lessee`). */
export function nodeTarget(node: { owner: string | null; lessee: string | null }): Record<string, unknown> {
  return { 'node.owner': node.owner, 'node.lessee': node.lessee };
}

/**
 * Compute the redaction mask of a node for a caller.
 * @returns 0 when the caller passes `baremetal:node:get:filter_threshold`, else the fields whose
 *   own `baremetal:node:get:<field>` policy the caller fails
 */
export function redactionFor(policy: Policy, ctx: AuthContext, node: { owner: string | null; lessee: string | null }): number {
  const target = nodeTarget(node);
  if (policy.check('baremetal:node:get:filter_threshold', target, ctx)) return 0;
  let mask = 0;
  if (!policy.check('baremetal:node:get:last_error', target, ctx)) mask |= REDACT_LAST_ERROR;
  if (!policy.check('baremetal:node:get:reservation', target, ctx)) mask |= REDACT_RESERVATION;
  if (!policy.check('baremetal:node:get:driver_internal_info', target, ctx)) mask |= REDACT_DRIVER_INTERNAL_INFO;
  if (!policy.check('baremetal:node:get:driver_info', target, ctx)) mask |= REDACT_DRIVER_INFO;
  return mask;
}

/**
 * A per-request memo of {@link redactionFor} keyed by (owner, lessee): nodes of one owner and
 * lessee share the decision, so a list of 10,000 nodes evaluates policy a handful of times.
 */
export function redactionMemo(policy: Policy, ctx: AuthContext): (node: { owner: string | null; lessee: string | null }) => number {
  const memo = new Map<string, number>();
  return (node) => {
    const key = `${node.owner ?? ''}\u0000${node.lessee ?? ''}`;
    let m = memo.get(key);
    if (m === undefined) {
      m = redactionFor(policy, ctx, node);
      memo.set(key, m);
    }
    return m;
  };
}

/**
 * The value of one field as the caller may see it: redacted per the view's mask, secrets
 * masked (`driver_info`, `instance_info`, `driver_internal_info.agent_secret_token`, see
 * `publicForm`). Other fields are returned as stored (timestamps as epoch ms, null when unset).
 * Reads `view.node` only (a view's `text` is for the text renderer).
 */
export function shownValue(view: NodeView, field: NodeField): unknown {
  const n = view.node;
  switch (field) {
    case 'last_error':
      return view.redaction & REDACT_LAST_ERROR ? REDACTION_TEXT.last_error : (n.last_error ?? null);
    case 'reservation':
      return view.redaction & REDACT_RESERVATION ? REDACTION_TEXT.reservation : (n.reservation ?? null);
    case 'driver_internal_info':
      if (view.redaction & REDACT_DRIVER_INTERNAL_INFO) return { content: REDACTION_TEXT.driver_internal_info };
      return publicForm('driver_internal_info', n.driver_internal_info ?? {});
    case 'driver_info':
      if (view.redaction & REDACT_DRIVER_INFO) return { content: REDACTION_TEXT.driver_info };
      return publicForm('driver_info', n.driver_info ?? {});
    case 'instance_info':
      return publicForm('instance_info', n.instance_info ?? {});
    default: {
      const v = n[field];
      return v === undefined ? null : v;
    }
  }
}
