/**
 * More response schemas of the compute API (TypeBox; ./response-schemas.ts has flavors, key
 * pairs and servers): flavor extra specs and access lists, and the answers of server actions,
 * as Nova's compute api-ref shows them (./routes-flavors.ts, routes-server-actions.ts write
 * them). Strict where the wire format is fixed; test/api/ops/openapi-responses-compute.test.ts
 * checks real answers against them.
 */
import { Type } from '@sinclair/typebox';
import { ServerObject } from './response-schemas.ts';

const strict = { additionalProperties: false } as const;
/** Extra specs: text values by key. */
const Specs = Type.Record(Type.String(), Type.String());

/**
 * `GET /flavors/{id}/os-extra_specs`, `POST /flavors/{id}/os-extra_specs` (Nova's api-ref,
 * "Flavors extra-specs"): all the flavor's specs, or those written.
 */
export const ExtraSpecsResponse = Type.Object({ extra_specs: Specs }, strict);

/** `GET|PUT /flavors/{id}/os-extra_specs/{key}`: `{"<key>": value}`, the one spec. */
export const ExtraSpecResponse = Type.Record(Type.String(), Type.String(), { minProperties: 1, maxProperties: 1 });

/**
 * `GET /flavors/{id}/os-flavor-access` and `POST /flavors/{id}/action` (Nova's api-ref,
 * "Flavors access"): the projects a private flavor is open to.
 */
export const FlavorAccessResponse = Type.Object(
  { flavor_access: Type.Array(Type.Object({ flavor_id: Type.String(), tenant_id: Type.String() }, strict)) },
  strict,
);

/**
 * `POST /servers/{id}/action` (Nova's api-ref, "Servers - run an action"): `rebuild` answers
 * 202 with the server (the detailed view, plus `adminPass` when the request gave one),
 * `os-getConsoleOutput` 200 with the log; `os-start`, `os-stop` and `reboot` answer 202
 * without a body.
 */
export const ServerActionResponse = Type.Union(
  [
    Type.Object({ server: Type.Composite([ServerObject, Type.Object({ adminPass: Type.Optional(Type.String()) })], strict) }, strict),
    Type.Object({ output: Type.String({ description: 'the console log, or its last `length` lines' }) }, strict),
  ],
  { description: 'os-start, os-stop and reboot: 202 without a body' },
);
