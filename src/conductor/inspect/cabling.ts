/**
 * The cabling an inspection learns from LLDP, checked as the caller that asked for the
 * inspection (issue 14, "switch ports are owned"; src/domain/networking/cabling.ts): the
 * inventory comes from the node itself — its ramdisk or its BMC, both in the hands of the node's
 * owner — so a `local_link_connection` it reports counts only as what the requester could have
 * written by hand. An admin's inspection registers the switch ports it finds to the node (the
 * operator trusts LLDP, as Ironic does); an owner's keeps only switch ports already registered
 * to the node. A refused one is left out of the port write and listed in the plugin data as
 * `local_link_connection_refused` (`{address, reason}`), so the operator sees what to register.
 */
import type { AuthContext } from '../../domain/auth.ts';
import { ConflictError, ForbiddenError } from '../../domain/errors.ts';
import type { InspectionPortPlan } from '../../domain/inspection/ports.ts';
import type { Node } from '../../domain/inventory/model.ts';
import type { SwitchPortGuard, SwitchPortHold } from '../../domain/inventory/ports.ts';
import { recordedRequester, type RequesterContexts } from '../../domain/inventory/requester.ts';

/** What checks an inspection's cabling (absent in processes without networking). */
export interface InspectionCabling {
  readonly guard: SwitchPortGuard;
  readonly requesters: RequesterContexts;
}

/** A plan whose cabling passed, the holds taken for it, and what was refused. */
export interface HeldPlan {
  readonly plan: InspectionPortPlan;
  /** One per port whose cabling names a managed switch port, by port UUID. */
  readonly holds: ReadonlyMap<string, SwitchPortHold>;
  readonly refused: readonly { readonly address: string; readonly reason: string }[];
}

/**
 * Check and hold the cabling of a plan as the inspection's requester.
 * @param addresses the MAC of each port the plan updates, by UUID (for the refusal list)
 * @throws whatever the guard throws besides a refusal (the inspection fails)
 */
export async function holdInspectedCabling(
  cabling: InspectionCabling | undefined,
  node: Pick<Node, 'uuid' | 'driver_internal_info'>,
  plan: InspectionPortPlan,
  addresses: ReadonlyMap<string, string>,
): Promise<HeldPlan> {
  if (cabling === undefined) return { plan, holds: new Map(), refused: [] };
  const requester = recordedRequester(node.driver_internal_info);
  const ctx: AuthContext | null = requester ? await cabling.requesters.contextOf(requester) : null;
  const holds = new Map<string, SwitchPortHold>();
  const refused: { address: string; reason: string }[] = [];
  const check = async (uuid: string, address: string, llc: Readonly<Record<string, string>> | undefined): Promise<boolean> => {
    if (llc === undefined || Object.keys(llc).length === 0) return true;
    try {
      if (ctx === null) throw new ForbiddenError('nobody with access to the node is recorded as having asked for this inspection');
      const hold = await cabling.guard.claim(ctx, node, uuid, llc);
      if (hold) holds.set(uuid, hold);
      return true;
    } catch (err) {
      if (!(err instanceof ForbiddenError) && !(err instanceof ConflictError)) throw err;
      refused.push({ address, reason: err.message });
      return false;
    }
  };
  try {
    const creates = [];
    for (const c of plan.creates)
      creates.push((await check(c.uuid, c.address, c.local_link_connection)) ? c : { ...c, local_link_connection: {} });
    const updates = [];
    for (const u of plan.updates) {
      if (await check(u.uuid, addresses.get(u.uuid) ?? '', u.local_link_connection)) updates.push(u);
      else if (u.pxe_enabled !== undefined) updates.push({ uuid: u.uuid, pxe_enabled: u.pxe_enabled });
    }
    return { plan: { creates, updates }, holds, refused };
  } catch (err) {
    for (const h of holds.values()) await h.abort();
    throw err;
  }
}
