/**
 * The floating-IP part of the networking area's storage port (./ports.ts): reads and writes of
 * floating IPs and their port forwardings (migration 0019); their list queries are in
 * ./ports.ts, with the types they use. `NetworkReads` and `NetworkTx` extend these, so one
 * repository (src/store/networking/) implements them with the rest.
 */
import type { FloatingIp, PortForwarding } from './model.ts';
import type { IdsOrEvery } from './id-sets.ts';

/** Floating IP columns a write may change (the address and its port never change). */
export type FloatingIpChanges = Partial<Pick<FloatingIp, 'description' | 'fixed_port_id' | 'fixed_ip_address' | 'router_id' | 'status'>>;

/** Port forwarding columns a write may change. */
export type PortForwardingChanges = Partial<
  Pick<PortForwarding, 'internal_port_id' | 'internal_ip_address' | 'protocol' | 'internal_port' | 'external_port' | 'description'>
>;

/** Floating IP and port forwarding reads, on the root and inside a transaction. */
export interface FipReads {
  getFloatingIp(id: string): Promise<FloatingIp | null>;
  /** Floating IPs by id (one query per chunk of ids); unknown ids are absent from the map. */
  floatingIpsByIds(ids: readonly string[]): Promise<Map<string, FloatingIp>>;
  /** Number of floating IPs of a project (the `floatingip` quota). */
  countFloatingIps(projectId: string): Promise<number>;
  /** The floating IPs associated with any of these ports (`fixed_port_id`; `'every'`: with any port), oldest first. */
  floatingIpsOfPorts(portIds: IdsOrEvery): Promise<FloatingIp[]>;
  /** The floating IPs a router serves (`router_id`), oldest first. */
  floatingIpsOfRouter(routerId: string): Promise<FloatingIp[]>;

  getPortForwarding(id: string): Promise<PortForwarding | null>;
  /** The port forwardings of floating IPs, by floating IP, oldest first (one query per chunk). */
  portForwardingsOf(fipIds: readonly string[]): Promise<Map<string, PortForwarding[]>>;
  /** The port forwardings whose internal port is one of these (`'every'`: all of them), by id. */
  portForwardingsOfPorts(portIds: IdsOrEvery): Promise<PortForwarding[]>;
}

/** Floating IP and port forwarding writes, inside `NetworkRepository.locked`. */
export interface FipWrites {
  /**
   * Insert a floating IP (its port is inserted before, with the port writes).
   * @throws ConflictError (`FloatingIPPortAlreadyAssociated`) when the fixed IP already has a
   *   floating IP on the network (unique index)
   */
  insertFloatingIp(f: FloatingIp): Promise<void>;
  /**
   * Change a floating IP; bumps its revision.
   * @throws ConflictError (`FloatingIPPortAlreadyAssociated`) as {@link FipWrites.insertFloatingIp}
   */
  updateFloatingIp(id: string, changes: FloatingIpChanges, now: number): Promise<void>;
  /** Delete a floating IP and its port forwardings (its port is deleted by the caller, after). */
  deleteFloatingIp(id: string): Promise<void>;

  /**
   * Insert a port forwarding; bumps its floating IP's revision.
   * @throws ConflictError (`PortForwardingExists`) for a duplicate of Neutron's unique keys
   */
  insertPortForwarding(pf: PortForwarding): Promise<void>;
  /** Change a port forwarding; bumps its floating IP's revision. @throws ConflictError as on insert */
  updatePortForwarding(id: string, changes: PortForwardingChanges, now: number): Promise<void>;
  /** Delete a port forwarding; bumps its floating IP's revision. */
  deletePortForwarding(id: string, now: number): Promise<void>;
}
