/**
 * The network boot endpoints at `/boot` (esi's counterpart of the HTTP server Ironic's `ipxe`
 * boot interface writes its scripts to, `[deploy] http_url`), public like the ramdisk
 * endpoints — firmware has no credentials:
 *
 * | path                      | answer |
 * |---------------------------|--------|
 * | `GET /boot/boot.ipxe`     | the chain script every iPXE client gets from DHCP (src/domain/deploy/network-boot.ts `chainScript`) |
 * | `GET /boot/node.ipxe?mac=` | the script of that NIC: the deploy agent's kernel and ramdisk, or `exit` |
 * | `GET /boot/media/{node}.iso?temp_url_sig=&temp_url_expires=` | the node's virtual media ISO (src/domain/deploy/boot-media.ts); 404 without a valid signature |
 * | `GET /boot/media/{node}/kernel`, `…/ramdisk` (signed the same way) | the agent's kernel and ramdisk for network boot |
 *
 * Scripts are `text/plain` iPXE scripts, never an error page: iPXE shows what it gets.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { NetworkBootService } from '../../domain/deploy/network-boot.ts';
import type { BootFile, BootMediaService } from '../../domain/deploy/boot-media.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { chainScript, NETWORK_BOOT_SCRIPT } from '../../domain/deploy/network-boot.ts';
import type { ApiCommonDeps } from '../common/deps.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';

/** What the boot plugin receives. */
export interface BootApiDeps extends Pick<ApiCommonDeps, 'config'> {
  readonly networkBoot: NetworkBootService;
  readonly bootMedia: BootMediaService;
}

/** The query parameter `GET /boot/node.ipxe` reads: the NIC's MAC address. */
export const SCRIPT_QUERY = ['mac'] as const;
/** The query parameters the boot media routes read: the temporary URL's signature and expiry. */
export const MEDIA_QUERY = ['temp_url_sig', 'temp_url_expires'] as const;

/** Register the boot routes under the prefix given at registration (`/boot`). */
export const bootApi: FastifyPluginAsync<{ services: BootApiDeps }> = async (app, { services }) => {
  const scriptUrl = `${services.config.publicUrl}${NETWORK_BOOT_SCRIPT}`;
  const media = { config: { doc: routeDoc({ answer: 'binary', query: queryDoc(MEDIA_QUERY) }) } };
  app.get('/boot.ipxe', { config: { doc: routeDoc({ answer: 'text', noQuery: true }) } }, async (_req, reply) =>
    reply.type('text/plain; charset=utf-8').send(chainScript(scriptUrl)),
  );
  app.get<{ Querystring: { mac?: string } }>(
    '/node.ipxe',
    { config: { doc: routeDoc({ answer: 'text', query: queryDoc(SCRIPT_QUERY) }) } },
    async (req, reply) => {
      const [name] = SCRIPT_QUERY;
      const mac = typeof req.query[name] === 'string' ? req.query[name] : undefined;
      return reply.type('text/plain; charset=utf-8').send(await services.networkBoot.scriptFor(mac));
    },
  );
  const send = async (reply: FastifyReply, uuid: string | undefined, query: Record<string, unknown>, which: BootFile) => {
    try {
      if (uuid === undefined || !/^[0-9a-f-]{36}$/.test(uuid)) throw new NotFoundError('boot media', String(uuid));
      const [sig, expires] = MEDIA_QUERY;
      const file = await services.bootMedia.open(uuid, query[sig], query[expires], which);
      return reply.type('application/octet-stream').header('content-length', file.bytes).send(file.stream);
    } catch (err) {
      if (err instanceof NotFoundError) return reply.code(404).type('text/plain; charset=utf-8').send('Not Found\n');
      throw err;
    }
  };
  app.get<{ Params: { name: string }; Querystring: Record<string, unknown> }>('/media/:name', media, async (req, reply) =>
    send(reply, /^(.{36})\.iso$/.exec(req.params.name)?.[1], req.query, 'iso'),
  );
  app.get<{ Params: { uuid: string; file: string }; Querystring: Record<string, unknown> }>(
    '/media/:uuid/:file',
    media,
    async (req, reply) => {
      const which = req.params.file === 'kernel' || req.params.file === 'ramdisk' ? req.params.file : undefined;
      return send(reply, which === undefined ? undefined : req.params.uuid, req.query, which ?? 'iso');
    },
  );
};
