/**
 * esi's additions to the network API (additive endpoints, not in Neutron; docs/networking.md):
 *
 * | route | what |
 * |-------|------|
 * | `GET /v2.0/esi/node-networks[?node=&network=]` | `esi node network list` in one call: rows with networks, floating IP and floating network; with `node` (`esi node network show`) also `node: {uuid, name}` |
 * | `POST /v2.0/esi/node-networks` `{node, network|port|trunk, mac_address?}` | `esi node network attach` |
 * | `POST /v2.0/esi/node-networks/detach` `{node, ports?, all?}` | `esi node network detach` |
 * | `GET /v2.0/esi/trunks`, `POST /v2.0/esi/trunks` `{name, native_network, tagged_networks?}` | `esi trunk list|create` |
 * | `POST /v2.0/esi/trunks/{trunk}/add-networks` / `remove-networks` `{tagged_networks}` | `esi trunk add|remove network` |
 * | `DELETE /v2.0/esi/trunks/{trunk}` | `esi trunk delete` (ports too) |
 * | `GET /v2.0/esi/switch-ports?switch=` | `esi switch port list` |
 * | `GET|POST /v2.0/switches`, `GET|PUT|DELETE /v2.0/switches/{switch}` | switch administration |
 * | `POST /v2.0/switches/{switch}/resync`, `GET /v2.0/switches/{switch}/ports` | resync; port states |
 * | `POST /v2.0/switches/{switch}/ports` `{switch_port: {port_id, node}}` | register a switch port to a node (`esi switch port register`) |
 * | `DELETE /v2.0/switches/{switch}/ports/{port_id}` | unregister it (port id URL-encoded) |
 */
import type { FastifyInstance } from 'fastify';
import { InvalidInputError } from '../../domain/errors.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import type { NetworkApiDeps } from './deps.ts';
import { renderNodeNetwork, renderSwitch, renderSwitchPort, renderTrunkRow } from './render.ts';
import { refuseOthers } from './routes-neutron.ts';
import { queryPairs } from '../common/query.ts';
import { unwrap } from './wire.ts';
import {
  EsiTrunkCreateBody,
  EsiTrunkNetworksBody,
  NodeNetworkAttachBody,
  NodeNetworkDetachBody,
  parseEsiBody,
  SwitchCreateAttrs,
  SwitchCreateBody,
  SwitchPortRegisterAttrs,
  SwitchPortRegisterBody,
  SwitchUpdateAttrs,
  SwitchUpdateBody,
} from './esi-bodies.ts';
import { checkNeutronBody } from './action-bodies.ts';
import {
  EsiTrunkCollection,
  EsiTrunkResponse,
  NodeNetworkCollection,
  NodeNetworkDetachResponse,
  NodeNetworkResponse,
  SwitchCollection,
  SwitchPortCollection,
  SwitchPortResponse,
  SwitchPortRowCollection,
  SwitchResponse,
  SwitchResyncResponse,
} from './response-schemas-extra.ts';

/** The query parameters `GET /esi/node-networks` reads: a node (then its networks), a network. */
export const NODE_NETWORK_QUERY = ['node', 'network'] as const;
/** The query parameter `GET /esi/switch-ports` reads: the switch (required). */
export const SWITCH_PORT_QUERY = ['switch'] as const;

/** Register the esi and switch routes on the `/v2.0` plugin. */
export function registerEsiRoutes(app: FastifyInstance, services: NetworkApiDeps): void {
  const n = services.networking;
  type Ident = { Params: { ident: string } };

  app.get(
    '/esi/node-networks',
    { config: { doc: routeDoc({ query: queryDoc(NODE_NETWORK_QUERY), response: NodeNetworkCollection }) } },
    async (req) => {
      const q = queryPairs(req);
      const [nodeName, networkName] = NODE_NETWORK_QUERY;
      const node = q.get(nodeName) || undefined;
      const network = q.get(networkName) || undefined;
      if (node === undefined)
        return { node_networks: (await n.nodeNetworks.list(req.auth, network ? { network } : {})).map(renderNodeNetwork) };
      const shown = await n.nodeNetworks.show(req.auth, node, network);
      return { node: { uuid: shown.node.uuid, name: shown.node.name }, node_networks: shown.rows.map(renderNodeNetwork) };
    },
  );
  app.post(
    '/esi/node-networks',
    { config: { doc: routeDoc({ body: NodeNetworkAttachBody, response: NodeNetworkResponse }) } },
    async (req) => {
      const b = parseEsiBody(NodeNetworkAttachBody, req.body);
      const row = await n.nodeNetworks.attach(req.auth, {
        node: b.node,
        ...(typeof b.network === 'string' ? { network: b.network } : {}),
        ...(typeof b.port === 'string' ? { port: b.port } : {}),
        ...(typeof b.trunk === 'string' ? { trunk: b.trunk } : {}),
        ...(typeof b.mac_address === 'string' ? { mac_address: b.mac_address } : {}),
      });
      return { node_network: renderNodeNetwork(row) };
    },
  );
  app.post(
    '/esi/node-networks/detach',
    { config: { doc: routeDoc({ body: NodeNetworkDetachBody, response: NodeNetworkDetachResponse }) } },
    async (req) => {
      const b = parseEsiBody(NodeNetworkDetachBody, req.body);
      return { detached: await n.nodeNetworks.detach(req.auth, { node: b.node, ports: b.ports ?? [], all: b.all === true }) };
    },
  );
  refuseOthers(app, '/esi/node-networks', ['GET', 'POST']);
  refuseOthers(app, '/esi/node-networks/detach', ['POST']);

  app.get('/esi/trunks', { config: { doc: routeDoc({ response: EsiTrunkCollection, noQuery: true }) } }, async (req) => ({
    trunks: (await n.esiTrunks.list(req.auth)).map(renderTrunkRow),
  }));
  app.post('/esi/trunks', { config: { doc: routeDoc({ body: EsiTrunkCreateBody, response: EsiTrunkResponse }) } }, async (req, reply) => {
    const b = parseEsiBody(EsiTrunkCreateBody, req.body);
    const row = await n.esiTrunks.create(req.auth, {
      name: b.name ?? '',
      native_network: b.native_network ?? '',
      tagged_networks: b.tagged_networks ?? [],
    });
    return reply.code(201).send({ trunk: renderTrunkRow(row) });
  });
  const networksDoc = { config: { doc: routeDoc({ body: EsiTrunkNetworksBody, response: EsiTrunkResponse }) } };
  app.post<Ident>('/esi/trunks/:ident/add-networks', networksDoc, async (req) => ({
    trunk: renderTrunkRow(
      await n.esiTrunks.addNetworks(req.auth, req.params.ident, parseEsiBody(EsiTrunkNetworksBody, req.body).tagged_networks ?? []),
    ),
  }));
  app.post<Ident>('/esi/trunks/:ident/remove-networks', networksDoc, async (req) => ({
    trunk: renderTrunkRow(
      await n.esiTrunks.removeNetworks(req.auth, req.params.ident, parseEsiBody(EsiTrunkNetworksBody, req.body).tagged_networks ?? []),
    ),
  }));
  app.delete<Ident>('/esi/trunks/:ident', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (req, reply) => {
    await n.esiTrunks.delete(req.auth, req.params.ident);
    return reply.code(204).send();
  });
  refuseOthers(app, '/esi/trunks', ['GET', 'POST']);
  refuseOthers(app, '/esi/trunks/:ident', ['DELETE']);

  app.get(
    '/esi/switch-ports',
    { config: { doc: routeDoc({ query: queryDoc(SWITCH_PORT_QUERY), response: SwitchPortRowCollection }) } },
    async (req) => {
      const name = queryPairs(req).get(SWITCH_PORT_QUERY[0]);
      if (!name) throw new InvalidInputError('switch is required (its name or switch_id, as bare-metal ports name it).', 'HTTPBadRequest');
      return {
        switch_ports: (await n.nodeNetworks.switchPorts(req.auth, name)).map((p) => ({ port: p.port, ...renderNodeNetwork(p.row) })),
      };
    },
  );
  refuseOthers(app, '/esi/switch-ports', ['GET']);

  app.get('/switches', { config: { doc: routeDoc({ response: SwitchCollection, noQuery: true }) } }, async (req) => ({
    switches: (await n.switches.list(req.auth)).map((s) => renderSwitch(n.switches.masked(s))),
  }));
  app.post('/switches', { config: { doc: routeDoc({ body: SwitchCreateBody, response: SwitchResponse }) } }, async (req, reply) => {
    const attrs = unwrap(req.body, 'switch', 'switches');
    const body = checkNeutronBody(SwitchCreateAttrs, attrs, () => n.switches.newSwitch(attrs));
    return reply.code(201).send({ switch: renderSwitch(n.switches.masked(await n.switches.create(req.auth, body))) });
  });
  app.get<Ident>('/switches/:ident', { config: { doc: routeDoc({ response: SwitchResponse, noQuery: true }) } }, async (req) => ({
    switch: renderSwitch(n.switches.masked(await n.switches.get(req.auth, req.params.ident))),
  }));
  app.put<Ident>('/switches/:ident', { config: { doc: routeDoc({ body: SwitchUpdateBody, response: SwitchResponse }) } }, async (req) => {
    const attrs = unwrap(req.body, 'switch', 'switches');
    const sw = await n.switches.get(req.auth, req.params.ident);
    const body = checkNeutronBody(SwitchUpdateAttrs, attrs, () => n.switches.changesOf(sw, attrs));
    return { switch: renderSwitch(n.switches.masked(await n.switches.update(req.auth, req.params.ident, body))) };
  });
  app.delete<Ident>('/switches/:ident', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (req, reply) => {
    await n.switches.delete(req.auth, req.params.ident);
    return reply.code(204).send();
  });
  app.post<Ident>(
    '/switches/:ident/resync',
    { config: { doc: routeDoc({ noBody: true, response: SwitchResyncResponse }) } },
    async (req) => ({ resynced: await n.switches.resync(req.auth, req.params.ident) }),
  );
  app.get<Ident>(
    '/switches/:ident/ports',
    { config: { doc: routeDoc({ response: SwitchPortCollection, noQuery: true }) } },
    async (req) => ({
      switch_ports: (await n.switches.ports(req.auth, req.params.ident)).map(renderSwitchPort),
    }),
  );
  const registerDoc = { config: { doc: routeDoc({ body: SwitchPortRegisterBody, response: SwitchPortResponse }) } };
  app.post<Ident>('/switches/:ident/ports', registerDoc, async (req, reply) => {
    const b = parseEsiBody(SwitchPortRegisterAttrs, unwrap(req.body, 'switch_port', 'switch_ports'));
    const portId = b.port_id;
    const node = b.node;
    if (!portId || !node) throw new InvalidInputError('port_id and node are required.', 'HTTPBadRequest');
    const sw = await n.switches.get(req.auth, req.params.ident);
    await n.cabling.register(req.auth, sw, portId, node);
    n.wake.notifySwitch(sw.id);
    const view = (await n.switches.ports(req.auth, sw.id)).find((p) => p.port_id === portId)!;
    return reply.code(201).send({ switch_port: renderSwitchPort(view) });
  });
  app.delete<{ Params: { ident: string; port: string } }>(
    '/switches/:ident/ports/:port',
    { config: { doc: routeDoc({ answer: 'empty' }) } },
    async (req, reply) => {
      const sw = await n.switches.get(req.auth, req.params.ident);
      await n.cabling.unregister(req.auth, sw, req.params.port);
      n.wake.notifySwitch(sw.id);
      return reply.code(204).send();
    },
  );
  refuseOthers(app, '/switches', ['GET', 'POST']);
  refuseOthers(app, '/switches/:ident', ['GET', 'PUT', 'DELETE']);
  refuseOthers(app, '/switches/:ident/resync', ['POST']);
  refuseOthers(app, '/switches/:ident/ports', ['GET', 'POST']);
  refuseOthers(app, '/switches/:ident/ports/:port', ['DELETE']);
}
