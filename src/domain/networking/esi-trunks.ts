/**
 * `esi trunk list|create|add network|remove network|delete` as single server calls (esi's
 * endpoints under `/network/v2.0/esi/trunks`; python-esiclient's `esiclient/v1/trunk.py`,
 * https://github.com/CCI-MOC/python-esiclient).
 *
 * python-esiclient makes 2k+3 calls to create a trunk with k tagged networks (parent port,
 * per network a lookup and a sub-port, the trunk); here one request does it, with its port
 * names (`esi-<trunk>-<net>-trunk-port`, `esi-<trunk>-<net>-sub-port`) and sub-port VLANs
 * inherited from their networks. Ports of a previous run are found by name and reused, so a
 * re-run completes what is missing instead of failing. Removing a network removes and deletes
 * its sub-port; deleting a trunk deletes its parent and sub-ports too.
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError } from '../errors.ts';
import type { NetworkAccess } from './access.ts';
import type { Network, Trunk } from './model.ts';
import { NameResolver, subPortName, trunkPortName } from './names.ts';
import type { NetPortService } from './netports.ts';
import type { TrunkService } from './trunks.ts';

/**
 * A trunk as `esi trunk list` shows it: names of its ports and networks, each read as the
 * caller. Port ids are those of the Neutron trunk (`port_id`, `sub_ports`); a port name is null
 * when the caller may not see the port (`get_port`); networks the caller may not see
 * (`get_network`) are left out, so no other project's network id or name shows.
 */
export interface TrunkRow {
  readonly id: string;
  readonly name: string;
  readonly status: string;
  readonly port: { id: string; name: string | null };
  readonly sub_ports: ReadonlyArray<{ id: string; name: string | null; segmentation_id: number }>;
  /** Native network first, then the tagged ones; VLAN null when hidden from the caller. */
  readonly networks: ReadonlyArray<{ id: string; name: string; vlan: number | null; role: 'native' | 'tagged' }>;
}

/** The esi trunk endpoints; see the module documentation. */
export class EsiTrunkService {
  private readonly names: NameResolver;

  constructor(
    private readonly access: NetworkAccess,
    private readonly ports: NetPortService,
    private readonly trunks: TrunkService,
  ) {
    this.names = new NameResolver(access);
  }

  /** Rows for trunks the caller may see (batched reads; every port and network read as the caller). */
  async rows(ctx: AuthContext, trunks: readonly Trunk[]): Promise<TrunkRow[]> {
    const ports = await this.access.repo.portsByIds(trunks.flatMap((t) => [t.port_id, ...t.sub_ports.map((s) => s.port_id)]));
    const nets = await this.access.repo.networksByIds([...ports.values()].map((p) => p.network_id));
    const portName = (portId: string): string | null => {
      const p = ports.get(portId);
      const n = p ? nets.get(p.network_id) : undefined;
      return p && n && this.access.check('get_port', this.access.childTarget(p, n, ctx), ctx) ? p.name : null;
    };
    const net = (portId: string, role: 'native' | 'tagged') => {
      const n = nets.get(ports.get(portId)?.network_id ?? '');
      if (!n) return [];
      const target = this.access.networkTarget(n, ctx);
      if (!this.access.check('get_network', target, ctx)) return [];
      const vlan = this.access.check('get_network:provider:segmentation_id', target, ctx) ? n.segmentation_id : null;
      return [{ id: n.id, name: n.name, vlan, role }];
    };
    return trunks.map((t) => ({
      id: t.id,
      name: t.name,
      status: t.status,
      port: { id: t.port_id, name: portName(t.port_id) },
      sub_ports: t.sub_ports.map((s) => ({ id: s.port_id, name: portName(s.port_id), segmentation_id: s.segmentation_id })),
      networks: [...net(t.port_id, 'native'), ...t.sub_ports.flatMap((s) => net(s.port_id, 'tagged'))],
    }));
  }

  /** Every trunk the caller may see, as rows. */
  async list(ctx: AuthContext): Promise<TrunkRow[]> {
    const page = await this.trunks.list(ctx, {
      filters: {},
      sort: [{ key: 'name', dir: 'asc' }],
      limit: null,
      marker: null,
      pageReverse: false,
    });
    return this.rows(ctx, page.items);
  }

  /** The caller's port with a conventional name on a network, created when missing. */
  private async ownPort(ctx: AuthContext, name: string, network: Network): Promise<string> {
    const existing = (await this.names.ownPorts(ctx, name, network.id)).find((p) => p.bound_port_uuid === null);
    if (existing) return existing.id;
    return (await this.ports.create(ctx, { network_id: network.id, name })).port.id;
  }

  /**
   * Create a trunk (or complete one created before under that name).
   * @throws InvalidInputError (no native network), NotFoundError, ConflictError
   */
  async create(ctx: AuthContext, req: { name: string; native_network: string; tagged_networks?: readonly string[] }): Promise<TrunkRow> {
    if (typeof req.name !== 'string' || req.name === '') throw new InvalidInputError('A trunk name is required.');
    if (typeof req.native_network !== 'string' || req.native_network === '') throw new InvalidInputError('A native network is required.');
    const native = await this.names.network(ctx, req.native_network);
    const tagged = await Promise.all((req.tagged_networks ?? []).map((n) => this.names.network(ctx, n)));
    const existing = (
      await this.access.repo.listTrunks({
        filters: { name: [req.name], project_id: [ctx.projectId ?? ''] },
        visibleTo: null,
        sort: [],
        limit: null,
        markerId: null,
      })
    )[0];
    if (existing) {
      const parent = await this.access.repo.getPort(existing.port_id);
      if (parent?.network_id !== native.id)
        throw new ConflictError(`Trunk ${req.name} already exists with another native network.`, 'TrunkExists');
      return this.addNetworks(
        ctx,
        existing.id,
        tagged.map((n) => n.id),
      );
    }
    const parentId = await this.ownPort(ctx, trunkPortName(req.name, native.name), native);
    const subPorts = [];
    for (const n of tagged)
      subPorts.push({ port_id: await this.ownPort(ctx, subPortName(req.name, n.name), n), segmentation_type: 'inherit' });
    const trunk = await this.trunks.create(ctx, { name: req.name, port_id: parentId, sub_ports: subPorts });
    return (await this.rows(ctx, [trunk]))[0]!;
  }

  /**
   * Add tagged networks (sub-ports named by convention; networks already tagged are skipped).
   * @throws NotFoundError, ConflictError (VLAN already tagged)
   */
  async addNetworks(ctx: AuthContext, trunkIdent: string, networks: readonly string[]): Promise<TrunkRow> {
    const trunk = await this.names.trunk(ctx, trunkIdent);
    if (networks.length === 0) throw new InvalidInputError('Name at least one network to add.');
    const current = await this.access.repo.portsByIds(trunk.sub_ports.map((s) => s.port_id));
    const onTrunk = new Set([...current.values()].map((p) => p.network_id));
    const add = [];
    for (const ident of networks) {
      const n = await this.names.network(ctx, ident);
      if (onTrunk.has(n.id)) continue;
      onTrunk.add(n.id);
      add.push({ port_id: await this.ownPort(ctx, subPortName(trunk.name, n.name), n), segmentation_type: 'inherit' });
    }
    const updated = add.length === 0 ? trunk : await this.trunks.addSubPorts(ctx, trunk.id, { sub_ports: add });
    return (await this.rows(ctx, [updated]))[0]!;
  }

  /**
   * Remove tagged networks: their sub-ports leave the trunk and are deleted.
   * @throws InvalidInputError when a network is not on the trunk
   */
  async removeNetworks(ctx: AuthContext, trunkIdent: string, networks: readonly string[]): Promise<TrunkRow> {
    const trunk = await this.names.trunk(ctx, trunkIdent);
    if (networks.length === 0) throw new InvalidInputError('Name at least one network to remove.');
    const subs = await this.access.repo.portsByIds(trunk.sub_ports.map((s) => s.port_id));
    const remove: string[] = [];
    for (const ident of networks) {
      const n = await this.names.network(ctx, ident);
      const sp = [...subs.values()].find((p) => p.network_id === n.id);
      if (!sp) throw new InvalidInputError(`${ident} is not attached to trunk ${trunk.name}.`);
      remove.push(sp.id);
    }
    const updated = await this.trunks.removeSubPorts(ctx, trunk.id, { sub_ports: remove.map((port_id) => ({ port_id })) });
    for (const id of remove) await this.ports.delete(ctx, id);
    return (await this.rows(ctx, [updated]))[0]!;
  }

  /** Delete a trunk with its parent port and sub-ports. @throws ConflictError while attached */
  async delete(ctx: AuthContext, trunkIdent: string): Promise<void> {
    const trunk = await this.names.trunk(ctx, trunkIdent);
    await this.trunks.delete(ctx, trunk.id);
    for (const id of [trunk.port_id, ...trunk.sub_ports.map((s) => s.port_id)]) await this.ports.delete(ctx, id);
  }
}
