/**
 * The L3 part of the networking area's ports (./ports.ts): the storage reads and writes of
 * routers and the ports they hold, the reads the dataplane reconciler lists, and the hook that
 * wakes it (the router list and the NICs of a network are in ./ports.ts, with the types they
 * use). `NetworkReads` and `NetworkTx` extend these, so
 * one repository (src/store/networking/) implements both.
 */
import type { Router, RouterGateway, RouterPort } from './model.ts';

/** Router columns a write may change (the gateway has its own write). */
export type RouterChanges = Partial<Pick<Router, 'name' | 'description' | 'admin_state_up' | 'status'>>;

/** Router, router-port and dataplane reads, on the root and inside a transaction. */
export interface L3Reads {
  getRouter(id: string): Promise<Router | null>;
  routersByIds(ids: readonly string[]): Promise<Map<string, Router>>;
  /** Number of routers of a project (the router quota). */
  countRouters(projectId: string): Promise<number>;
  /** The ports of a router, gateway first, then interfaces oldest first. */
  routerPorts(routerId: string): Promise<RouterPort[]>;
  /** The router port record of a network port, or null when no router holds it. */
  routerPortOf(portId: string): Promise<RouterPort | null>;
  /** Ids of the routers with a port (gateway or interface) on one of the networks. */
  routersOnNetworks(networkIds: readonly string[]): Promise<string[]>;
  /**
   * Ids of the routers that connect a subnet to an external network: gateway on the network,
   * an interface with an address in the subnet (what a floating IP association needs: Neutron's
   * `get_router_for_floatingip`).
   */
  routersBetween(externalNetworkId: string, subnetId: string): Promise<string[]>;
  /** Ids of every router (for the dataplane reconciler). */
  routerIds(): Promise<string[]>;
  /** Ids of the networks with at least one subnet with `enable_dhcp` (for the dataplane reconciler). */
  dhcpNetworkIds(): Promise<string[]>;
}

/** Router writes, inside `NetworkRepository.locked`. */
export interface L3Writes {
  /** Insert a router without a gateway (set it with {@link L3Writes.setRouterGateway}). */
  insertRouter(r: Omit<Router, 'gateway'>): Promise<void>;
  updateRouter(id: string, changes: RouterChanges, now: number): Promise<void>;
  /**
   * Set or clear a router's gateway: its network and SNAT mode, and the gateway port's router
   * port record (the port itself is written with the port writes, before).
   * @throws ConflictError when the port is already a router port
   */
  setRouterGateway(id: string, gateway: RouterGateway | null, now: number): Promise<void>;
  /** Delete a router and its router port records (its ports are deleted by the caller). */
  deleteRouter(id: string): Promise<void>;
  /** Record an interface port of a router. @throws ConflictError when the port is already a router port */
  insertRouterPort(rp: RouterPort, now: number): Promise<void>;
  /** Forget a router port record (the port is deleted by the caller). */
  deleteRouterPort(portId: string, now: number): Promise<void>;
}

/**
 * The dataplane reconciler's inbox (the intents of ./dataplane.ts, derived by ./intents.ts):
 * something recorded may have changed what a network's DHCP service or a router should do.
 * Never throws; a dropped wake-up is found by the reconciler's periodic pass.
 */
export interface DataplaneWake {
  /** The DHCP intent of this network may have changed (or it was deleted). */
  notifyDhcp(networkId: string): void;
  /** The intent of this router may have changed (or it was deleted). */
  notifyRouter(routerId: string): void;
  /**
   * A change whose networks are not known where it happened (a VIF bound or unbound, a trunk's
   * sub-ports changed: each wakes the switch reconciler too): re-derive every intent.
   */
  notifyAll(): void;
}
