/**
 * Differential table: the discovery documents and microversion negotiation (Ironic 21.4
 * `ironic/api/controllers/root.py`, `v1/__init__.py`, `versions.py`), drivers and conductors
 * (`v1/driver.py`, `v1/conductor.py`). Versions are those where a key or an endpoint appears.
 */
import { at, del, get, LATEST, post, req } from './dsl.ts';
import type { Sequence } from './runner.ts';

/** Versions at which `GET /v1` gains a link: portgroups 1.23, volume 1.32, lookup 1.22, … */
const ROOT_VERSIONS = [null, '1.1', '1.22', '1.23', '1.32', '1.49', '1.52', '1.54', '1.55', '1.81', LATEST, 'latest'];

/** Root, version negotiation, drivers, conductors. */
export const ROOT_SEQUENCES: readonly Sequence[] = [
  {
    name: 'root',
    steps: [
      get('/', null),
      get('/', LATEST, { note: 'the root document ignores the version header' }),
      ...at(ROOT_VERSIONS, (v) => get('/v1', v)),
      get('/v1/', LATEST),
      ...(['POST', 'PUT', 'PATCH', 'DELETE'] as const).map((m) =>
        req(m, '/v1', LATEST, m === 'DELETE' ? undefined : {}, { note: '405: /v1 is read-only' }),
      ),
    ],
  },
  {
    name: 'versions',
    steps: [
      get('/v1/nodes', '1.83', { note: 'above the maximum: 406 with the version headers' }),
      get('/v1/nodes', '1.99'),
      get('/v1/nodes', '2.1', { note: 'another major version' }),
      get('/v1/nodes', '1.0', { note: 'below the minimum' }),
      get('/v1/nodes', 'one.two', { note: 'not a version' }),
      get('/v1/nodes', 'latest'),
      get('/v1/nodes', null, { note: 'no header: the minimum, 1.1' }),
      get('/v1/nothing-here', LATEST, { note: 'unknown resource' }),
      get(`/v1/nodes/{absent}`, '1.99'),
    ],
  },
  {
    name: 'drivers',
    steps: [
      ...at(['1.1', '1.14', '1.30', LATEST], (v) => get('/v1/drivers', v)),
      get('/v1/drivers?type=dynamic', '1.30'),
      get('/v1/drivers?type=dynamic&detail=true', '1.30'),
      get('/v1/drivers?type=dynamic', '1.29', { note: '406 before 1.30' }),
      get('/v1/drivers?type=bogus', LATEST),
      get('/v1/drivers?detail=maybe', LATEST),
      ...at(['1.1', '1.14', '1.30', LATEST], (v) => get('/v1/drivers/fake-hardware', v)),
      get('/v1/drivers/no-such-driver', LATEST),
      get('/v1/drivers/fake-hardware/properties', LATEST),
      get('/v1/drivers/no-such-driver/properties', LATEST),
    ],
  },
  {
    name: 'ramdisk',
    steps: [
      ...at(['1.21', '1.22'], (v) => get('/v1/lookup?addresses=52:54:00:ff:ff:ff', v)),
      get('/v1/lookup', LATEST, { note: 'no addresses' }),
      get('/v1/lookup?addresses=not-a-mac', LATEST),
      post('/v1/heartbeat/{absent}', LATEST, { callback_url: 'http://127.0.0.1:9999', agent_token: 'x' }),
      post('/v1/heartbeat/{absent}', LATEST, { callback_url: 'http://127.0.0.1:9999' }, { note: 'no agent token' }),
    ],
  },
  {
    name: 'conductors',
    steps: [
      get('/v1/conductors', '1.48', { note: '404 before 1.49' }),
      ...at(['1.49', LATEST], (v) => get('/v1/conductors', v)),
      get('/v1/conductors?detail=true', LATEST),
      get('/v1/conductors?limit=1', LATEST),
      get('/v1/conductors?sort_dir=sideways', LATEST),
      get('/v1/conductors/localhost', LATEST),
      get('/v1/conductors/localhost', '1.48'),
      get('/v1/conductors/no-such-host', LATEST),
      post('/v1/conductors', LATEST, {}, { note: 'read-only collection' }),
      del('/v1/conductors/localhost', LATEST),
    ],
  },
];
