/**
 * The request body parser of the Neutron collections: a body is checked against its resource's
 * schema (./schemas.ts) and a refusal is Neutron's 400 with Neutron's wording (neutron-lib
 * `api/attributes.py` and `api/validators`), the same words the domain uses for the checks it
 * makes itself:
 *
 * | refusal                          | message                                                         |
 * |----------------------------------|-----------------------------------------------------------------|
 * | no wrapper, a bulk body          | ./wire.ts {@link unwrap}                                        |
 * | not an object                    | `Invalid input for network. Reason: the network must be a JSON object.` |
 * | an attribute it may not set      | `Attribute 'status' not allowed in POST`                        |
 * | an unknown attribute             | `Unrecognized attribute(s) 'colour'`                            |
 * | a required attribute missing     | `Failed to parse request. Required attribute 'network_id' not specified` |
 * | a value of the wrong shape       | `Invalid input for mtu. Reason: 'x' is not an integer.`         |
 */
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { compiledCheck } from '../common/schema-check.ts';
import { Value } from '@sinclair/typebox/value';
import { InvalidInputError } from '../../domain/errors.ts';
import { checkKeys } from '../../domain/networking/index.ts';
import { UUID_DESCRIPTION, type NeutronBodies } from './schemas.ts';
import { unwrap } from './wire.ts';

/** The JSON schema types a (possibly union) schema admits at its top level. */
function kinds(schema: TSchema): Set<string> {
  const members = (schema.anyOf as TSchema[] | undefined) ?? [schema];
  return new Set(members.map((m) => (m.const !== undefined ? typeof m.const : String(m.type))));
}

/** The longest string a (possibly union) schema admits, or undefined. */
function maxLength(schema: TSchema): number | undefined {
  const members = (schema.anyOf as TSchema[] | undefined) ?? [schema];
  return members.find((m) => m.type === 'string' && typeof m.maxLength === 'number')?.maxLength as number | undefined;
}

/** Neutron's reason why a value does not fit its attribute's schema. */
function reason(schema: TSchema, value: unknown, detail: string): string {
  const max = maxLength(schema);
  if (typeof value === 'string' && max !== undefined && value.length > max) return `'${value}' exceeds maximum length of ${max}`;
  const members = (schema.anyOf as TSchema[] | undefined) ?? [schema];
  if (members.some((m) => m.description === UUID_DESCRIPTION)) return `'${String(value)}' is not a valid UUID`;
  const k = kinds(schema);
  if (k.has('boolean')) return `'${String(value)}' is not a valid boolean value`;
  if (k.has('integer')) return `'${String(value)}' is not an integer`;
  if (k.has('string')) return `'${typeof value === 'object' ? JSON.stringify(value) : String(value)}' is not a valid string`;
  if (k.has('object') && (value === null || typeof value !== 'object' || Array.isArray(value)))
    return `'${JSON.stringify(value)}' is not a dictionary`;
  if (k.has('array') && !Array.isArray(value)) return `'${JSON.stringify(value)}' is not a list`;
  return `'${JSON.stringify(value)}' is not valid: ${detail}`;
}

/** The JSON schema type of a value (`array`, `object`, `null`, `integer`…). */
function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/**
 * Where inside a structured value (a list of objects…) it fails its schema: the error of the
 * union member of the value's own type, as `message at path` (the union's own error says less).
 */
function innerError(schema: TSchema, value: unknown): string | undefined {
  const members = (schema.anyOf as TSchema[] | undefined) ?? [schema];
  const member = members.find((m) => m.type === jsonType(value));
  const e = member && Value.Errors(member, value).First();
  if (!e) return undefined;
  return e.path === '' ? e.message : `${e.message} at ${e.path.slice(1)}`;
}

/**
 * The attributes of a create (`POST`) or update (`PUT`) body of a Neutron resource, checked
 * against its schema.
 * @param bodies the resource's schemas (./schemas.ts)
 * @param body the request body as sent (`{"network": {...}}`)
 * @returns the attributes inside the wrapper, typed by the schema
 * @throws InvalidInputError (Neutron's 400) with the messages in the module documentation
 */
export function parseNeutronBody<C extends TObject, U extends TObject>(
  bodies: NeutronBodies<C, U>,
  method: 'POST',
  body: unknown,
): Static<C>;
export function parseNeutronBody<C extends TObject, U extends TObject>(
  bodies: NeutronBodies<C, U>,
  method: 'PUT',
  body: unknown,
): Static<U>;
export function parseNeutronBody(bodies: NeutronBodies, method: 'POST' | 'PUT', body: unknown): Static<TObject> {
  const schema = method === 'POST' ? bodies.create : bodies.update;
  const collectionName = bodies.resource === 'rbac_policy' ? 'rbac_policies' : `${bodies.resource}s`;
  const attrs = unwrap(body, bodies.resource, collectionName);
  checkKeys(attrs, bodies.resource, new Set(Object.keys(schema.properties)), bodies.notSettable[method], method);
  const check = compiledCheck(schema);
  if (check.Check(attrs)) return attrs;
  const given = attrs as Record<string, unknown>;
  for (const name of schema.required ?? []) {
    if (given[name] === undefined || given[name] === null)
      throw new InvalidInputError(`Failed to parse request. Required attribute '${name}' not specified`, 'HTTPBadRequest');
  }
  const first = check.Errors(attrs).First();
  const attr = (first?.path ?? '').split('/')[1]?.replace(/~1/g, '/').replace(/~0/g, '~') ?? '';
  const attrSchema = schema.properties[attr];
  if (first === undefined || attrSchema === undefined)
    throw new InvalidInputError(`Invalid input for ${bodies.resource}. Reason: ${first?.message ?? 'invalid body'}.`, 'HTTPBadRequest');
  const detail = innerError(attrSchema, given[attr]) ?? first.message;
  throw new InvalidInputError(`Invalid input for ${attr}. Reason: ${reason(attrSchema, given[attr], detail)}.`, 'HTTPBadRequest');
}
