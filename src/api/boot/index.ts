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
import { routeDoc } from '../common/route-doc.ts';

/** What the boot plugin receives. */
export interface BootApiDeps extends Pick<ApiCommonDeps, 'config'> {
  readonly networkBoot: NetworkBootService;
  readonly bootMedia: BootMediaService;
}

/** Register the boot routes under the prefix given at registration (`/boot`). */
export const bootApi: FastifyPluginAsync<{ services: BootApiDeps }> = async (app, { services }) => {
  const scriptUrl = `${services.config.publicUrl}${NETWORK_BOOT_SCRIPT}`;
  const script = { config: { doc: routeDoc({ answer: 'text' }) } };
  const media = { config: { doc: routeDoc({ answer: 'binary' }) } };
  app.get('/boot.ipxe', script, async (_req, reply) => reply.type('text/plain; charset=utf-8').send(chainScript(scriptUrl)));
  app.get<{ Querystring: { mac?: string } }>('/node.ipxe', script, async (req, reply) => {
    const mac = typeof req.query.mac === 'string' ? req.query.mac : undefined;
    return reply.type('text/plain; charset=utf-8').send(await services.networkBoot.scriptFor(mac));
  });
  const send = async (reply: FastifyReply, uuid: string | undefined, query: Record<string, unknown>, which: BootFile) => {
    try {
      if (uuid === undefined || !/^[0-9a-f-]{36}$/.test(uuid)) throw new NotFoundError('boot media', String(uuid));
      const file = await services.bootMedia.open(uuid, query.temp_url_sig, query.temp_url_expires, which);
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
