/**
 * Errors Fastify raises before any route is chosen — an over-long path parameter
 * (`FST_ERR_MAX_PARAM_LENGTH`) or a malformed percent-encoding (`FST_ERR_BAD_URL`) — bypass
 * the services' error handlers. This module sends them to the renderer of the service whose
 * path prefix the URL starts with, so every answer stays in that API's own error format.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Renders one error in a service's wire format. */
export type RawErrorRenderer = (request: FastifyRequest, reply: FastifyReply, status: number, message: string) => void;

/**
 * Build Fastify's `frameworkErrors` option.
 * @param renderers service path prefix (e.g. `/baremetal`) → renderer; unmatched URLs get a
 *   plain JSON body
 */
export function frameworkErrorHandler(renderers: ReadonlyArray<readonly [string, RawErrorRenderer]>) {
  return (error: Error & { code?: string; statusCode?: number }, request: FastifyRequest, reply: FastifyReply): void => {
    const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : error.statusCode && error.statusCode < 500 ? error.statusCode : 400;
    const message =
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? 'A path parameter of the request URL is too long.'
        : 'The request URL is malformed (invalid percent-encoding).';
    const url = request.url ?? '';
    for (const [prefix, render] of renderers) {
      if (url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`)) {
        render(request, reply, status, message);
        return;
      }
    }
    void reply
      .code(status)
      .type('application/json')
      .send({ error: { code: status, message } });
  };
}
