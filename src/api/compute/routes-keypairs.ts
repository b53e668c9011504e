/**
 * Key pair routes (Nova v2.1 `os-keypairs`): `GET|POST /os-keypairs`, `GET|DELETE
 * /os-keypairs/{name}`. Create answers 200 before 2.2 and 201 from it, delete 202 / 204;
 * `user_id` (admins acting for a user) from 2.10; `limit`/`marker` from 2.35.
 */
import type { FastifyInstance } from 'fastify';
import type { Compute } from '../../domain/compute/index.ts';
import { limitOf, readQuery } from './query.ts';
import { renderKeypair } from './render.ts';
import { checkNovaBody, KeypairCreateBody } from './bodies.ts';
import { KeypairCollection, KeypairCreateResponse, KeypairResponse } from './response-schemas.ts';
import { parseKeypairBody } from '../../domain/compute/keypairs.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';

/** The query parameters of `GET /os-keypairs` (`user_id` from 2.10, `limit` and `marker` from 2.35; Nova ignores any other). */
export const KEYPAIR_LIST_QUERY = ['user_id', 'limit', 'marker'] as const;
/** The query parameter of `GET /os-keypairs/{name}` (from 2.10). */
export const KEYPAIR_SHOW_QUERY = ['user_id'] as const;

/** Register the key pair routes on the `/v2.1` scope. */
export function keypairRoutes(app: FastifyInstance, compute: Compute, base: string): void {
  const { keypairs } = compute;
  const userOf = (q: Readonly<Record<string, string>>, v: number): string | undefined => (v >= 10 ? q.user_id : undefined);

  app.get(
    '/os-keypairs',
    { config: { doc: routeDoc({ query: queryDoc(KEYPAIR_LIST_QUERY), response: KeypairCollection }) } },
    async (req) => {
      const v = req.novaVersion;
      const q = readQuery(req.query);
      const limit = v >= 35 ? limitOf(q) : 1000;
      const marker = v >= 35 ? (q.marker ?? null) : null;
      const list = await keypairs.list(req.auth, limit, marker, userOf(q, v));
      const out: Record<string, unknown> = { keypairs: list.map((k) => ({ keypair: renderKeypair(k, v, 'list') })) };
      const last = list.at(-1);
      if (v >= 35 && list.length === limit && last !== undefined) {
        out.keypairs_links = [
          {
            rel: 'next',
            href: `${base}/v2.1/os-keypairs?${new URLSearchParams({ ...q, limit: String(limit), marker: last.name }).toString()}`,
          },
        ];
      }
      return out;
    },
  );

  app.post(
    '/os-keypairs',
    { config: { doc: routeDoc({ body: KeypairCreateBody, response: KeypairCreateResponse }) } },
    async (req, reply) => {
      const v = req.novaVersion;
      const body = checkNovaBody(KeypairCreateBody, req.body, () => parseKeypairBody(req.body, v));
      const made = await keypairs.create(req.auth, body, v);
      return reply.code(v >= 2 ? 201 : 200).send({ keypair: renderKeypair(made.keypair, v, 'create', made.privateKey) });
    },
  );

  app.get<{ Params: { name: string } }>(
    '/os-keypairs/:name',
    { config: { doc: routeDoc({ query: queryDoc(KEYPAIR_SHOW_QUERY), response: KeypairResponse }) } },
    async (req) => {
      const q = readQuery(req.query);
      return { keypair: renderKeypair(await keypairs.get(req.auth, req.params.name, userOf(q, req.novaVersion)), req.novaVersion, 'show') };
    },
  );

  app.delete<{ Params: { name: string } }>('/os-keypairs/:name', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (req, reply) => {
    const q = readQuery(req.query);
    await keypairs.delete(req.auth, req.params.name, userOf(q, req.novaVersion));
    return reply.code(req.novaVersion >= 2 ? 204 : 202).send();
  });
}
