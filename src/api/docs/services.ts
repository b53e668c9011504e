/**
 * The services the API documentation knows: their path prefix on esi's one port, their name in
 * `/openapi/<name>.json`, and the error body each answers a refused request with (its own wire
 * format, written in src/api/<service>/errors.ts), as JSON schemas for the document.
 */
import { Type, type TSchema } from '@sinclair/typebox';

/** One documented service. */
export interface DocService {
  /** Name in `/openapi/<name>.json` and the document's tag (e.g. `baremetal`). */
  readonly name: string;
  /** URL prefix of its routes (e.g. `/baremetal`); `''` for the root routes (ops). */
  readonly prefix: string;
  /** One line: what it is and which OpenStack API it speaks. */
  readonly description: string;
  /** Whether routes need `X-Auth-Token` unless marked public (`config.public`). */
  readonly authenticated: boolean;
  /** The body of its 4xx/5xx answers, or null when they have none worth a schema. */
  readonly error: { readonly mediaType: string; readonly schema: TSchema; readonly description: string } | null;
}

const json = (schema: TSchema, description: string) => ({ mediaType: 'application/json', schema, description });

/** Ironic's body: the WSME fault, JSON-encoded inside `error_message` (src/api/baremetal/errors.ts). */
const IRONIC_ERROR = Type.Object({
  error_message: Type.String({ description: 'JSON text of {"faultcode": "Client"|"Server", "faultstring": <message>, "debuginfo": null}' }),
});

/** Keystone's body (src/api/identity/errors.ts); Neutron answers 401 with it too. */
const KEYSTONE_ERROR = Type.Object({
  error: Type.Object({ code: Type.Integer(), title: Type.String(), message: Type.String() }),
});

/** WSME's fault, as esi-leap answers (src/api/lease/errors.ts). */
const WSME_ERROR = Type.Object({
  faultcode: Type.Union([Type.Literal('Client'), Type.Literal('Server')]),
  faultstring: Type.String(),
  debuginfo: Type.Null(),
});

/** Neutron's body (src/api/network/errors.ts). */
const NEUTRON_ERROR = Type.Object({
  NeutronError: Type.Object({ type: Type.String(), message: Type.String(), detail: Type.String() }),
});

/** Glance's (webob's) JSON body (src/api/image/errors.ts); HTML or plain text by `Accept`. */
const GLANCE_ERROR = Type.Object({ message: Type.String(), code: Type.String(), title: Type.String() });

/** Nova's body: one key named by status (`badRequest`, `itemNotFound`…; src/api/compute/errors.ts). */
const NOVA_ERROR = Type.Record(Type.String(), Type.Object({ code: Type.Integer(), message: Type.String() }));

/** Every documented service, longest prefix first where prefixes nest (none do today). */
export const DOC_SERVICES: readonly DocService[] = [
  {
    name: 'identity',
    prefix: '/identity',
    description: 'Keystone v3 subset: tokens, catalogue, projects, users, roles, grants, groups, domains, application credentials.',
    authenticated: true,
    error: json(KEYSTONE_ERROR, "Error in Keystone's format"),
  },
  {
    name: 'baremetal',
    prefix: '/baremetal',
    description:
      'Ironic v1 subset (microversion by X-OpenStack-Ironic-API-Version; every /v1 route is also served without /v1, as Ironic does).',
    authenticated: true,
    error: json(IRONIC_ERROR, "Error in Ironic's format"),
  },
  {
    name: 'lease',
    prefix: '/lease',
    description: 'esi-leap v1: offers, leases, nodes, events, console auth tokens, and esi lease requests and limits.',
    authenticated: true,
    error: json(WSME_ERROR, "Error in WSME's format (esi-leap)"),
  },
  {
    name: 'network',
    prefix: '/network',
    description: 'Neutron v2.0 subset: networks, subnets, ports, trunks, RBAC, routers, floating IPs, quotas, and esi additions.',
    authenticated: true,
    error: json(NEUTRON_ERROR, "Error in Neutron's format (401: Keystone's)"),
  },
  {
    name: 'image',
    prefix: '/image',
    description: 'Glance v2 subset: images, upload and download, visibility, members.',
    authenticated: true,
    error: json(GLANCE_ERROR, "Error in Glance's format (JSON; HTML or plain text by Accept)"),
  },
  {
    name: 'compute',
    prefix: '/compute',
    description: 'Nova v2.1 subset: servers on leased nodes, flavors, keypairs.',
    authenticated: true,
    error: json(NOVA_ERROR, "Error in Nova's format"),
  },
  {
    name: 'dashboard',
    prefix: '/dashboard',
    description:
      'The web dashboard: its pages (public) and its own API, the live channel of changes (GET /dashboard/v1/changes, server-sent events).',
    authenticated: true,
    error: json(KEYSTONE_ERROR, "Error in Keystone's format"),
  },
  {
    name: 'boot',
    prefix: '/boot',
    description: 'Network boot files for firmware (iPXE scripts, signed virtual media, kernel and ramdisk); no authentication.',
    authenticated: false,
    error: { mediaType: 'text/plain', schema: Type.String(), description: 'Not Found' },
  },
  {
    name: 'ops',
    prefix: '',
    description: 'Operations and discovery: service index, health, readiness, metrics, and these documents; no authentication.',
    authenticated: false,
    error: null,
  },
];

/** The service a route URL belongs to (ops for anything outside the service prefixes). */
export function serviceOf(url: string): DocService {
  for (const s of DOC_SERVICES) if (s.prefix !== '' && (url === s.prefix || url.startsWith(`${s.prefix}/`))) return s;
  return DOC_SERVICES[DOC_SERVICES.length - 1]!;
}

/** A documented service by its name, or undefined. */
export function serviceNamed(name: string): DocService | undefined {
  return DOC_SERVICES.find((s) => s.name === name);
}
