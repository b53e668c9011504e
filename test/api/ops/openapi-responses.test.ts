/**
 * The documented answers (src/api/<service>/response-schemas.ts, in `/openapi.json` through each
 * route's `config.doc.response`) compared with real answers: an owner's node with a port,
 * offered and leased to a lessee (lease active), networks and ports in Neutron, images in Glance
 * (Nova's in openapi-responses-compute.test.ts);
 * each read as admin, owner and lessee, and each create and update, is checked against the
 * documented schema with TypeBox's `Value.Check`. The schemas are strict where the wire format
 * is fixed, so an answer with a field the schema does not know, or without one it requires,
 * fails here.
 */
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, ManualClock, startTestServer, type Persona, type Personas, type TestServer } from '../../helpers/harness.ts';
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import {
  NodeCollection,
  NodeDetailCollection,
  NodeResponse,
  PortCollection,
  PortDetailCollection,
  PortResponse,
} from '../../../src/api/baremetal/response-schemas.ts';
import {
  LeaseCollection,
  LeaseNodeCollection,
  LeaseResponse,
  OfferCollection,
  OfferResponse,
} from '../../../src/api/lease/response-schemas.ts';
import {
  FlavorDetailCollection,
  KeypairCreateResponse,
  KeypairResponse,
  ServerCreateResponse,
  ServerDetailCollection,
  ServerResponse,
} from '../../../src/api/compute/response-schemas.ts';
import {
  FLOATINGIP_RESPONSES,
  NETWORK_RESPONSES,
  PORT_RESPONSES,
  ROUTER_RESPONSES,
  SUBNET_RESPONSES,
  TRUNK_RESPONSES,
} from '../../../src/api/network/response-schemas.ts';
import { ImageCollection, ImageResponse } from '../../../src/api/image/response-schemas.ts';
import { asDocumented, expectValid } from './openapi-support.ts';

const T0 = Date.UTC(2030, 0, 1, 12);
const HOUR = 3_600_000;
const IRONIC = { 'x-openstack-ironic-api-version': '1.82' };
const PATCH_TYPE = 'application/openstack-images-v2.1-json-patch';

let ts: TestServer;
let p: Personas;
/** What the world holds: ids of the node, its port, the offer, the lease, a network, a port, an image. */
const w = { node: '', port: '', offer: '', lease: '', network: '', nport: '', image: '' };

/** An answer that must succeed, as parsed JSON. */
async function ok(who: Persona, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<unknown> {
  const r = await call(ts, who, method, url, body, headers);
  expect(r.status, `${who.name} ${method} ${url}: ${r.text}`).toBeLessThan(300);
  return r.body;
}

beforeAll(async () => {
  const clock = new ManualClock(T0);
  ts = await startTestServer({ clock, env: { ESI_TOKEN_TTL: String(7 * 24 * 3600) } });
  p = await createPersonas(ts);
  const node = (await ok(
    p.admin,
    'POST',
    '/baremetal/v1/nodes',
    { driver: 'fake-hardware', name: 'doc-r1', owner: p.owner.projectId },
    IRONIC,
  )) as {
    uuid: string;
  };
  w.node = node.uuid;
  w.port = (
    (await ok(p.admin, 'POST', '/baremetal/v1/ports', { address: '52:54:00:12:34:56', node_uuid: w.node }, IRONIC)) as { uuid: string }
  ).uuid;
  const offer = (await ok(p.owner, 'POST', '/lease/v1/offers', {
    resource_uuid: w.node,
    start_time: formatLeaseTime(T0),
    end_time: formatLeaseTime(T0 + 4 * HOUR),
  })) as { uuid: string };
  w.offer = offer.uuid;
  const lease = (await ok(p.lessee, 'POST', `/lease/v1/offers/${w.offer}/claim`, {
    start_time: formatLeaseTime(T0),
    end_time: formatLeaseTime(T0 + 2 * HOUR),
  })) as { uuid: string };
  w.lease = lease.uuid;
  clock.advance(1000);
  await ts.server.services.leaseManager.runDue();
  const net = (await ok(p.lessee, 'POST', '/network/v2.0/networks', { network: { name: 'doc-net' } })) as { network: { id: string } };
  w.network = net.network.id;
  await ok(p.lessee, 'POST', '/network/v2.0/subnets', { subnet: { network_id: w.network, cidr: '10.9.0.0/24' } });
  const port = (await ok(p.lessee, 'POST', '/network/v2.0/ports', { port: { network_id: w.network, name: 'doc-port' } })) as {
    port: { id: string };
  };
  w.nport = port.port.id;
  const image = (await ok(p.admin, 'POST', '/image/v2/images', {
    name: 'doc-image',
    disk_format: 'raw',
    container_format: 'bare',
    visibility: 'public',
    os_distro: 'debian',
  })) as { id: string };
  w.image = image.id;
});
afterAll(async () => ts?.close());

describe('documented answers match real ones', () => {
  it('baremetal: nodes and ports (list, detail, show) as admin, owner and lessee, at the newest microversion', async () => {
    for (const who of [p.admin, p.owner, p.lessee]) {
      const cases: Array<[string, TSchema]> = [
        ['/baremetal/v1/nodes', NodeCollection],
        ['/baremetal/v1/nodes/detail', NodeDetailCollection],
        [`/baremetal/v1/nodes/${w.node}`, NodeResponse],
        ['/baremetal/v1/ports', PortCollection],
        ['/baremetal/v1/ports/detail', PortDetailCollection],
        [`/baremetal/v1/ports/${w.port}`, PortResponse],
        ['/baremetal/v1/nodes?limit=1', NodeCollection],
      ];
      for (const [url, schema] of cases) {
        const body = await ok(who, 'GET', url, undefined, IRONIC);
        expectValid(schema, body, `${who.name} GET ${url}`);
        if (url.includes('/nodes')) expect(JSON.stringify(body), `${who.name} sees the node`).toContain(w.node);
      }
    }
  });

  it('baremetal: a created and an updated node, and a created port', async () => {
    const created = (await ok(p.admin, 'POST', '/baremetal/v1/nodes', { driver: 'fake-hardware', owner: p.owner.projectId }, IRONIC)) as {
      uuid: string;
    };
    expectValid(NodeResponse, created, 'POST /nodes');
    const patched = await ok(
      p.owner,
      'PATCH',
      `/baremetal/v1/nodes/${created.uuid}`,
      [{ op: 'add', path: '/description', value: 'd' }],
      IRONIC,
    );
    expectValid(NodeResponse, patched, 'PATCH /nodes/{ident}');
    const port = await ok(p.admin, 'POST', '/baremetal/v1/ports', { address: '52:54:00:aa:bb:01', node_uuid: created.uuid }, IRONIC);
    expectValid(PortResponse, port, 'POST /ports');
  });

  it('lease: offers and leases (list, show) as admin, owner and lessee; a new offer, a claim and an extended lease', async () => {
    for (const who of [p.admin, p.owner, p.lessee]) {
      expectValid(OfferCollection, await ok(who, 'GET', '/lease/v1/offers'), `${who.name} offers`);
      expectValid(OfferResponse, await ok(who, 'GET', `/lease/v1/offers/${w.offer}`), `${who.name} offer`);
      const leases = await ok(who, 'GET', `/lease/v1/leases${who === p.admin ? '?view=all' : ''}`);
      expectValid(LeaseCollection, leases, `${who.name} leases`);
      expect(JSON.stringify(leases)).toContain(w.lease);
      expectValid(LeaseResponse, await ok(who, 'GET', `/lease/v1/leases/${w.lease}`), `${who.name} lease`);
    }
    const window = { start_time: formatLeaseTime(T0 + 10 * HOUR), end_time: formatLeaseTime(T0 + 12 * HOUR) };
    const offer = (await ok(p.owner, 'POST', '/lease/v1/offers', { resource_uuid: w.node, name: 'later', ...window })) as { uuid: string };
    expectValid(OfferResponse, offer, 'POST /offers');
    const claimed = (await ok(p.lessee, 'POST', `/lease/v1/offers/${offer.uuid}/claim`, window)) as { uuid: string };
    expectValid(LeaseResponse, claimed, 'POST /offers/{ident}/claim');
    const direct = await ok(p.owner, 'POST', '/lease/v1/leases', {
      resource_uuid: w.node,
      project_id: p.lessee.projectId,
      start_time: formatLeaseTime(T0 + 20 * HOUR),
      end_time: formatLeaseTime(T0 + 21 * HOUR),
    });
    expectValid(LeaseResponse, direct, 'POST /leases');
    const extended = await ok(p.admin, 'PATCH', `/lease/v1/leases/${(direct as { uuid: string }).uuid}`, {
      end_time: formatLeaseTime(T0 + 22 * HOUR),
    });
    expectValid(LeaseResponse, extended, 'PATCH /leases/{ident}');
  });

  it('lease: nodes as admin, owner and lessee', async () => {
    for (const who of [p.admin, p.owner, p.lessee]) {
      const nodes = await ok(who, 'GET', '/lease/v1/nodes');
      expectValid(LeaseNodeCollection, nodes, `${who.name} nodes`);
      expect(JSON.stringify(nodes), who.name).toContain(w.node);
    }
  });

  it('network: networks and ports (list, show) as admin (with provider and binding attributes), owner and lessee; create and update', async () => {
    for (const who of [p.admin, p.owner, p.lessee]) {
      expectValid(NETWORK_RESPONSES.list, await ok(who, 'GET', '/network/v2.0/networks'), `${who.name} networks`);
      expectValid(PORT_RESPONSES.list, await ok(who, 'GET', '/network/v2.0/ports'), `${who.name} ports`);
    }
    for (const who of [p.admin, p.lessee]) {
      const net = (await ok(who, 'GET', `/network/v2.0/networks/${w.network}`)) as { network: Record<string, unknown> };
      expectValid(NETWORK_RESPONSES.one, net, `${who.name} network`);
      expect('provider:network_type' in net.network, who.name).toBe(who === p.admin);
      const port = (await ok(who, 'GET', `/network/v2.0/ports/${w.nport}`)) as { port: Record<string, unknown> };
      expectValid(PORT_RESPONSES.one, port, `${who.name} port`);
      expect('binding:host_id' in port.port, who.name).toBe(who === p.admin);
    }
    const created = (await ok(p.owner, 'POST', '/network/v2.0/networks', { network: { name: 'doc-owner-net' } })) as {
      network: { id: string };
    };
    expectValid(NETWORK_RESPONSES.one, created, 'POST /networks');
    expectValid(
      NETWORK_RESPONSES.one,
      await ok(p.owner, 'PUT', `/network/v2.0/networks/${created.network.id}`, { network: { mtu: 1400 } }),
      'PUT',
    );
    const port = (await ok(p.owner, 'POST', '/network/v2.0/ports', { port: { network_id: created.network.id } })) as {
      port: { id: string };
    };
    expectValid(PORT_RESPONSES.one, port, 'POST /ports');
    expectValid(PORT_RESPONSES.one, await ok(p.owner, 'PUT', `/network/v2.0/ports/${port.port.id}`, { port: { name: 'renamed' } }), 'PUT');
    expectValid(PORT_RESPONSES.list, await ok(p.owner, 'GET', '/network/v2.0/ports?limit=1'), 'a page with links');
  });

  it('network: subnets, trunks, routers with a gateway, floating IPs with a port (create, show, list, update) as their owner and admin', async () => {
    const l = p.lessee;
    const ext = (await ok(p.admin, 'POST', '/network/v2.0/networks', { network: { name: 'doc-ext', 'router:external': true } })) as {
      network: { id: string };
    };
    await ok(p.admin, 'POST', '/network/v2.0/subnets', { subnet: { network_id: ext.network.id, cidr: '203.0.113.0/24' } });
    const net = (await ok(l, 'POST', '/network/v2.0/networks', { network: { name: 'doc-l3' } })) as { network: { id: string } };
    const subnet = (await ok(l, 'POST', '/network/v2.0/subnets', {
      subnet: {
        network_id: net.network.id,
        cidr: '10.20.0.0/24',
        dns_nameservers: ['10.20.0.53'],
        host_routes: [{ destination: '10.30.0.0/24', nexthop: '10.20.0.9' }],
      },
    })) as { subnet: { id: string } };
    expectValid(SUBNET_RESPONSES.one, subnet, 'POST /subnets');
    expectValid(
      SUBNET_RESPONSES.one,
      await ok(l, 'PUT', `/network/v2.0/subnets/${subnet.subnet.id}`, { subnet: { name: 'renamed' } }),
      'PUT /subnets',
    );
    const router = (await ok(l, 'POST', '/network/v2.0/routers', {
      router: { name: 'doc-router', external_gateway_info: { network_id: ext.network.id } },
    })) as { router: { id: string } };
    expectValid(ROUTER_RESPONSES.one, router, 'POST /routers');
    await ok(l, 'PUT', `/network/v2.0/routers/${router.router.id}/add_router_interface`, { subnet_id: subnet.subnet.id });
    const port = (await ok(l, 'POST', '/network/v2.0/ports', { port: { network_id: net.network.id } })) as { port: { id: string } };
    const fip = (await ok(l, 'POST', '/network/v2.0/floatingips', {
      floatingip: { floating_network_id: ext.network.id, port_id: port.port.id },
    })) as { floatingip: { id: string } };
    expectValid(FLOATINGIP_RESPONSES.one, fip, 'POST /floatingips');
    const parent = (await ok(l, 'POST', '/network/v2.0/ports', { port: { network_id: net.network.id, name: 'doc-parent' } })) as {
      port: { id: string };
    };
    const child = (await ok(l, 'POST', '/network/v2.0/ports', { port: { network_id: w.network, name: 'doc-child' } })) as {
      port: { id: string };
    };
    const trunk = (await ok(l, 'POST', '/network/v2.0/trunks', {
      trunk: { port_id: parent.port.id, sub_ports: [{ port_id: child.port.id, segmentation_type: 'vlan', segmentation_id: 101 }] },
    })) as { trunk: { id: string } };
    expectValid(TRUNK_RESPONSES.one, trunk, 'POST /trunks');
    const parentShown = (await ok(l, 'GET', `/network/v2.0/ports/${parent.port.id}`)) as { port: Record<string, unknown> };
    expect(parentShown.port.trunk_details).toBeDefined();
    expectValid(PORT_RESPONSES.one, parentShown, 'a parent port with trunk_details');
    const shownFip = (await ok(l, 'GET', `/network/v2.0/floatingips/${fip.floatingip.id}`)) as { floatingip: Record<string, unknown> };
    expect(shownFip.floatingip.port_details).not.toBeNull();
    for (const who of [p.admin, l]) {
      const cases: Array<[string, TSchema]> = [
        ['/network/v2.0/subnets', SUBNET_RESPONSES.list],
        [`/network/v2.0/subnets/${subnet.subnet.id}`, SUBNET_RESPONSES.one],
        ['/network/v2.0/routers', ROUTER_RESPONSES.list],
        [`/network/v2.0/routers/${router.router.id}`, ROUTER_RESPONSES.one],
        ['/network/v2.0/floatingips', FLOATINGIP_RESPONSES.list],
        [`/network/v2.0/floatingips/${fip.floatingip.id}`, FLOATINGIP_RESPONSES.one],
        ['/network/v2.0/trunks', TRUNK_RESPONSES.list],
        [`/network/v2.0/trunks/${trunk.trunk.id}`, TRUNK_RESPONSES.one],
      ];
      for (const [url, schema] of cases) expectValid(schema, await ok(who, 'GET', url), `${who.name} GET ${url}`);
    }
    const moved = await ok(l, 'PUT', `/network/v2.0/floatingips/${fip.floatingip.id}`, { floatingip: { port_id: null } });
    expectValid(FLOATINGIP_RESPONSES.one, moved, 'PUT /floatingips (disassociated)');
    expectValid(
      ROUTER_RESPONSES.one,
      await ok(l, 'PUT', `/network/v2.0/routers/${router.router.id}`, { router: { name: 'r2' } }),
      'PUT /routers',
    );
    expectValid(
      TRUNK_RESPONSES.one,
      await ok(l, 'PUT', `/network/v2.0/trunks/${trunk.trunk.id}`, { trunk: { name: 't2' } }),
      'PUT /trunks',
    );
  });

  it('image: images (list, show) as admin, owner and lessee; create and JSON-patch update', async () => {
    for (const who of [p.admin, p.owner, p.lessee]) {
      const list = await ok(who, 'GET', '/image/v2/images');
      expectValid(ImageCollection, list, `${who.name} images`);
      expect(JSON.stringify(list)).toContain(w.image);
      expectValid(ImageResponse, await ok(who, 'GET', `/image/v2/images/${w.image}`), `${who.name} image`);
    }
    expectValid(ImageCollection, await ok(p.owner, 'GET', '/image/v2/images?limit=1'), 'a page with next');
    const created = (await ok(p.owner, 'POST', '/image/v2/images', { name: 'doc-2', hw_firmware_type: 'uefi' })) as { id: string };
    expectValid(ImageResponse, created, 'POST /images');
    const patched = await ok(p.owner, 'PATCH', `/image/v2/images/${created.id}`, [{ op: 'replace', path: '/name', value: 'doc-3' }], {
      'content-type': PATCH_TYPE,
    });
    expectValid(ImageResponse, patched, 'PATCH /images/{id}');
  });
});

describe('the response schemas', () => {
  it('are in the document, as the 2XX answer of their routes', async () => {
    const doc = (await call(ts, p.anonymous, 'GET', '/openapi.json')).body;
    const cases: Array<[string, string, TSchema]> = [
      ['get', '/baremetal/v1/nodes', NodeCollection],
      ['get', '/baremetal/v1/nodes/detail', NodeDetailCollection],
      ['get', '/baremetal/v1/nodes/{ident}', NodeResponse],
      ['post', '/baremetal/v1/nodes', NodeResponse],
      ['patch', '/baremetal/v1/nodes/{ident}', NodeResponse],
      ['get', '/baremetal/v1/ports', PortCollection],
      ['get', '/baremetal/v1/ports/{uuid}', PortResponse],
      ['get', '/lease/v1/offers', OfferCollection],
      ['get', '/lease/v1/offers/{ident}', OfferResponse],
      ['post', '/lease/v1/offers/{ident}/claim', LeaseResponse],
      ['get', '/lease/v1/leases', LeaseCollection],
      ['patch', '/lease/v1/leases/{ident}', LeaseResponse],
      ['get', '/network/v2.0/networks', NETWORK_RESPONSES.list],
      ['put', '/network/v2.0/networks/{id}', NETWORK_RESPONSES.one],
      ['post', '/network/v2.0/ports', PORT_RESPONSES.one],
      ['get', '/network/v2.0/subnets/{id}', SUBNET_RESPONSES.one],
      ['get', '/network/v2.0/routers', ROUTER_RESPONSES.list],
      ['put', '/network/v2.0/floatingips/{id}', FLOATINGIP_RESPONSES.one],
      ['post', '/network/v2.0/trunks', TRUNK_RESPONSES.one],
      ['get', '/image/v2/images', ImageCollection],
      ['get', '/lease/v1/nodes', LeaseNodeCollection],
      ['get', '/compute/v2.1/flavors/detail', FlavorDetailCollection],
      ['post', '/compute/v2.1/os-keypairs', KeypairCreateResponse],
      ['get', '/compute/v2.1/os-keypairs/{name}', KeypairResponse],
      ['post', '/compute/v2.1/servers', ServerCreateResponse],
      ['get', '/compute/v2.1/servers/detail', ServerDetailCollection],
      ['get', '/compute/v2.1/servers/{id}', ServerResponse],
      ['patch', '/image/v2/images/{id}', ImageResponse],
    ];
    for (const [method, path, schema] of cases) {
      const answers = doc.paths[path]?.[method]?.responses;
      const documented = Object.entries<any>(answers ?? {}).find(([code]) => code.startsWith('2'))?.[1];
      expect(documented?.content?.['application/json']?.schema, `${method} ${path}`).toEqual(asDocumented(schema));
    }
  });

  it('refuse an answer with a field they do not know, or without one they require', async () => {
    const node = (await ok(p.admin, 'GET', `/baremetal/v1/nodes/${w.node}`, undefined, IRONIC)) as Record<string, unknown>;
    expect(Value.Check(NodeResponse, node)).toBe(true);
    expect(Value.Check(NodeResponse, { ...node, colour: 'blue' })).toBe(false);
    const { provision_state: _, ...missing } = node;
    expect(Value.Check(NodeResponse, missing)).toBe(false);
    const lease = (await ok(p.lessee, 'GET', `/lease/v1/leases/${w.lease}`)) as Record<string, unknown>;
    expect(Value.Check(LeaseResponse, { ...lease, extra_field: 1 })).toBe(false);
    expect(Value.Check(LeaseResponse, { ...lease, status: 'sleeping' })).toBe(false);
    const net = (await ok(p.lessee, 'GET', `/network/v2.0/networks/${w.network}`)) as { network: Record<string, unknown> };
    expect(Value.Check(NETWORK_RESPONSES.one, { network: { ...net.network, qos_policy_id: null } })).toBe(false);
    const image = (await ok(p.owner, 'GET', `/image/v2/images/${w.image}`)) as Record<string, unknown>;
    expect(Value.Check(ImageResponse, { ...image, custom: 'a string is a custom property' })).toBe(true);
    expect(Value.Check(ImageResponse, { ...image, custom: 7 })).toBe(false);
  });
});
