/**
 * Response schemas of the lease API (TypeBox), for the document (`/openapi/lease.json`): the
 * offer, the lease and the node as esi-leap shows them (`esi_leap/api/controllers/v1/offer.py` and
 * `lease.py`, `node.py` in https://github.com/CCI-MOC/esi-leap; ./render.ts writes them), and their
 * collections.
 *
 * The wire format is fixed, so every object is `additionalProperties: false` and every field is
 * required (test/api/ops/openapi-responses.test.ts checks real answers against them). Times are
 * esi-leap's: naive ISO 8601 in UTC, microseconds only when not zero (`2030-01-01T12:00:00`).
 */
import { Type } from '@sinclair/typebox';
import { LEASE_STATUSES, OFFER_STATUSES } from '../../domain/leasing/index.ts';

const Str = Type.String();
const StrOrNull = Type.Union([Type.String(), Type.Null()]);
const Dict = Type.Object({}, { additionalProperties: true });
const Time = Type.String({ description: 'naive ISO 8601, UTC' });
const TimeOrNull = Type.Union([Time, Type.Null()]);
const oneOf = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));

/** The fields an offer and a lease share: the resource, its hardware, the window. */
const resourceFields = {
  uuid: Str,
  name: StrOrNull,
  project_id: Str,
  project: StrOrNull,
  resource_type: Str,
  resource_uuid: Str,
  resource: StrOrNull,
  resource_class: StrOrNull,
  resource_properties: Dict,
  start_time: Time,
  end_time: Time,
  properties: Dict,
  parent_lease_uuid: StrOrNull,
};

/** An offer (`GET /v1/offers/{ident}`, `POST /v1/offers`, an item of `GET /v1/offers`). */
export const OfferResponse = Type.Object(
  {
    ...resourceFields,
    lessee_id: StrOrNull,
    lessee: StrOrNull,
    status: oneOf(OFFER_STATUSES),
    availabilities: Type.Array(Type.Array(Time, { minItems: 2, maxItems: 2 }), { description: 'free windows [start, end] of the offer' }),
  },
  { additionalProperties: false },
);

/** A lease (`GET /v1/leases/{ident}`, `POST /v1/leases`, a claim, an item of `GET /v1/leases`). */
export const LeaseResponse = Type.Object(
  {
    ...resourceFields,
    owner_id: Str,
    owner: StrOrNull,
    fulfill_time: TimeOrNull,
    expire_time: TimeOrNull,
    status: oneOf(LEASE_STATUSES),
    purpose: StrOrNull,
    offer_uuid: StrOrNull,
  },
  { additionalProperties: false },
);

/** `GET /v1/offers`. */
export const OfferCollection = Type.Object({ offers: Type.Array(OfferResponse) }, { additionalProperties: false });

/** `GET /v1/leases`. */
export const LeaseCollection = Type.Object({ leases: Type.Array(LeaseResponse) }, { additionalProperties: false });

/** A node as esi-leap lists it (`GET /v1/nodes`); `maintenance` is the string `"True"` or `"False"`. */
export const LeaseNodeResponse = Type.Object(
  {
    uuid: Str,
    name: StrOrNull,
    owner: StrOrNull,
    lessee: StrOrNull,
    resource_class: StrOrNull,
    provision_state: StrOrNull,
    target_provision_state: StrOrNull,
    power_state: StrOrNull,
    target_power_state: StrOrNull,
    maintenance: Type.Union([Type.Literal('True'), Type.Literal('False')]),
    properties: Dict,
    offer_uuid: StrOrNull,
    lease_uuid: StrOrNull,
    future_offers: Type.Array(Str),
    future_leases: Type.Array(Str),
  },
  { additionalProperties: false },
);

/** `GET /v1/nodes`. */
export const LeaseNodeCollection = Type.Object({ nodes: Type.Array(LeaseNodeResponse) }, { additionalProperties: false });
