/**
 * Fencing of a conductor's node writes (issue 21): a conductor writes a node's results only
 * while its `reservation` still names this conductor. A conductor that was paused (SIGSTOP, a
 * stalled VM, a lost database connection) for longer than its dead-after finds on resuming that
 * the others took its nodes over; its tasks still in flight must not then write over what the
 * taker recorded. Each `applyConductorResult` is therefore conditional on the reservation (one
 * SQL write, `… AND reservation = <host>`), and a write that finds the node held by someone else,
 * or by nobody, throws {@link NodeLockLost}: the task stops there, before its next step.
 */
import type { NodeRepository } from '../domain/inventory/ports.ts';

/** This conductor no longer holds the node it was writing (it was taken over). */
export class NodeLockLost extends Error {
  /**
   * @param node the node's UUID
   * @param host this conductor
   */
  constructor(
    readonly node: string,
    readonly host: string,
  ) {
    super(`conductor ${host} no longer holds node ${node} (taken over while this conductor was silent); its task stops`);
    this.name = 'NodeLockLost';
  }
}

/**
 * `nodes` as conductor `host` writes them: `applyConductorResult` only while `host` holds the
 * node's reservation (see the module documentation); every other method unchanged.
 * @throws NodeLockLost (from `applyConductorResult`) when the node exists but `host` does not hold it
 */
export function fencedNodes(nodes: NodeRepository, host: string): NodeRepository {
  const apply: NodeRepository['applyConductorResult'] = async (uuid, changes, now) => {
    const node = await nodes.applyConductorResult(uuid, changes, now, host);
    if (node === null && (await nodes.get(uuid)) !== null) throw new NodeLockLost(uuid, host);
    return node;
  };
  return new Proxy(nodes, {
    get(target, prop) {
      if (prop === 'applyConductorResult') return apply;
      const v: unknown = Reflect.get(target, prop);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
