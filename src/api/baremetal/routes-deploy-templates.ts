/**
 * Deploy template routes (https://docs.openstack.org/api-ref/baremetal/#deploy-templates-deploy-templates;
 * Ironic 21.4 `ironic/api/controllers/v1/deploy_template.py`), from API 1.55:
 * `GET /v1/deploy_templates` (`fields`, `detail`, `limit`, `marker`, `sort_key`, `sort_dir`),
 * `POST /v1/deploy_templates` (201 + Location), `GET|PATCH|DELETE /v1/deploy_templates/{uuid or name}`
 * (`fields` on GET). Below 1.55 a GET is 404 and any other method 405 ("The API version does
 * not allow deploy templates", webob's shape). Rules and validation: src/domain/inventory/deploy-templates.ts.
 *
 * A template is shown as `uuid`, `created_at`, `updated_at`, `name`, `extra`, `links`, `steps`
 * (step `args` with secrets masked, as Ironic's `mask_dict_password`); a list shows `uuid`,
 * `name` and `links` unless `detail` or `fields` ask for more (`links` always). The `next` link
 * carries `sort_key`, `sort_dir`, `detail` and `fields` as Ironic writes them.
 *
 * A create or PATCH body is checked before the policy and the template's lookup, as Ironic's
 * validating decorators run first (./resource-body-schemas.ts).
 */
import type { FastifyInstance } from 'fastify';
import { InvalidInputError } from '../../domain/errors.ts';
import type { DeployTemplate } from '../../domain/inventory/deploy-templates.ts';
import { maskSecrets } from '../../domain/inventory/masking.ts';
import { empty, type BaremetalContext } from './context.ts';
import { resourceGate } from './http-errors.ts';
import { checkFields } from './node-list.ts';
import { boolParam, limitParam, listParam, readQuery, sortDirParam } from './query.ts';
import { collection, isoTime, links } from './render.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import {
  DeployTemplateCreateBody,
  DeployTemplatePatchBody,
  parseDeployTemplateCreate,
  parseDeployTemplatePatch,
} from './resource-body-schemas.ts';
import { DeployTemplateCollection, DeployTemplateResponse } from './response-schemas-resources.ts';

/** The API version deploy templates appeared in. */
const TEMPLATES_VERSION = 55;
/** Fields of a template, in Ironic's order. */
const FIELDS = ['uuid', 'created_at', 'updated_at', 'name', 'extra', 'links', 'steps'];
const KNOWN_FIELDS = new Set(FIELDS);
/** Fields of a list without `detail` or `fields`. */
const DEFAULT_FIELDS = ['uuid', 'name'];
const LIST_PARAMS = new Set(['fields', 'detail', 'limit', 'marker', 'sort_key', 'sort_dir']);
const NO_PARAMS = new Set<string>();
const SHOW_PARAMS = new Set(['fields']);

/** A template in Ironic's shape; `fields` null for all (`links` always shown). */
export function renderDeployTemplate(t: DeployTemplate, base: string, fields: readonly string[] | null): Record<string, unknown> {
  const all: Record<string, unknown> = {
    uuid: t.uuid,
    created_at: isoTime(t.created_at),
    updated_at: isoTime(t.updated_at),
    name: t.name,
    extra: t.extra,
    links: links(base, `deploy_templates/${t.uuid}`),
    steps: t.steps.map((s) => ({ interface: s.interface, step: s.step, args: maskSecrets(s.args), priority: s.priority })),
  };
  const out: Record<string, unknown> = {};
  for (const f of FIELDS) if (fields === null || fields.includes(f) || f === 'links') out[f] = all[f];
  return out;
}

/** Register the deploy template routes. */
export function deployTemplateRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const templates = ctx.inventory.deployTemplates;
  const { base } = ctx;

  for (const p of ['/deploy_templates', '/deploy_templates.json']) {
    app.get(p, { config: { doc: routeDoc({ query: queryDoc(LIST_PARAMS), response: DeployTemplateCollection }) } }, async (req) => {
      resourceGate(req.ironicVersion, TEMPLATES_VERSION, req.method, 'deploy templates');
      const q = readQuery(req.query, LIST_PARAMS);
      const detail = boolParam(q, 'detail');
      const requested = listParam(q, 'fields');
      if (requested !== undefined && detail) throw new InvalidInputError('Can not specify ?detail=True and fields in the same request.');
      if (requested !== undefined) checkFields(requested, req.ironicVersion, KNOWN_FIELDS, () => true);
      const fields = detail ? null : (requested ?? DEFAULT_FIELDS);
      const sortKey = q.sort_key ?? 'id';
      const sortDir = sortDirParam(q);
      const limit = limitParam(q);
      const list = await templates.list(req.auth, { limit, marker: q.marker ?? null, sortKey, sortDir });
      let args = `sort_key=${sortKey}&sort_dir=${sortDir}&`;
      if (detail !== undefined) args += `detail=${detail ? 'True' : 'False'}&`;
      if (requested !== undefined) args += `fields=${requested.join(',')}&`;
      return collection(
        'deploy_templates',
        list.map((t) => renderDeployTemplate(t, base, fields)),
        { limit, lastUuid: list.at(-1)?.uuid ?? null, base, resource: 'deploy_templates', args },
      );
    });

    app.post(p, { config: { doc: routeDoc({ body: DeployTemplateCreateBody, response: DeployTemplateResponse }) } }, async (req, reply) => {
      resourceGate(req.ironicVersion, TEMPLATES_VERSION, req.method, 'deploy templates');
      readQuery(req.query, NO_PARAMS);
      const t = await templates.create(req.auth, parseDeployTemplateCreate(req.body));
      reply.code(201).header('location', `${base}/v1/deploy_templates/${t.uuid}`);
      return renderDeployTemplate(t, base, null);
    });
  }

  app.get<{ Params: { ident: string } }>(
    '/deploy_templates/:ident',
    { config: { doc: routeDoc({ query: queryDoc(SHOW_PARAMS), response: DeployTemplateResponse }) } },
    async (req) => {
      resourceGate(req.ironicVersion, TEMPLATES_VERSION, req.method, 'deploy templates');
      const fields = listParam(readQuery(req.query, SHOW_PARAMS), 'fields') ?? null;
      if (fields !== null) checkFields(fields, req.ironicVersion, KNOWN_FIELDS, () => true);
      return renderDeployTemplate(await templates.get(req.auth, req.params.ident), base, fields);
    },
  );

  app.patch<{ Params: { ident: string } }>(
    '/deploy_templates/:ident',
    { config: { doc: routeDoc({ body: DeployTemplatePatchBody, response: DeployTemplateResponse }) } },
    async (req) => {
      resourceGate(req.ironicVersion, TEMPLATES_VERSION, req.method, 'deploy templates');
      readQuery(req.query, NO_PARAMS);
      return renderDeployTemplate(await templates.update(req.auth, req.params.ident, parseDeployTemplatePatch(req.body)), base, null);
    },
  );

  app.delete<{ Params: { ident: string } }>(
    '/deploy_templates/:ident',
    { config: { doc: routeDoc({ answer: 'empty' }) } },
    async (req, reply) => {
      resourceGate(req.ironicVersion, TEMPLATES_VERSION, req.method, 'deploy templates');
      readQuery(req.query, NO_PARAMS);
      await templates.delete(req.auth, req.params.ident);
      return empty(reply, 204);
    },
  );
}
