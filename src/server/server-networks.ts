/**
 * Networks for servers (the compute area's `ServerNetworks` port) over the networking
 * services, the way Nova's ironic driver uses Neutron for a bare-metal instance (VIF attach in
 * `spawn`, `nova/virt/ironic/driver.py` in https://opendev.org/openstack/nova):
 *
 * - `check`: every requested network (`{uuid}`) or port (`{port}`) must be visible to the
 *   caller (else 400 "could not be found", as Nova answers); `fixed_ip` is not supported (400);
 * - `attach`: for a network, a port is created on it in the caller's project (`device_owner`
 *   `compute:esi`, `device_id` = the server's UUID, named `<server uuid>-<network name>`); a
 *   requested port is used as it is; each is attached to the node as a VIF (the node's free NIC,
 *   whose switch port is programmed by the switch reconciler);
 * - `release`, with the conductor's service identity (a server delete may run from the sweep,
 *   without a caller), touches only ports of the server's own project: those whose `device_id`
 *   is the server (what `attach` created — `device_id` is writable by a port's owner, so a
 *   search across projects would let any project put its ports in another's server delete)
 *   and the ports the request named (`networks[].port`). Each is detached from the server's
 *   node if it is attached there; the ports esi created (`device_owner` `compute:esi`) are then
 *   deleted, the named ones kept (Nova keeps a pre-existing port and unbinds it).
 */
import type { AuthContext } from '../domain/auth.ts';
import type { RequestedNetwork, ServerNetworks, ServerNetworksOwner } from '../domain/compute/index.ts';
import { DEPLOY_SERVICE_CONTEXT } from '../domain/deploy/temp-url.ts';
import { InvalidInputError, NotFoundError } from '../domain/errors.ts';
import type { Networking } from '../domain/networking/index.ts';

/** The `device_owner` of ports esi creates for servers. */
export const SERVER_PORT_OWNER = 'compute:esi';
/** Baremetal API minor version of the VIF attaches made here (`port_uuid` targeting allowed). */
const VIF_API_MINOR = 82;

/** {@link ServerNetworks} over the networking services (see the module documentation). */
export function serverNetworksOver(networking: () => Networking): ServerNetworks {
  const all = { sort: [], limit: null, marker: null, pageReverse: false } as const;
  return {
    async check(ctx: AuthContext, networks: readonly RequestedNetwork[]): Promise<void> {
      for (const n of networks) {
        if (n.fixed_ip !== undefined)
          throw new InvalidInputError('Requesting a fixed IP for a bare-metal server is not supported; omit fixed_ip.');
        try {
          if (n.port !== undefined) await networking().ports.get(ctx, n.port);
          else if (n.uuid !== undefined) await networking().networks.get(ctx, n.uuid);
          else throw new InvalidInputError('Each requested network needs a "uuid" or a "port".');
        } catch (err) {
          // Nova answers a request naming an unknown network or port with 400, not 404.
          if (!(err instanceof NotFoundError)) throw err;
          throw new InvalidInputError(
            n.port !== undefined ? `Port id ${n.port} could not be found.` : `Network ${n.uuid} could not be found.`,
          );
        }
      }
    },

    async attach(ctx: AuthContext, nodeUuid: string, serverUuid: string, networks: readonly RequestedNetwork[]): Promise<string[]> {
      const ids: string[] = [];
      for (const n of networks) {
        let portId: string;
        if (n.port !== undefined) {
          portId = (await networking().ports.get(ctx, n.port)).port.id;
        } else {
          const { network } = await networking().networks.get(ctx, n.uuid!);
          const created = await networking().ports.create(ctx, {
            network_id: network.id,
            name: `${serverUuid}-${network.name || network.id}`,
            device_owner: SERVER_PORT_OWNER,
            device_id: serverUuid,
          });
          portId = created.port.id;
        }
        await networking().vifs.attach(ctx, nodeUuid, { id: portId }, VIF_API_MINOR);
        ids.push(portId);
      }
      return ids;
    },

    async release(nodeUuid: string, server: ServerNetworksOwner): Promise<void> {
      const ctx = DEPLOY_SERVICE_CONTEXT;
      const own = { project_id: [server.project_id] };
      const made = (await networking().ports.list(ctx, { ...all, filters: { ...own, device_id: [server.uuid] } })).items.map((v) => v.port);
      const named = new Set<string>();
      for (const n of server.networks) {
        if (n.port === undefined) continue;
        try {
          const { port } = await networking().ports.get(ctx, n.port);
          if (port.project_id === server.project_id) named.add(port.id);
        } catch (err) {
          // Deleted since: nothing to release.
          if (!(err instanceof NotFoundError)) throw err;
        }
      }
      for (const id of new Set([...made.map((p) => p.id), ...named])) {
        try {
          await networking().vifs.detach(ctx, nodeUuid, id);
        } catch (err) {
          // Not attached (any more): a lease end or the user detached it already.
          if (!(err instanceof InvalidInputError)) throw err;
        }
      }
      for (const p of made) if (p.device_owner === SERVER_PORT_OWNER && !named.has(p.id)) await networking().ports.delete(ctx, p.id);
    },
  };
}
