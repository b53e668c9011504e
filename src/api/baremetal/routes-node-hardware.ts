/**
 * Node hardware settings routes (https://docs.openstack.org/api-ref/baremetal/#node-bios-nodes and
 * "Node Management"): the BIOS settings cache (`GET /v1/nodes/{id}/bios`, `GET …/bios/{name}`, ≥
 * 1.40, registry fields from 1.74) and the target RAID configuration
 * (`PUT /v1/nodes/{id}/states/raid`, ≥ 1.12, 204; 406 before) and the boot mode
 * (`PUT /v1/nodes/{id}/states/boot_mode` `{"target": "uefi"|"bios"}`, ≥ 1.76, 202; set at the BMC
 * before answering, recorded in the node's `boot_mode`).
 *
 * Wire shapes (Ironic 21.4, as python-ironicclient's `node bios setting list|show` reads
 * them): the list is `{"bios": [setting, …]}`; one setting is `{"<name>": setting}`; a setting
 * has `name`, `value`, `created_at`, `updated_at`, `links`, plus from 1.74 (the list only with
 * `?detail=true`) `attribute_type`, `allowable_values`, `lower_bound`, `max_length`,
 * `min_length`, `read_only`, `reset_required`, `unique`, `upper_bound`. Before the gate
 * version the resource does not exist (404).
 */
import type { FastifyInstance } from 'fastify';
import { InvalidInputError, NotFoundError } from '../../domain/errors.ts';
import type { StoredBiosSetting } from '../../domain/inventory/node-hardware.ts';
import { empty, nodeIdent, type BaremetalContext, type IdentParams } from './context.ts';
import { NotAcceptableError } from './microversion.ts';
import { boolParam, readQuery } from './query.ts';
import { isoTime, links } from './render.ts';
import { isJsonObject } from '../../domain/inventory/masking.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import { BootModeBody, RaidTargetBody, unexpectedKeys } from './node-body-schemas.ts';
import { NodeBiosResponse, NodeBiosSettingResponse } from './response-schemas-node.ts';

const NO_PARAMS = new Set<string>();
const LIST_PARAMS = new Set(['detail', 'fields']);
/** Fields a BIOS setting has (Ironic `BIOSSetting`), for `?fields=`. */
const SETTING_FIELDS = new Set([
  'created_at',
  'updated_at',
  'links',
  'name',
  'value',
  'attribute_type',
  'allowable_values',
  'lower_bound',
  'max_length',
  'min_length',
  'read_only',
  'reset_required',
  'unique',
  'upper_bound',
]);

/** Register the node hardware settings routes. */
export function nodeHardwareRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const { base, services } = ctx;
  const gone = (v: number, min: number, ident: string): void => {
    if (v < min) throw new NotFoundError('resource', ident, 'The resource could not be found.', 'NotFound');
  };

  app.get<{ Params: IdentParams }>(
    '/nodes/:ident/bios',
    { config: { doc: routeDoc({ query: queryDoc(LIST_PARAMS), response: NodeBiosResponse }) } },
    async (req) => {
      const v = req.ironicVersion;
      gone(v, 40, req.params.ident);
      const q = readQuery(req.query, LIST_PARAMS);
      // Ironic `get_request_return_fields` with `allow_query_bios`: `detail` (true or false) or
      // `fields` before 1.74 is InvalidParameterValue (400).
      // (The value as Python prints the parsed one: `True`, `['name', 'value']`.)
      const detailParam = boolParam(q, 'detail');
      if (v < 74 && detailParam !== undefined)
        throw new InvalidInputError(`Invalid query parameter ?detail=${detailParam ? 'True' : 'False'} received.`);
      if (v < 74 && q.fields !== undefined)
        throw new InvalidInputError(
          `Invalid query parameter ?fields=[${q.fields
            .split(',')
            .map((f) => `'${f.trim()}'`)
            .join(', ')}] received.`,
        );
      const detail = detailParam === true;
      const fields =
        q.fields === undefined
          ? null
          : q.fields
              .split(',')
              .map((f) => f.trim())
              .filter((f) => f !== '');
      const unknown = (fields ?? []).filter((f) => !SETTING_FIELDS.has(f));
      if (unknown.length > 0) throw new InvalidInputError(`Field(s) "${unknown.join(', ')}" are not valid`);
      const { node, settings } = await services.nodeHardware.listBios(req.auth, nodeIdent(req, req.params.ident));
      return { bios: settings.map((s) => pick(renderSetting(s, node.uuid, base, detail && v >= 74), fields)) };
    },
  );

  app.get<{ Params: IdentParams & { name: string } }>(
    '/nodes/:ident/bios/:name',
    { config: { doc: routeDoc({ noQuery: true, response: NodeBiosSettingResponse }) } },
    async (req) => {
      const v = req.ironicVersion;
      gone(v, 40, req.params.ident);
      readQuery(req.query, NO_PARAMS);
      const { node, setting } = await services.nodeHardware.showBios(req.auth, nodeIdent(req, req.params.ident), req.params.name);
      return { [setting.name]: renderSetting(setting, node.uuid, base, v >= 74) };
    },
  );

  app.put<{ Params: IdentParams }>(
    '/nodes/:ident/states/boot_mode',
    { config: { doc: routeDoc({ body: BootModeBody, answer: 'empty' }) } },
    async (req, reply) => {
      gone(req.ironicVersion, 76, req.params.ident);
      readQuery(req.query, NO_PARAMS);
      const body = req.body;
      if (!isJsonObject(body)) throw new InvalidInputError('Invalid boot mode request: the body must be {"target": "uefi" | "bios"}.');
      const extra = unexpectedKeys(BootModeBody, body);
      if (extra.length > 0) throw new InvalidInputError(`Invalid boot mode request: unexpected key(s) ${extra.join(', ')}.`);
      const ident = nodeIdent(req, req.params.ident);
      // The target's value is the domain's to check, after the node's visibility (Ironic's order).
      await services.nodeHardware.setBootMode(req.auth, ident, body.target);
      return empty(reply, 202, `${base}/v1/nodes/${ident}/states`);
    },
  );

  app.put<{ Params: IdentParams }>(
    '/nodes/:ident/states/raid',
    { config: { doc: routeDoc({ body: RaidTargetBody, answer: 'empty' }) } },
    async (req, reply) => {
      readQuery(req.query, NO_PARAMS);
      // Ironic checks the node first (404 when the caller may not see it), then the version (406).
      if (req.ironicVersion < 12) {
        await ctx.inventory.nodes.get(req.auth, nodeIdent(req, req.params.ident));
        throw new NotAcceptableError('Request not acceptable. The minimal required API version should be 1.12');
      }
      await services.nodeHardware.setTargetRaid(req.auth, nodeIdent(req, req.params.ident), req.body ?? {});
      return empty(reply, 204);
    },
  );
}

/** One setting in Ironic's wire form; `registry` adds the 1.74 registry fields. */
function renderSetting(s: StoredBiosSetting, nodeUuid: string, base: string, registry: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    created_at: isoTime(s.created_at),
    updated_at: isoTime(s.updated_at),
    links: links(base, `nodes/${nodeUuid}/bios/${encodeURIComponent(s.name)}`),
    name: s.name,
    value: s.value,
  };
  if (registry) {
    Object.assign(out, {
      attribute_type: s.attribute_type,
      allowable_values: s.allowable_values,
      lower_bound: s.lower_bound,
      max_length: s.max_length,
      min_length: s.min_length,
      read_only: s.read_only,
      reset_required: s.reset_required,
      unique: s.unique,
      upper_bound: s.upper_bound,
    });
  }
  return out;
}

/** `setting` limited to `fields` (null: all). */
function pick(setting: Record<string, unknown>, fields: readonly string[] | null): Record<string, unknown> {
  if (fields === null) return setting;
  return Object.fromEntries(Object.entries(setting).filter(([k]) => fields.includes(k)));
}
