/**
 * The lab's Redfish resources (DSP0266 / DSP2046) and what each method does to the
 * {@link LabState}. Registered on an app made by `createLabHttp` (`http.ts`).
 *
 * | URI (under `/redfish/v1`)                                   | methods              |
 * |-------------------------------------------------------------|----------------------|
 * | `/redfish`, `/`, `/odata`, `/$metadata`                     | GET                  |
 * | `/SessionService`, `/SessionService/Sessions[/{id}]`        | GET, POST / GET, DELETE |
 * | `/Systems[/{id}]`                                           | GET / GET, PATCH     |
 * | `/Systems/{id}/Actions/ComputerSystem.Reset`                | POST → 204           |
 * | `/Systems/{id}/{Processors,Memory,EthernetInterfaces,SimpleStorage,Storage}[/…]` | GET (routes-hardware.ts) |
 * | `/{Systems,Managers}/{id}/VirtualMedia[/Cd]` (+ Insert/EjectMedia) | GET, PATCH, POST |
 * | `/Managers[/{id}]`, `/Chassis`                              | GET                  |
 * | `/Chassis/{id}`                                             | GET, PATCH           |
 *
 * `PATCH /Systems/{id}` accepts `Boot.BootSourceOverrideTarget|Enabled|Mode` and `IndicatorLED`
 * (values checked against the allowable values, else 400 `PropertyValueNotInList`); other known
 * properties are read-only (400 `PropertyNotWritable`), unknown ones 400 `PropertyUnknown`. It
 * honours `If-Match` (412) and answers 200 with the updated system. `PATCH /Chassis/{id}` accepts
 * only `IndicatorLED`, the same LED as its system's (DSP2046 Chassis), in the same way.
 */
import type { FastifyInstance } from 'fastify';
import { bodyObject, checkIfMatch, etagOf, resource, sameId, sendLabError, type Params } from './http.ts';
import {
  renderChassis,
  renderManager,
  renderMetadata,
  renderODataServiceDocument,
  renderServiceRoot,
  renderSession,
  renderSessionService,
  renderVersions,
  SESSIONS_URI,
} from './render-service.ts';
import { registerHardwareRoutes } from './routes-hardware.ts';
import {
  REDFISH_ROOT,
  VIRTUAL_MEDIA_ID,
  chassisUri,
  collection,
  managerUri,
  renderSystem,
  renderVirtualMedia,
  systemUri,
  type Json,
} from './render-system.ts';
import { LabError, type LabState, type SystemState } from './state.ts';

/** Properties of a ComputerSystem a client may PATCH; every other rendered property is read-only. */
const WRITABLE_BOOT = { BootSourceOverrideTarget: 'target', BootSourceOverrideEnabled: 'enabled', BootSourceOverrideMode: 'mode' } as const;

/** Registers every lab resource on `app`, serving `state`. */
export function registerLabRoutes(app: FastifyInstance, state: LabState): void {
  const R = REDFISH_ROOT;
  const notFound = (uri: string) => new LabError(404, 'ResourceMissingAtURI', [uri]);

  // --- protocol documents ---------------------------------------------------------------
  resource(app, '/redfish', { GET: () => renderVersions() });
  resource(app, R, { GET: () => renderServiceRoot(state.serviceUuid) });
  resource(app, `${R}/odata`, { GET: () => renderODataServiceDocument() });
  resource(app, `${R}/$metadata`, {
    GET: (_req, reply) => {
      void reply.type('application/xml').send(renderMetadata());
      return undefined;
    },
  });

  // --- sessions (DSP0266 §"Session management") --------------------------------------------
  resource(app, `${R}/SessionService`, { GET: () => renderSessionService(state.sessions.timeoutS) });
  resource(app, SESSIONS_URI, {
    GET: () =>
      collection(
        'SessionCollection',
        SESSIONS_URI,
        'Session Collection',
        state.sessions.list().map((s) => `${SESSIONS_URI}/${s.id}`),
      ),
    POST: (req, reply) => {
      const body = bodyObject(req);
      for (const p of ['UserName', 'Password']) {
        if (typeof body[p] !== 'string') throw new LabError(400, 'PropertyMissing', [p], [`#/${p}`]);
      }
      const session = state.sessions.create(body.UserName as string, body.Password as string);
      if (session === null) return void sendLabError(reply, new LabError(401, 'NoValidSession'));
      const json = renderSession(session);
      void reply
        .code(201)
        .header('X-Auth-Token', session.token)
        .header('Location', json['@odata.id'])
        .type('application/json; charset=utf-8')
        .send(json);
      return undefined;
    },
  });
  resource(app, `${SESSIONS_URI}/:sid`, {
    GET: (req, _reply, p) => {
      const s = state.sessions.get(p.sid!);
      if (s === null) throw notFound(req.url);
      return renderSession(s);
    },
    DELETE: (req, reply, p) => {
      if (!state.sessions.delete(p.sid!)) throw notFound(req.url);
      void reply.code(204).send();
      return undefined;
    },
  });

  // --- systems ------------------------------------------------------------------------------
  const sys = (p: Params): SystemState => state.system(p.id!);
  const renderSystemOf = (s: SystemState): Json => renderSystem(s, state.machines?.switchPort?.(s.id) ?? null);
  resource(app, `${R}/Systems`, {
    GET: () =>
      collection(
        'ComputerSystemCollection',
        `${R}/Systems`,
        'Computer System Collection',
        state.systems().map((s) => systemUri(s.id)),
      ),
  });
  resource(app, `${R}/Systems/:id`, {
    GET: (_req, _reply, p) => renderSystemOf(sys(p)),
    PATCH: (req, _reply, p) => {
      const s = sys(p);
      checkIfMatch(req, etagOf(renderSystemOf(s)));
      state.patchSystem(s.id, parseSystemPatch(bodyObject(req), renderSystemOf(s)));
      return renderSystemOf(s);
    },
  });
  resource(app, `${R}/Systems/:id/Actions/ComputerSystem.Reset`, {
    POST: async (req, reply, p) => {
      await state.requestReset(sys(p).id, bodyObject(req).ResetType);
      void reply.code(204).send();
      return undefined;
    },
  });
  registerHardwareRoutes(app, state);
  registerVirtualMedia(
    app,
    state,
    `${R}/Systems/:id`,
    (p) => sys(p),
    (s) => systemUri(s.id),
  );

  // --- managers and chassis -------------------------------------------------------------------
  const mgr = (p: Params): SystemState => state.systemByManager(p.id!);
  resource(app, `${R}/Managers`, {
    GET: () =>
      collection(
        'ManagerCollection',
        `${R}/Managers`,
        'Manager Collection',
        state.systems().map((s) => managerUri(s.managerId)),
      ),
  });
  resource(app, `${R}/Managers/:id`, { GET: (_req, _reply, p) => renderManager(mgr(p)) });
  registerVirtualMedia(app, state, `${R}/Managers/:id`, mgr, (s) => managerUri(s.managerId));

  resource(app, `${R}/Chassis`, {
    GET: () =>
      collection(
        'ChassisCollection',
        `${R}/Chassis`,
        'Chassis Collection',
        state.systems().map((s) => chassisUri(s.chassisId)),
      ),
  });
  resource(app, `${R}/Chassis/:id`, {
    GET: (_req, _reply, p) => renderChassis(state.systemByChassis(p.id!)),
    PATCH: (req, _reply, p) => {
      const s = state.systemByChassis(p.id!);
      checkIfMatch(req, etagOf(renderChassis(s)));
      state.patchSystem(s.id, parseChassisPatch(bodyObject(req), renderChassis(s)));
      return renderChassis(s);
    },
  });
}

/**
 * Virtual media under `parent` (a system or a manager; both show the system's one CD):
 * the collection, the device (GET; PATCH `Image`/`Inserted`/`WriteProtected`, the fallback
 * sushy uses when actions are not advertised) and the Insert/Eject actions (204).
 */
function registerVirtualMedia(
  app: FastifyInstance,
  state: LabState,
  parent: string,
  owner: (p: Params) => SystemState,
  ownerUri: (s: SystemState) => string,
): void {
  const device = (req: { url: string }, p: Params): SystemState => {
    const s = owner(p);
    if (!sameId(p.vm, VIRTUAL_MEDIA_ID)) throw new LabError(404, 'ResourceMissingAtURI', [req.url]);
    return s;
  };
  resource(app, `${parent}/VirtualMedia`, {
    GET: (_req, _reply, p) => {
      const base = `${ownerUri(owner(p))}/VirtualMedia`;
      return collection('VirtualMediaCollection', base, 'Virtual Media Collection', [`${base}/${VIRTUAL_MEDIA_ID}`]);
    },
  });
  resource(app, `${parent}/VirtualMedia/:vm`, {
    GET: (req, _reply, p) => {
      const s = device(req, p);
      return renderVirtualMedia(s, `${ownerUri(s)}/VirtualMedia`);
    },
    PATCH: async (req, _reply, p) => {
      const s = device(req, p);
      const base = `${ownerUri(s)}/VirtualMedia`;
      checkIfMatch(req, etagOf(renderVirtualMedia(s, base)));
      const body = bodyObject(req);
      for (const key of Object.keys(body)) {
        if (!['Image', 'Inserted', 'WriteProtected'].includes(key)) throw new LabError(400, 'PropertyUnknown', [key], [`#/${key}`]);
      }
      const image = body.Image === undefined ? s.virtualMedia.image : body.Image;
      if (image !== null && typeof image !== 'string')
        throw new LabError(400, 'PropertyValueTypeError', [JSON.stringify(image), 'Image'], ['#/Image']);
      for (const k of ['Inserted', 'WriteProtected'] as const) {
        if (body[k] !== undefined && typeof body[k] !== 'boolean') {
          throw new LabError(400, 'PropertyValueTypeError', [JSON.stringify(body[k]), k], [`#/${k}`]);
        }
      }
      const eject = body.Inserted === false || image === null || image === '';
      const writeProtected = (body.WriteProtected as boolean | undefined) ?? s.virtualMedia.writeProtected;
      if (eject) await state.requestVirtualMedia(s.id, null, writeProtected);
      else if (image !== s.virtualMedia.image || !s.virtualMedia.inserted) await state.requestVirtualMedia(s.id, image, writeProtected);
      else state.setVirtualMedia(s.id, image, writeProtected);
      return renderVirtualMedia(s, base);
    },
  });
  resource(app, `${parent}/VirtualMedia/:vm/Actions/VirtualMedia.InsertMedia`, {
    POST: async (req, reply, p) => {
      const s = device(req, p);
      const body = bodyObject(req);
      const action = 'VirtualMedia.InsertMedia';
      if (body.Image === undefined) throw new LabError(400, 'ActionParameterMissing', [action, 'Image'], ['#/Image']);
      if (typeof body.Image !== 'string' || body.Image === '') {
        throw new LabError(400, 'ActionParameterValueTypeError', [JSON.stringify(body.Image), 'Image', action], ['#/Image']);
      }
      if (body.WriteProtected !== undefined && typeof body.WriteProtected !== 'boolean') {
        throw new LabError(400, 'ActionParameterValueTypeError', [JSON.stringify(body.WriteProtected), 'WriteProtected', action]);
      }
      await state.requestVirtualMedia(s.id, body.Image, body.WriteProtected ?? true);
      void reply.code(204).send();
      return undefined;
    },
  });
  resource(app, `${parent}/VirtualMedia/:vm/Actions/VirtualMedia.EjectMedia`, {
    POST: async (req, reply, p) => {
      await state.requestVirtualMedia(device(req, p).id, null);
      void reply.code(204).send();
      return undefined;
    },
  });
}

/**
 * Checks a Chassis PATCH body: only `IndicatorLED` is writable (the machine's one identify LED,
 * shared with its ComputerSystem).
 *
 * @throws LabError 400 `PropertyUnknown` or `PropertyNotWritable`.
 */
function parseChassisPatch(body: Record<string, unknown>, current: Json): { indicatorLed?: string } {
  const out: { indicatorLed?: string } = {};
  for (const [key, value] of Object.entries(body)) {
    if (key.startsWith('@odata.')) continue;
    if (key === 'IndicatorLED') out.indicatorLed = value as string;
    else if (key in current) throw new LabError(400, 'PropertyNotWritable', [key], [`#/${key}`]);
    else throw new LabError(400, 'PropertyUnknown', [key], [`#/${key}`]);
  }
  return out;
}

/**
 * Checks a ComputerSystem PATCH body against the rendered system `current` and extracts the
 * writable properties.
 *
 * @throws LabError 400 `PropertyUnknown`, `PropertyNotWritable` or `PropertyValueTypeError`.
 */
function parseSystemPatch(
  body: Record<string, unknown>,
  current: Json,
): { boot?: Partial<Record<'target' | 'enabled' | 'mode', string>>; indicatorLed?: string } {
  const out: { boot?: Partial<Record<'target' | 'enabled' | 'mode', string>>; indicatorLed?: string } = {};
  for (const [key, value] of Object.entries(body)) {
    if (key.startsWith('@odata.')) continue;
    if (key === 'IndicatorLED') {
      out.indicatorLed = value as string;
    } else if (key === 'Boot') {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw new LabError(400, 'PropertyValueTypeError', [JSON.stringify(value), 'Boot'], ['#/Boot']);
      }
      const boot: Partial<Record<'target' | 'enabled' | 'mode', string>> = {};
      const currentBoot = current.Boot as Json;
      for (const [bk, bv] of Object.entries(value as Record<string, unknown>)) {
        const field = WRITABLE_BOOT[bk as keyof typeof WRITABLE_BOOT];
        if (field !== undefined) boot[field] = bv as string;
        else if (bk in currentBoot) throw new LabError(400, 'PropertyNotWritable', [bk], [`#/Boot/${bk}`]);
        else throw new LabError(400, 'PropertyUnknown', [bk], [`#/Boot/${bk}`]);
      }
      out.boot = boot;
    } else if (key in current) {
      throw new LabError(400, 'PropertyNotWritable', [key], [`#/${key}`]);
    } else {
      throw new LabError(400, 'PropertyUnknown', [key], [`#/${key}`]);
    }
  }
  return out;
}
