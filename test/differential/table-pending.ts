/**
 * Differential table: Ironic 21.4 resources that esi is gaining while this table is written
 * (issue 18): chassis (`v1/chassis.py`), portgroups (`v1/portgroup.py`, 1.23; mode and
 * properties 1.26), volume connectors and targets (`v1/volume*.py`, 1.32), deploy templates
 * (`v1/deploy_template.py`, 1.55), driver RAID properties, node and driver vendor passthru,
 * shards (`v1/shard.py`, 1.82) and events (`v1/event.py`, 1.54). Their differences are accepted
 * as "not implemented yet" (accepted.ts); the run says when one no longer differs.
 */
import { at, del, get, LATEST, op, patch, post, req } from './dsl.ts';
import type { Sequence } from './runner.ts';

/** A valid Neutron port event (`POST /v1/events`). */
const EVENT = {
  event: 'network.bind_port',
  port_id: '0b8ae4a2-6c61-4a5e-9f1e-3f4f7b1c2d3e',
  mac_address: '52:54:00:aa:bb:cc',
  status: 'ACTIVE',
};

/** Methods of a vendor passthru call. */
export const PASSTHRU_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Resources still landing in esi. */
export const PENDING_SEQUENCES: readonly Sequence[] = [
  {
    name: 'chassis',
    steps: [
      ...at(['1.1', LATEST], (v) => get('/v1/chassis', v)),
      post('/v1/chassis', LATEST, { description: 'diff chassis', extra: { rack: '1' } }, { bind: { chassis: 'uuid' } }),
      ...at(['1.1', LATEST], (v) => get('/v1/chassis/{chassis}', v)),
      get('/v1/chassis/detail', LATEST),
      get('/v1/chassis?fields=description', LATEST),
      get('/v1/chassis?fields=bogus', LATEST),
      get('/v1/chassis/not-a-uuid', LATEST),
      post('/v1/chassis', LATEST, { colour: 'blue' }),
      post('/v1/nodes', LATEST, { driver: 'fake-hardware', chassis_uuid: '{chassis}' }, { bind: { node: 'uuid' } }),
      get('/v1/chassis/{chassis}/nodes', LATEST),
      get('/v1/chassis/{chassis}/nodes/detail', LATEST),
      get('/v1/nodes?chassis_uuid={chassis}', LATEST),
      del('/v1/chassis/{chassis}', LATEST, { note: 'a chassis with nodes: 400' }),
      patch('/v1/chassis/{chassis}', LATEST, [op('replace', '/description', 'renamed')]),
      patch('/v1/chassis/{chassis}', LATEST, [op('replace', '/uuid', '{absent}')], { note: 'read-only path' }),
      del('/v1/nodes/{node}'),
      del('/v1/chassis/{chassis}'),
    ],
  },
  {
    name: 'portgroups',
    steps: [
      post('/v1/nodes', LATEST, { driver: 'fake-hardware', name: 'diff-pg' }, { bind: { node: 'uuid' } }),
      ...at(['1.22', '1.23', LATEST], (v) => get('/v1/portgroups', v)),
      post(
        '/v1/portgroups',
        LATEST,
        { node_uuid: '{node}', address: '52:54:00:bb:00:01', name: 'diff-pg1', mode: '802.3ad' },
        { bind: { pg: 'uuid' } },
      ),
      ...at(['1.23', '1.26', LATEST], (v) => get('/v1/portgroups/{pg}', v)),
      get('/v1/portgroups/diff-pg1', LATEST),
      get('/v1/portgroups/detail', LATEST),
      post('/v1/ports', LATEST, { address: '52:54:00:bb:00:02', node_uuid: '{node}', portgroup_uuid: '{pg}' }),
      get('/v1/portgroups/{pg}/ports', LATEST),
      get('/v1/portgroups/{pg}/ports/detail', LATEST),
      get('/v1/nodes/{node}/portgroups', LATEST),
      get('/v1/nodes/{node}/portgroups/detail', LATEST),
      post('/v1/nodes/{node}/portgroups', LATEST, { address: '52:54:00:bb:00:03' }, { note: 'not creatable below a node' }),
      patch('/v1/nodes/{node}/portgroups/{pg}', LATEST, [op('replace', '/name', 'x')], { note: 'not changeable below a node' }),
      del('/v1/nodes/{node}/portgroups/{pg}', LATEST, { note: 'not deletable below a node' }),
      post('/v1/portgroups', LATEST, { node_uuid: '{node}', address: 'nope' }),
      patch('/v1/portgroups/{pg}', LATEST, [op('replace', '/name', 'diff-pg2')]),
      del('/v1/portgroups/{pg}', LATEST, { note: 'a portgroup with ports' }),
      del('/v1/portgroups/{absent}'),
      del('/v1/nodes/{node}'),
    ],
  },
  {
    name: 'volume',
    steps: [
      post('/v1/nodes', LATEST, { driver: 'fake-hardware', name: 'diff-vol' }, { bind: { node: 'uuid' } }),
      ...at(['1.31', '1.32'], (v) => get('/v1/volume', v)),
      get('/v1/volume/connectors', LATEST),
      post(
        '/v1/volume/connectors',
        LATEST,
        { node_uuid: '{node}', type: 'iqn', connector_id: 'iqn.2026-11.org.diff:1' },
        { bind: { vc: 'uuid' } },
      ),
      get('/v1/volume/connectors/{vc}', LATEST),
      post('/v1/volume/connectors', LATEST, { node_uuid: '{node}', type: 'bogus', connector_id: 'x' }),
      get('/v1/volume/targets', LATEST),
      post(
        '/v1/volume/targets',
        LATEST,
        { node_uuid: '{node}', volume_type: 'iscsi', volume_id: 'v1', boot_index: 0 },
        { bind: { vt: 'uuid' } },
      ),
      get('/v1/volume/targets/{vt}', LATEST),
      get('/v1/nodes/{node}/volume/connectors', LATEST),
      get('/v1/nodes/{node}/volume/targets', LATEST),
      patch('/v1/volume/connectors/{vc}', LATEST, [op('add', '/extra/k', 'v')]),
      patch('/v1/volume/targets/{vt}', LATEST, [op('add', '/extra/k', 'v')]),
      ...(['connectors', 'targets'] as const).flatMap((kind) => [
        post(`/v1/nodes/{node}/volume/${kind}`, LATEST, {}, { note: 'not creatable below a node' }),
        get(`/v1/nodes/{node}/volume/${kind}/{absent}`, LATEST),
        patch(`/v1/nodes/{node}/volume/${kind}/{absent}`, LATEST, [op('add', '/extra/k', 'v')]),
        del(`/v1/nodes/{node}/volume/${kind}/{absent}`),
      ]),
      del('/v1/volume/targets/{vt}'),
      del('/v1/volume/connectors/{vc}'),
      del('/v1/nodes/{node}'),
    ],
  },
  {
    name: 'deploy-templates',
    steps: [
      ...at(['1.54', '1.55'], (v) => get('/v1/deploy_templates', v)),
      post(
        '/v1/deploy_templates',
        LATEST,
        { name: 'CUSTOM_DIFF', steps: [{ interface: 'bios', step: 'apply_configuration', args: { settings: [] }, priority: 150 }] },
        { bind: { dt: 'uuid' } },
      ),
      get('/v1/deploy_templates/{dt}', LATEST),
      get('/v1/deploy_templates/CUSTOM_DIFF', LATEST),
      get('/v1/deploy_templates?detail=true', LATEST),
      post('/v1/deploy_templates', LATEST, { name: 'not-custom', steps: [] }),
      patch('/v1/deploy_templates/{dt}', LATEST, [op('add', '/extra/k', 'v')]),
      del('/v1/deploy_templates/{dt}'),
    ],
  },
  {
    name: 'drivers-more',
    steps: [
      get('/v1/drivers/fake-hardware/raid/logical_disk_properties', LATEST),
      get('/v1/drivers/fake-hardware/vendor_passthru/methods', LATEST),
      ...PASSTHRU_METHODS.map((m) =>
        req(m, '/v1/drivers/fake-hardware/vendor_passthru?method=first_method', LATEST, m === 'GET' || m === 'DELETE' ? undefined : {}),
      ),
      req('POST', '/v1/drivers/fake-hardware/vendor_passthru', LATEST, {}, { note: 'no method' }),
      ...PASSTHRU_METHODS.filter((m) => m !== 'GET').map((m) =>
        req(m, '/v1/drivers/fake-hardware/vendor_passthru/first_method', LATEST, m === 'DELETE' ? undefined : {}, {
          note: 'the method in the path',
        }),
      ),
      get('/v1/drivers?fields=name', '1.77'),
    ],
  },
  {
    name: 'shards-events',
    steps: [
      ...at(['1.81', LATEST], (v) => get('/v1/shards', v)),
      ...(['POST', 'PUT', 'PATCH', 'DELETE'] as const).map((m) =>
        req(m, '/v1/shards', LATEST, m === 'DELETE' ? undefined : {}, { note: 'read-only' }),
      ),
      post('/v1/events', '1.54', { events: [] }),
      ...at(['1.53', '1.54'], (v) => post('/v1/events', v, { events: [EVENT] })),
      post('/v1/events', LATEST, { events: [{ ...EVENT, event: 'network.other' }] }, { note: 'unknown event' }),
      post('/v1/events', LATEST, { events: [{ ...EVENT, port_id: 'not-a-uuid' }] }, { note: 'port_id not a UUID' }),
      post('/v1/events', LATEST, { events: [{ ...EVENT, colour: 'red' }] }, { note: 'unknown key' }),
    ],
  },
];
