/**
 * Request bodies of the Neutron actions and sub-resources whose attributes the domain reads
 * (src/domain/networking): router interfaces, trunk sub-ports, port forwardings and quotas, as
 * TypeBox schemas (the Neutron networking api-ref's request parameters), and the check that
 * holds a body to one. Each schema admits at least what the domain's parser admits; a body it
 * refuses is refused in the parser's words (Neutron's 400), which is asked first, so the
 * messages are the domain's. Values are checked here for shape; meaning (UUIDs, ranges, what
 * esi does not support) is the domain's, when the handler calls it.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { compiledCheck, firstError } from '../common/schema-check.ts';
import { InvalidInputError } from '../../domain/errors.ts';
import { QUOTA_RESOURCES } from '../../domain/networking/index.ts';
import { QUOTA_MAX } from '../../domain/networking/quotas.ts';

const StrOrNull = Type.Union([Type.String(), Type.Null()]);
const strict = { additionalProperties: false } as const;
/** Neutron's integer: a JSON integer or a string of digits; null for none. */
const IntOrDigits = Type.Union([Type.Integer(), Type.String({ pattern: '^\\s*\\d+\\s*$' }), Type.Null()]);

/**
 * `PUT /v2.0/routers/{id}/add_router_interface` and `remove_router_interface` (Neutron's api-ref,
 * "Add interface to router"): a subnet or a port, not wrapped.
 */
export const RouterInterfaceBody = Type.Object(
  { subnet_id: Type.Optional(StrOrNull), port_id: Type.Optional(StrOrNull) },
  { additionalProperties: false, description: 'one of subnet_id and port_id' },
);

/** A sub-port to add: its port and VLAN (`inherit` takes the port's network's). */
const SubPortAdd = Type.Object(
  {
    port_id: Type.String({ description: 'a UUID' }),
    segmentation_type: Type.Optional(Type.Union([Type.Literal('vlan'), Type.Literal('inherit')])),
    segmentation_id: Type.Optional(Type.Unknown({ description: 'the VLAN id (1-4094, integer or digits) for vlan; ignored for inherit' })),
  },
  { additionalProperties: true },
);

/** `PUT /v2.0/trunks/{id}/add_subports` (Neutron's api-ref, "Add subports to trunk"). */
export const AddSubPortsBody = Type.Object({ sub_ports: Type.Array(SubPortAdd, { minItems: 1 }) }, strict);

/** `PUT /v2.0/trunks/{id}/remove_subports` (Neutron's api-ref, "Delete subports from trunk"): the ports. */
export const RemoveSubPortsBody = Type.Object(
  {
    sub_ports: Type.Optional(
      Type.Union([
        Type.Array(Type.Object({ port_id: Type.String({ description: 'a UUID' }) }, { additionalProperties: true })),
        Type.Null(),
      ]),
    ),
  },
  strict,
);

/**
 * The attributes of a port forwarding (Neutron's api-ref, "Floating IPs port forwarding"): on
 * create `protocol`, `internal_port_id`, `internal_ip_address` and the ports (one port, or a
 * `first:last` range) are required; on update each is optional.
 */
export const PortForwardingAttrs = Type.Object(
  {
    protocol: Type.Optional(Type.String({ description: 'tcp or udp' })),
    internal_port_id: Type.Optional(Type.String({ description: 'a UUID' })),
    internal_ip_address: Type.Optional(StrOrNull),
    internal_port: Type.Optional(IntOrDigits),
    external_port: Type.Optional(IntOrDigits),
    internal_port_range: Type.Optional(Type.Union([Type.String({ description: 'first:last' }), Type.Integer(), Type.Null()])),
    external_port_range: Type.Optional(Type.Union([Type.String({ description: 'first:last' }), Type.Integer(), Type.Null()])),
    description: Type.Optional(StrOrNull),
  },
  strict,
);

/** `POST /v2.0/floatingips/{id}/port_forwardings` and `PUT …/{pf}`: {@link PortForwardingAttrs} in its wrapper. */
export const PortForwardingBody = Type.Object({ port_forwarding: PortForwardingAttrs }, strict);

/** The limits of a project to set (`-1`: no limit), and `check_limit` (refuse a limit below the usage). */
export const QuotaUpdateAttrs = Type.Object(
  {
    ...Object.fromEntries(QUOTA_RESOURCES.map((r) => [r, Type.Optional(Type.Integer({ minimum: -1, maximum: QUOTA_MAX }))])),
    check_limit: Type.Optional(Type.Boolean()),
    force: Type.Optional(Type.Boolean()),
  },
  strict,
);

/** `PUT /v2.0/quotas/{project_id}` (Neutron's api-ref, "Update quota for a project"): {@link QuotaUpdateAttrs} in its wrapper. */
export const QuotaUpdateBody = Type.Object({ quota: QuotaUpdateAttrs }, strict);

/**
 * A body held to its schema.
 * @param wordRefusal the domain's parser of the same body, called when the schema refuses it so
 *   that its message is the answer (it throws); a body it would take is refused with the
 *   schema's own words
 * @throws InvalidInputError (Neutron's 400)
 */
export function checkNeutronBody<S extends TSchema>(schema: S, body: unknown, wordRefusal: () => unknown): Static<S> {
  const check = compiledCheck(schema);
  if (check.Check(body)) return body;
  wordRefusal();
  const { path: where, message } = firstError(check, body);
  throw new InvalidInputError(`Invalid input for ${where}. Reason: ${message ?? 'invalid body'}.`, 'HTTPBadRequest');
}
