/**
 * Response schemas of the operations endpoints and of esi's own root (TypeBox), for the document
 * (`/openapi/ops.json`): `GET /`, `GET /healthz`, `GET /readyz`, and the OpenAPI documents
 * themselves (`GET /openapi.json`, `GET /openapi/<service>.json`, src/api/docs). esi's own
 * formats (docs/operations.md, docs/api.md), no OpenStack service's: strict where they are
 * fixed (test/api/ops/openapi-responses-ops.test.ts checks real answers against them).
 */
import { Type } from '@sinclair/typebox';

const Str = Type.String();
const strict = { additionalProperties: false } as const;

/**
 * `GET /` (src/server/app.ts): esi's name, one line on it, and the URL of each service's
 * API (the identity one at `/identity/v3`, compute at `/compute/v2.1`, the others at their prefix).
 */
export const RootResponse = Type.Object(
  {
    name: Type.Literal('esi'),
    description: Str,
    services: Type.Object({ identity: Str, baremetal: Str, lease: Str, image: Str, network: Str, compute: Str }, strict),
  },
  strict,
);

/** `GET /healthz` (liveness): `{"status": "ok"}` while the process serves HTTP. */
export const HealthResponse = Type.Object({ status: Type.Literal('ok') }, strict);

/** One readiness check by name (`database`, `conductor`…): whether it passed, and a word on it (no driver message). */
const ReadinessCheck = Type.Object({ ok: Type.Boolean(), detail: Str }, strict);

/**
 * `GET /readyz` when ready (200): `{"status": "ready", "checks": {<name>: {ok, detail}}}`;
 * when not, the same with `"status": "not ready"` and 503 (src/server/health.ts).
 */
export const ReadinessResponse = Type.Object({ status: Type.Literal('ready'), checks: Type.Record(Str, ReadinessCheck) }, strict);

/**
 * An OpenAPI 3.1 document as esi serves it (`GET /openapi.json`, `GET /openapi/<service>.json`;
 * https://spec.openapis.org/oas/v3.1.0): the OpenAPI version, `info`, the token security
 * scheme and the services' error answers in `components`, the default security, one tag per
 * service, and the operations by path. The operations' own schemas are the OpenAPI
 * specification's, not repeated here.
 */
export const OpenApiDocumentResponse = Type.Object(
  {
    openapi: Type.Literal('3.1.0'),
    info: Type.Object({ title: Str, version: Str, description: Str }, strict),
    components: Type.Object(
      {
        securitySchemes: Type.Record(Str, Type.Object({}, { additionalProperties: true })),
        responses: Type.Record(Str, Type.Object({}, { additionalProperties: true })),
        schemas: Type.Optional(Type.Record(Str, Type.Object({}, { additionalProperties: true }))),
      },
      strict,
    ),
    security: Type.Array(Type.Record(Str, Type.Array(Str))),
    tags: Type.Array(Type.Object({ name: Str, description: Str }, strict)),
    paths: Type.Record(Str, Type.Record(Str, Type.Object({}, { additionalProperties: true }), { description: 'operations by method' })),
  },
  strict,
);
