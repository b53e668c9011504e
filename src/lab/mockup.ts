/**
 * Serving a vendor's Redfish mockup (`esi lab --mockup <dir>`): the JSON tree DMTF and vendors
 * publish (DMTF Redfish-Mockup-Server format: one `index.json` per resource, its directory path
 * being the resource's URI), so that the redfish driver meets real vendor payloads.
 *
 * The directory is either the mockup root holding `redfish/v1/index.json`, or the `/redfish/v1`
 * directory itself (holding `index.json`). Every `index.json` below is loaded at start (at most
 * 20 000 files of 4 MiB each); its URI is `/redfish/v1/<relative directory>`.
 *
 * Behaviour, as a BMC would (and as DMTF's mockup server does for GET/PATCH):
 * - resource paths are case-insensitive, as on real BMCs: `/redfish/v1/systems/1` is
 *   `/redfish/v1/Systems/1` (and so are action targets and the sessions collection);
 * - `GET` of a loaded URI returns the resource (with an `ETag`); unknown URIs are 404;
 * - `PATCH` merges the body into the resource (objects recursively; other values replace);
 *   read-only bookkeeping (`@odata.*`, `Id`) is refused with 400 `PropertyNotWritable`;
 * - `POST` of a `#ComputerSystem.Reset` target changes the system's `PowerState` (`On`,
 *   `ForceOn`, `ForceOff`, `GracefulShutdown`, restarts, `PushPowerButton`), and every power-on or
 *   restart applies the pending BIOS settings (the `Attributes` of the Bios resource's
 *   `@Redfish.Settings.SettingsObject`) to the Bios resource and clears them, and turns a
 *   `Once` boot override off;
 * - `POST` of `#VirtualMedia.InsertMedia` / `EjectMedia` targets updates the device's
 *   `Image`/`Inserted`;
 * - sessions: `POST` to the sessions collection with `UserName`/`Password` → 201 with
 *   `X-Auth-Token`; other requests need a session or HTTP Basic credentials (the service root
 *   and OData documents excepted), as in the rest of the lab (`http.ts`).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { bodyObject, checkIfMatch, createLabHttp, etagOf, sendLabError } from './http.ts';
import { SESSIONS_URI } from './render-service.ts';
import { LabError, LabState } from './state.ts';

type Json = Record<string, unknown>;
const ROOT = '/redfish/v1';
const MAX_FILES = 20_000;
const MAX_FILE_BYTES = 4 * 1024 * 1024;

/** Options of {@link startMockupLab}. */
export interface MockupLabOptions {
  /** The mockup directory (see the module doc). */
  readonly dir: string;
  readonly host?: string;
  /** TCP port (default 0: a free port). */
  readonly port?: number;
  /** Credentials the emulated BMC accepts (default `admin` / `password`). */
  readonly username?: string;
  readonly password?: string;
  readonly logger?: FastifyBaseLogger | false;
}

/** A running mockup BMC. */
export interface MockupLab {
  /** Base URL, e.g. `http://127.0.0.1:8586`. */
  readonly url: string;
  /** URIs of the ComputerSystems of the mockup (for `redfish_system_id`). */
  readonly systems: readonly string[];
  /** The current representation of `uri` (a copy), or undefined. */
  resource(uri: string): Json | undefined;
  close(): Promise<void>;
}

/**
 * Loads the mockup tree under `dir`.
 * @returns resources by URI (no trailing slash; the root is `/redfish/v1`)
 * @throws Error when the directory holds no service root, a file is not a JSON object, or the
 *   tree is too large
 */
export function loadMockup(dir: string): Map<string, Json> {
  const base = fs.existsSync(path.join(dir, 'redfish', 'v1', 'index.json')) ? path.join(dir, 'redfish', 'v1') : dir;
  if (!fs.existsSync(path.join(base, 'index.json'))) throw new Error(`${dir} is not a Redfish mockup: no index.json for /redfish/v1.`);
  const out = new Map<string, Json>();
  const walk = (d: string, rel: string): void => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full, rel === '' ? entry.name : `${rel}/${entry.name}`);
      else if (entry.name === 'index.json') {
        if (out.size >= MAX_FILES) throw new Error(`${dir} has more than ${MAX_FILES} resources.`);
        if (fs.statSync(full).size > MAX_FILE_BYTES) throw new Error(`${full} is larger than ${MAX_FILE_BYTES} bytes.`);
        let json: unknown;
        try {
          json = JSON.parse(fs.readFileSync(full, 'utf8'));
        } catch (err) {
          throw new Error(`${full} is not valid JSON: ${(err as Error).message}`, { cause: err });
        }
        if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new Error(`${full} is not a JSON object.`);
        out.set(rel === '' ? ROOT : `${ROOT}/${rel}`, json as Json);
      }
    }
  };
  walk(base, '');
  return out;
}

/** URI of a reference, without a trailing slash. */
function idOf(v: unknown): string | null {
  const id = (v as { '@odata.id'?: unknown } | null | undefined)?.['@odata.id'];
  return typeof id === 'string' && id !== '' ? normalise(id) : null;
}

function normalise(uri: string): string {
  const p = (uri.split('?')[0] ?? '').split('#')[0]!.replace(/\/+$/, '');
  return p === '' ? '/' : p;
}

/** Recursive merge of a PATCH body into a resource (DSP0266 §"PATCH (update)"). */
function merge(target: Json, patch: Json): Json {
  const out: Json = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    const cur = out[k];
    out[k] =
      v !== null && typeof v === 'object' && !Array.isArray(v) && cur !== null && typeof cur === 'object' && !Array.isArray(cur)
        ? merge(cur as Json, v as Json)
        : v;
  }
  return out;
}

/**
 * Starts an HTTP server for the mockup in `options.dir`.
 * @throws Error for a directory that is not a mockup; the listen error when the port is taken
 */
export async function startMockupLab(options: MockupLabOptions): Promise<MockupLab> {
  const store = loadMockup(options.dir);
  const state = new LabState({ nodes: 0, username: options.username ?? 'admin', password: options.password ?? 'password' });
  const app = createLabHttp(state, { logger: options.logger ?? false });
  /** Loaded URIs by their lower-case form: how a request's path finds its resource. */
  const byLower = new Map([...store.keys()].map((u) => [u.toLowerCase(), u]));
  const canonical = (uri: string): string => byLower.get(uri.toLowerCase()) ?? uri;
  const sessionsUri = normalise(SESSIONS_URI).toLowerCase();
  const systems = [...store.entries()]
    .filter(([, j]) => String(j['@odata.type'] ?? '').includes('ComputerSystem.') && !String(j['@odata.type']).includes('Collection'))
    .map(([u]) => u);

  /** Actions by target URI: what to do, and on which resource. */
  const actions = new Map<string, { name: string; owner: string }>();
  for (const [uri, json] of store) {
    const acts = json.Actions as Json | undefined;
    for (const [name, def] of Object.entries(acts ?? {})) {
      const target = (def as Json | null)?.target;
      if (typeof target === 'string') actions.set(normalise(target).toLowerCase(), { name, owner: uri });
    }
  }

  const boot = (systemUri: string): void => {
    const sys = store.get(systemUri)!;
    const b = sys.Boot as Json | undefined;
    if (b?.BootSourceOverrideEnabled === 'Once') store.set(systemUri, merge(sys, { Boot: { BootSourceOverrideEnabled: 'Disabled' } }));
    const target = (v: unknown): string | null => {
      const id = idOf(v);
      return id === null ? null : canonical(id);
    };
    const biosUri = target(sys.Bios);
    const bios = biosUri === null ? undefined : store.get(biosUri);
    const settingsUri = target((bios?.['@Redfish.Settings'] as Json | undefined)?.SettingsObject);
    const settings = settingsUri === null ? undefined : store.get(settingsUri);
    const pending = settings?.Attributes as Json | undefined;
    if (bios !== undefined && settings !== undefined && pending !== undefined && Object.keys(pending).length > 0) {
      store.set(biosUri!, merge(bios, { Attributes: pending }));
      store.set(settingsUri!, { ...settings, Attributes: {} });
    }
  };

  const reset = (systemUri: string, type: unknown): void => {
    const sys = store.get(systemUri)!;
    const allowed = ((sys.Actions as Json)['#ComputerSystem.Reset'] as Json)['ResetType@Redfish.AllowableValues'];
    if (typeof type !== 'string') throw new LabError(400, 'ActionParameterMissing', ['ComputerSystem.Reset', 'ResetType'], ['#/ResetType']);
    if (Array.isArray(allowed) && !allowed.includes(type))
      throw new LabError(400, 'ActionParameterValueNotInList', [type, 'ResetType', 'ComputerSystem.Reset'], ['#/ResetType']);
    const on = sys.PowerState === 'On';
    const powerOff = (): void => void store.set(systemUri, { ...store.get(systemUri)!, PowerState: 'Off' });
    const powerOnAndBoot = (): void => {
      store.set(systemUri, { ...store.get(systemUri)!, PowerState: 'On' });
      boot(systemUri);
    };
    if (type === 'On' || type === 'ForceOn') {
      if (!on) powerOnAndBoot();
    } else if (type === 'ForceOff' || type === 'GracefulShutdown') powerOff();
    else if (['ForceRestart', 'GracefulRestart', 'PowerCycle'].includes(type)) powerOnAndBoot();
    else if (type === 'PushPowerButton') {
      if (on) powerOff();
      else powerOnAndBoot();
    }
  };

  const handle = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const uri = canonical(normalise(req.url));
    const json = (body: Json, status = 200): FastifyReply => {
      if (req.method === 'GET' || req.method === 'PATCH') reply.header('ETag', etagOf(body));
      return reply.code(status).type('application/json; charset=utf-8').send(body);
    };
    if (req.method === 'POST' && uri.toLowerCase() === sessionsUri) {
      const body = bodyObject(req);
      const session = state.sessions.create(String(body.UserName ?? ''), String(body.Password ?? ''));
      if (session === null) return sendLabError(reply, new LabError(401, 'NoValidSession'));
      const location = `${SESSIONS_URI}/${session.id}`;
      reply.header('X-Auth-Token', session.token).header('Location', location);
      return json(
        {
          '@odata.id': location,
          '@odata.type': '#Session.v1_0_0.Session',
          Id: session.id,
          Name: 'User Session',
          UserName: session.userName,
        },
        201,
      );
    }
    const action = actions.get(uri.toLowerCase());
    if (req.method === 'POST' && action !== undefined) {
      const body = bodyObject(req);
      if (action.name === '#ComputerSystem.Reset') reset(action.owner, body.ResetType);
      else if (action.name === '#VirtualMedia.InsertMedia') {
        if (typeof body.Image !== 'string' || body.Image === '')
          throw new LabError(400, 'ActionParameterMissing', ['VirtualMedia.InsertMedia', 'Image'], ['#/Image']);
        store.set(action.owner, {
          ...store.get(action.owner)!,
          Image: body.Image,
          Inserted: true,
          WriteProtected: body.WriteProtected ?? true,
          ConnectedVia: 'URI',
        });
      } else if (action.name === '#VirtualMedia.EjectMedia') {
        store.set(action.owner, { ...store.get(action.owner)!, Image: null, Inserted: false, ConnectedVia: 'NotConnected' });
      } else throw new LabError(400, 'ActionNotSupported', [action.name.slice(1)]);
      return reply.code(204).send();
    }
    const res = store.get(uri);
    if (res === undefined) throw new LabError(404, 'ResourceMissingAtURI', [uri]);
    if (req.method === 'GET' || req.method === 'HEAD') return json(res);
    if (req.method === 'PATCH') {
      checkIfMatch(req, etagOf(res));
      const body = bodyObject(req);
      for (const key of Object.keys(body)) {
        if (key.startsWith('@odata.') || key === 'Id') throw new LabError(400, 'PropertyNotWritable', [key], [`#/${key}`]);
      }
      const updated = merge(res, body);
      if (updated.Image === null || updated.Image === '') Object.assign(updated, { Inserted: false });
      store.set(uri, updated);
      return json(updated);
    }
    if (req.method === 'DELETE' && uri.toLowerCase().startsWith(`${sessionsUri}/`)) {
      state.sessions.delete(uri.split('/').pop()!);
      return reply.code(204).send();
    }
    reply.header('Allow', 'GET, HEAD, PATCH');
    throw new LabError(405, 'OperationNotAllowed');
  };
  app.route({ method: ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE'], url: `${ROOT}`, handler: handle });
  app.route({ method: ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE'], url: `${ROOT}/*`, handler: handle });
  app.get('/redfish', async () => ({ v1: `${ROOT}/` }));

  const host = options.host ?? '127.0.0.1';
  await app.listen({ host, port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : (options.port ?? 0);
  let closed: Promise<void> | null = null;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host}:${port}`,
    systems,
    resource: (uri) => {
      const r = store.get(canonical(normalise(uri)));
      return r === undefined ? undefined : structuredClone(r);
    },
    close: () => (closed ??= app.close()),
  };
}
