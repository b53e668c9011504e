/**
 * Response schemas of the version documents at the roots of the network, image, compute and
 * lease APIs (TypeBox), for the documents (`/openapi/<service>.json`): what a client doing
 * version discovery on a catalogue URL reads, each in its service's own format (Neutron's
 * `GET /`, Glance's `GET /` and `/versions`, Nova's `GET /`, esi-leap's `GET /`), and the
 * documents at their version roots (`/network/v2.0`, `/compute/v2.1`, `/lease/v1`; see each
 * schema). The identity ones are in src/api/identity/auth-response-schemas.ts, Ironic's with
 * the baremetal routes. The wire format is fixed: `additionalProperties: false`, every field
 * required (test/api/ops/openapi-responses-ops.test.ts checks real answers against them).
 */
import { Type } from '@sinclair/typebox';

const Str = Type.String();
const strict = { additionalProperties: false } as const;
/** A link `{href, rel}` (`rel: self`: the version's root URL). */
const Link = Type.Object({ href: Str, rel: Str }, strict);

/**
 * `GET /network` (Neutron API reference, "List API versions"; neutron/api/versions.py):
 * `{"versions": [{"status": "CURRENT", "id": "v2.0", "links": [self]}]}`.
 */
export const NetworkVersionsResponse = Type.Object(
  { versions: Type.Array(Type.Object({ status: Str, id: Str, links: Type.Array(Link) }, strict)) },
  strict,
);

/**
 * `GET /network/v2.0` (Neutron API reference, "List API resources"; neutron/api/v2/router.py
 * `Index`): each resource collection with its name and URL. Needs a token, as the v2.0 routes do.
 */
export const NetworkResourcesResponse = Type.Object(
  { resources: Type.Array(Type.Object({ name: Str, collection: Str, links: Type.Array(Link) }, strict)) },
  strict,
);

/**
 * `GET /image` (300 Multiple Choices) and `GET /image/versions` (200) (Glance API reference,
 * "API versions"; glance/api/versions.py): every v2 minor version (`v2.7` CURRENT, the others
 * SUPPORTED), each with its self link to `/image/v2/`.
 */
export const ImageVersionsResponse = Type.Object(
  { versions: Type.Array(Type.Object({ id: Str, status: Str, links: Type.Array(Link) }, strict)) },
  strict,
);

/**
 * `GET /compute` (Nova API reference, "List All Major Versions"; nova/api/openstack/compute/versions.py):
 * the v2.1 version with its microversion range, its self link only.
 */
export const ComputeVersionsResponse = Type.Object(
  {
    versions: Type.Array(
      Type.Object(
        {
          id: Str,
          status: Str,
          version: Str,
          min_version: Str,
          updated: Str,
          links: Type.Array(Link),
          'media-types': Type.Array(Type.Object({ base: Str, type: Str }, strict)),
        },
        strict,
      ),
    ),
  },
  strict,
);

/**
 * `GET /compute/v2.1` (Nova API reference, "Show Details of Specific API Version"): the v2.1
 * version with its microversion range, its self link and the `describedby` documentation link.
 */
export const ComputeVersionResponse = Type.Object(
  {
    version: Type.Object(
      {
        id: Str,
        status: Str,
        version: Str,
        min_version: Str,
        updated: Str,
        links: Type.Array(Type.Object({ href: Str, rel: Str, type: Type.Optional(Str) }, strict)),
        'media-types': Type.Array(Type.Object({ base: Str, type: Str }, strict)),
      },
      strict,
    ),
  },
  strict,
);

/**
 * `GET /lease/v1` (300 Multiple Choices): the one version, `v1.0`, with its self link.
 */
export const LeaseVersionsResponse = Type.Object(
  { versions: Type.Array(Type.Object({ id: Str, status: Str, links: Type.Array(Link) }, strict)) },
  strict,
);

/** esi-leap's version object: `v1`, versions 1.0–1.0 (esi_leap/api/controllers/root.py). */
const LeaseVersion = Type.Object({ id: Str, links: Type.Array(Link), status: Str, min_version: Str, version: Str }, strict);

/** `GET /lease` (esi-leap's root document): its name, description, default version and versions. */
export const LeaseRootResponse = Type.Object(
  { name: Str, description: Str, default_version: LeaseVersion, versions: Type.Array(LeaseVersion) },
  strict,
);
