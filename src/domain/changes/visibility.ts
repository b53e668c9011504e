/**
 * Who sees which change of the live channel: pure rules, no I/O.
 *
 * - A caller with the `admin` role (a system-scoped admin token, or an admin token scoped to a
 *   project) sees every change.
 * - A project-scoped caller sees a change when its project is one of the change's projects
 *   (a node's owner or lessee, a lease's lessee or owner, an offer's owner, before or after the
 *   change), when the change names its project's subtree (`^<id>` of an offer's `lessee_id`: the
 *   project itself or one of its ancestors, as esi-leap's `check_offer_lessee`), or when the
 *   change is public (`*`: an offer without a `lessee_id`).
 * - Anyone else (anonymous, a system-scoped token without the admin role) sees nothing.
 *
 * A change only tells a viewer *that* a resource changed (`{kind, id, op, seq}`); what it may
 * see of the resource is decided again by the API's policy when it reads it.
 */
import type { AuthContext } from '../auth.ts';
import type { ChangeRecord } from './model.ts';

/** The caller of a live channel, as the visibility rules need it. */
export interface ChangeViewer {
  /** Sees every change (the admin role). */
  readonly all: boolean;
  /** The caller's project, or null without a project scope. */
  readonly projectId: string | null;
  /** The project's ancestors (nearest first), for subtree entries (`^<id>`). */
  readonly ancestors: readonly string[];
}

/** The token of a change visible to every project (a public offer). */
export const PUBLIC = '*';

/** The prefix of a token naming a project and its subtree. */
export const SUBTREE = '^';

/**
 * The viewer a caller is.
 * @param ancestors ancestor ids of the caller's project (empty without one)
 */
export function changeViewer(ctx: AuthContext, ancestors: readonly string[]): ChangeViewer {
  return {
    all: !ctx.anonymous && ctx.roles.includes('admin'),
    projectId: ctx.anonymous ? null : ctx.projectId,
    ancestors: ctx.projectId ? ancestors : [],
  };
}

/** True when `viewer` may be told of `change` (the rules of this module). */
export function seesChange(viewer: ChangeViewer, change: Pick<ChangeRecord, 'projects'>): boolean {
  if (viewer.all) return true;
  const project = viewer.projectId;
  if (project === null) return false;
  for (const token of change.projects) {
    if (token === project || token === PUBLIC) return true;
    if (token.startsWith(SUBTREE)) {
      const root = token.slice(SUBTREE.length);
      if (root === project || viewer.ancestors.includes(root)) return true;
    }
  }
  return false;
}
