/**
 * Response schemas of the identity API's tokens, catalogue and version discovery (TypeBox), for
 * the document (`/openapi/identity.json`), as Keystone v3 shows them (Keystone API reference,
 * https://docs.openstack.org/api-ref/identity/v3/: "Authentication and token management",
 * "Service catalog and endpoints", "Versions"; ./render.ts, ./catalog.ts,
 * routes/catalog-routes.ts and routes/discovery.ts write them). The resources are in
 * ./response-schemas.ts.
 *
 * The wire format is fixed: `additionalProperties: false`, every field required except those
 * Keystone shows only for some tokens (scope, roles, catalogue, application credential)
 * (test/api/ops/openapi-responses-identity.test.ts checks real answers against them).
 */
import { Type } from '@sinclair/typebox';
import { CollectionLinks, KeystoneTime, SelfLink } from './response-schemas.ts';

const Str = Type.String();
const strict = { additionalProperties: false } as const;

/** A catalogue endpoint (a token's `catalog`, `GET /v3/auth/catalog`). */
export const CatalogEndpointObject = Type.Object(
  {
    id: Str,
    interface: Type.Union([Type.Literal('public'), Type.Literal('internal'), Type.Literal('admin')]),
    region: Str,
    region_id: Str,
    url: Str,
  },
  strict,
);

/** A catalogue entry: one service and its endpoints (`type`, `name`, `id`, `endpoints`). */
export const CatalogEntryObject = Type.Object({ type: Str, name: Str, id: Str, endpoints: Type.Array(CatalogEndpointObject) }, strict);

/** `GET /v3/auth/catalog` ("Get service catalog"): the catalogue of a scoped token. */
export const AuthCatalogResponse = Type.Object({ catalog: Type.Array(CatalogEntryObject), links: CollectionLinks }, strict);

/** `GET /v3/auth/system` ("Get available system scopes"): `[{"all": true}]` when the user has a system role, else `[]`. */
export const AuthSystemResponse = Type.Object(
  { system: Type.Array(Type.Object({ all: Type.Literal(true) }, strict), { maxItems: 1 }), links: CollectionLinks },
  strict,
);

const NamedDomain = Type.Object({ id: Str, name: Str }, strict);

/**
 * A token (`{"token": {...}}`, "Password authentication with scoped authorization", "Validate
 * and show information for token"): a project-scoped token has `project`, `is_domain`, `roles`
 * and (unless `?nocatalog`) `catalog`; a system-scoped one `system`, `roles` and `catalog`; an
 * unscoped one none of them. A token issued with an application credential names it.
 */
export const TokenResponse = Type.Object(
  {
    token: Type.Object(
      {
        methods: Type.Array(Str, { minItems: 1 }),
        user: Type.Object(
          { id: Str, name: Str, domain: NamedDomain, password_expires_at: Type.Null({ description: 'esi passwords do not expire' }) },
          strict,
        ),
        audit_ids: Type.Array(Str, { minItems: 1 }),
        expires_at: KeystoneTime,
        issued_at: KeystoneTime,
        project: Type.Optional(Type.Object({ id: Str, name: Str, domain: NamedDomain }, strict)),
        is_domain: Type.Optional(Type.Boolean()),
        system: Type.Optional(Type.Object({ all: Type.Literal(true) }, strict)),
        roles: Type.Optional(Type.Array(Type.Object({ id: Str, name: Str }, strict))),
        catalog: Type.Optional(Type.Array(CatalogEntryObject)),
        application_credential: Type.Optional(Type.Object({ id: Str, name: Str, restricted: Type.Boolean() }, strict)),
      },
      strict,
    ),
  },
  strict,
);

/** A service of the catalogue API (`GET /v3/services`). */
export const ServiceObject = Type.Object({ id: Str, type: Str, name: Str, enabled: Type.Boolean(), links: SelfLink }, strict);

/** `GET /v3/services/{id}`. */
export const ServiceResponse = Type.Object({ service: ServiceObject }, strict);

/** `GET /v3/services`. */
export const ServiceCollection = Type.Object({ services: Type.Array(ServiceObject), links: CollectionLinks }, strict);

/** An endpoint of the catalogue API (`GET /v3/endpoints`). */
export const EndpointObject = Type.Object(
  {
    id: Str,
    interface: CatalogEndpointObject.properties.interface,
    region: Str,
    region_id: Str,
    service_id: Str,
    url: Str,
    enabled: Type.Boolean(),
    links: SelfLink,
  },
  strict,
);

/** `GET /v3/endpoints/{id}`. */
export const EndpointResponse = Type.Object({ endpoint: EndpointObject }, strict);

/** `GET /v3/endpoints`. */
export const EndpointCollection = Type.Object({ endpoints: Type.Array(EndpointObject), links: CollectionLinks }, strict);

/** Keystone's v3 version object ("Versions"): id `v3.<minor>`, its self link and media type. */
export const IdentityVersionObject = Type.Object(
  {
    id: Str,
    status: Str,
    updated: Str,
    links: Type.Array(Type.Object({ rel: Str, href: Str }, strict)),
    'media-types': Type.Array(Type.Object({ base: Str, type: Str }, strict)),
  },
  strict,
);

/** `GET /identity` (300 Multiple Choices, as Keystone's root): `{"versions": {"values": [v3]}}`. */
export const IdentityVersionsResponse = Type.Object(
  { versions: Type.Object({ values: Type.Array(IdentityVersionObject) }, strict) },
  strict,
);

/** `GET /identity/v3`: `{"version": {...}}`. */
export const IdentityVersionResponse = Type.Object({ version: IdentityVersionObject }, strict);
