/**
 * Node state routes (https://docs.openstack.org/api-ref/baremetal/#node-management-nodes):
 * `GET /v1/nodes/{id}/states`, `PUT …/states/power` (202), `PUT …/states/provision` (202),
 * `GET|PUT …/states/console` (PUT 202), also reachable as `/v1/nodes/states/console/{id}` (Ironic's
 * routing quirk). An enabled console's `console_info` is `{"type": "websocket", "url":
 * "ws[s]://…/states/console/stream"}` (routes-console-stream.ts). A 202 carries a `Location` to the
 * states resource and no body.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidInputError } from '../../domain/errors.ts';
import { isProvisionVerb } from '../../domain/inventory/states.ts';
import { parseBoolLike } from '../../domain/inventory/validation.ts';
import { empty, nodeIdent, type BaremetalContext, type IdentParams } from './context.ts';
import { requireVersion, VERB_VERSIONS } from './microversion.ts';
import { consoleStreamPath } from './routes-console-stream.ts';
import { readQuery } from './query.ts';
import { renderStates } from './render.ts';
import { ConsoleBody, parseBody, PowerBody, ProvisionBody } from './schemas.ts';
import { NodeConsoleResponse, NodeStatesResponse } from './response-schemas-node.ts';
import { routeDoc } from '../common/route-doc.ts';

const NO_PARAMS = new Set<string>();

/** Register the node state routes. */
export function nodeStateRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const { inventory, base } = ctx;
  const statesUrl = (ident: string): string => `${base}/v1/nodes/${ident}/states`;

  app.get<{ Params: IdentParams }>(
    '/nodes/:ident/states',
    { config: { doc: routeDoc({ noQuery: true, response: NodeStatesResponse }) } },
    async (req) => {
      readQuery(req.query, NO_PARAMS);
      const view = await inventory.nodes.getStates(req.auth, nodeIdent(req, req.params.ident));
      return renderStates(view, req.ironicVersion);
    },
  );

  app.put<{ Params: IdentParams }>(
    '/nodes/:ident/states/power',
    { config: { doc: routeDoc({ body: PowerBody, answer: 'empty' }) } },
    async (req, reply) => {
      const v = req.ironicVersion;
      readQuery(req.query, NO_PARAMS);
      const body = parseBody(PowerBody, req.body, 'power state request');
      const timeout = body.timeout ?? null;
      if (body.target === 'soft rebooting' || body.target === 'soft power off' || timeout !== null)
        requireVersion(v, 27, 'Soft power actions and timeout');
      const ident = nodeIdent(req, req.params.ident);
      await inventory.nodes.setPowerState(req.auth, ident, body.target, timeout);
      return empty(reply, 202, statesUrl(ident));
    },
  );

  app.put<{ Params: IdentParams }>(
    '/nodes/:ident/states/provision',
    { config: { doc: routeDoc({ body: ProvisionBody, answer: 'empty' }) } },
    async (req, reply) => {
      const v = req.ironicVersion;
      readQuery(req.query, NO_PARAMS);
      const body = parseBody(ProvisionBody, req.body, 'provision state request');
      const verb = body.target;
      const min = isProvisionVerb(verb) ? VERB_VERSIONS[verb] : undefined;
      if (min !== undefined) requireVersion(v, min, `The "${verb}" verb`);
      const cd = body.configdrive;
      if (cd !== undefined && cd !== null && cd !== '') {
        if (verb === 'rebuild' && v < 35)
          throw new InvalidInputError('Adding a config drive is only supported when setting provision state to active');
        if (typeof cd === 'object' && v < 56)
          throw new InvalidInputError('Providing a JSON object for configdrive is only supported starting with API version 1.56');
        if (typeof cd === 'object' && 'vendor_data' in cd && v < 59) {
          throw new InvalidInputError('Providing vendor_data in configdrive is only supported starting with API version 1.59');
        }
      }
      // An empty list counts as none, at every version (Ironic 21.4 `check_allow_deploy_steps`).
      const deploySteps = Array.isArray(body.deploy_steps) && body.deploy_steps.length === 0 ? undefined : body.deploy_steps;
      if (deploySteps !== undefined && deploySteps !== null) requireVersion(v, 69, 'deploy_steps');
      let disableRamdisk: boolean | undefined;
      if (body.disable_ramdisk !== undefined && body.disable_ramdisk !== null) {
        requireVersion(v, 70, 'disable_ramdisk');
        disableRamdisk = parseBoolLike(body.disable_ramdisk);
        if (disableRamdisk === undefined) throw new InvalidInputError('disable_ramdisk must be a boolean.');
      }
      const ident = nodeIdent(req, req.params.ident);
      await inventory.nodes.setProvisionState(req.auth, ident, verb, {
        configdrive: cd,
        cleanSteps: body.clean_steps,
        deploySteps,
        rescuePassword: body.rescue_password,
        ...(disableRamdisk !== undefined ? { disableRamdisk } : {}),
      });
      return empty(reply, 202, statesUrl(ident));
    },
  );

  const getConsole = async (req: FastifyRequest<{ Params: IdentParams }>): Promise<unknown> => {
    readQuery(req.query, NO_PARAMS);
    const c = await inventory.nodes.getConsole(req.auth, nodeIdent(req, req.params.ident));
    const url = `${base}${consoleStreamPath(c.nodeUuid)}`.replace(/^http/, 'ws');
    return { console_enabled: c.console_enabled, console_info: c.console_info === null ? null : { ...c.console_info, url } };
  };
  const putConsole = async (req: FastifyRequest<{ Params: IdentParams }>, reply: FastifyReply): Promise<FastifyReply> => {
    readQuery(req.query, NO_PARAMS);
    const body = parseBody(ConsoleBody, req.body, 'console request');
    const enabled = parseBoolLike(body.enabled);
    if (enabled === undefined) throw new InvalidInputError(`Invalid value for enabled: ${JSON.stringify(body.enabled)} is not a boolean.`);
    const ident = nodeIdent(req, req.params.ident);
    await inventory.nodes.setConsole(req.auth, ident, enabled);
    return empty(reply, 202, `${statesUrl(ident)}/console`);
  };
  for (const path of ['/nodes/:ident/states/console', '/nodes/states/console/:ident']) {
    app.get<{ Params: IdentParams }>(path, { config: { doc: routeDoc({ noQuery: true, response: NodeConsoleResponse }) } }, getConsole);
    app.put<{ Params: IdentParams }>(path, { config: { doc: routeDoc({ body: ConsoleBody, answer: 'empty' }) } }, putConsole);
  }
}
