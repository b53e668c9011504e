/**
 * `esi image build debian`: build esi's Debian 12 cloud image on this machine
 * (src/osimage/debian.ts, docs/os-images.md), or take it from the cache
 * (`--cache-dir`, else `$ESI_CACHE_DIR`, else `~/.cache/esi`), optionally copy it (`--output`)
 * and upload it to esi's image service (`--upload`), as `openstack image create --disk-format
 * qcow2 --container-format bare --file …` does with the Glance v2 API
 * (https://docs.openstack.org/api-ref/image/v2/): `POST /v2/images`, then
 * `PUT /v2/images/{id}/file` with the bytes (`application/octet-stream`); an image whose upload
 * fails is deleted again. The upload uses the `OS_*` session like every other command.
 *
 * Prints the qcow2's path, cache key, size and virtual size (bytes), the build's seconds (empty
 * when cached) and, when uploaded, the image id. Building needs root and the Debian mirror; the
 * build's progress goes to standard error (`--verbose`: every line of debootstrap, apt and the
 * disk tools).
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import { Agent, request } from 'undici';
import { buildDebianImage } from '../../osimage/debian.ts';
import { cacheRoot } from '../../osimage/cache.ts';
import { addOutputOptions, printShow, type OutputOptions } from '../output.ts';
import { CliError, apiErrorMessage, withSession, type Session } from '../session.ts';

interface BuildOptions extends OutputOptions {
  output?: string;
  cacheDir?: string;
  force?: boolean;
  upload?: boolean;
  name: string;
  visibility: string;
  kernel: string;
  verbose?: boolean;
}

const VISIBILITIES = ['private', 'shared', 'community', 'public'];

/** Register `image build debian` (creating the `image` group if no other command has). */
export function registerImageBuildCommands(program: Command): void {
  const image = program.commands.find((c) => c.name() === 'image') ?? program.command('image').description('OS images');
  const build = image.command('build').description('build an OS image on this machine');
  addOutputOptions(
    build
      .command('debian')
      .description('build (or take from the cache) the Debian 12 cloud image: qcow2, UEFI + BIOS, cloud-init reading the config drive')
      .option('--output <file>', 'copy the qcow2 image to this file')
      .option('--cache-dir <dir>', 'cache directory (default $ESI_CACHE_DIR, else ~/.cache/esi)')
      .option('--force', 'build even when the cache has the image, and replace it')
      .option('--kernel <kind>', 'cloud (small, virtual machines and NVMe) or generic (every driver, physical servers)', 'cloud')
      .option('--upload', 'upload the image to the image service (OS_* credentials)')
      .option('--name <name>', 'name of the uploaded image', 'debian-12')
      .option('--visibility <visibility>', `visibility of the uploaded image: ${VISIBILITIES.join(', ')}`, 'private')
      .option('--verbose', 'show every line of the build'),
  ).action(async (o: BuildOptions) => {
    if (o.kernel !== 'cloud' && o.kernel !== 'generic') throw new CliError(`--kernel must be cloud or generic (got "${o.kernel}").`);
    if (!VISIBILITIES.includes(o.visibility))
      throw new CliError(`--visibility must be one of ${VISIBILITIES.join(', ')} (got "${o.visibility}").`);
    const log = (line: string) => {
      if (o.verbose || line.startsWith('== ')) process.stderr.write(`${line}\n`);
    };
    const img = await buildDebianImage({
      cacheDir: o.cacheDir ?? cacheRoot(process.env),
      force: o.force === true,
      kernel: o.kernel,
      log,
    }).catch((err: unknown) => {
      throw new CliError((err as Error).message);
    });
    if (o.output !== undefined) {
      try {
        await fs.promises.copyFile(img.path, o.output);
      } catch (err) {
        throw new CliError(`cannot copy the image to ${o.output}: ${(err as Error).message}`);
      }
    }
    let uploaded: Record<string, any> | null = null;
    if (o.upload) uploaded = await withSession((s) => uploadImage(s, img.path, o.name, o.visibility));
    printShow(
      Object.entries({
        path: img.path,
        key: img.key,
        size: img.bytes,
        virtual_size: img.virtualBytes,
        built: img.built,
        build_seconds: img.buildSeconds,
        ...(o.output !== undefined ? { output: o.output } : {}),
        ...(uploaded ? { image_id: uploaded.id, image_name: uploaded.name, image_status: uploaded.status } : {}),
      }),
      o,
    );
  });
}

/**
 * Create a qcow2/bare image and upload `file` into it (Glance v2). The image is deleted again
 * when the upload fails.
 * @returns the image as the service shows it after the upload
 * @throws CliError for API and connection errors
 */
async function uploadImage(s: Session, file: string, name: string, visibility: string): Promise<Record<string, any>> {
  const created = await s.call('image', 'POST', '/v2/images', {
    body: { name, disk_format: 'qcow2', container_format: 'bare', visibility },
  });
  try {
    await putData(s, `/v2/images/${created.id}/file`, file);
  } catch (err) {
    await s.call('image', 'DELETE', `/v2/images/${created.id}`).catch(() => undefined);
    throw err;
  }
  return s.call('image', 'GET', `/v2/images/${created.id}`);
}

/** `PUT` the bytes of `file` as `application/octet-stream` to the image service. @throws CliError */
async function putData(s: Session, pathBelow: string, file: string): Promise<void> {
  const { token } = await s.authenticate();
  const url = `${await s.endpoint('image')}${pathBelow}`;
  const size = (await fs.promises.stat(file)).size;
  const ca = s.settings.caCert ? fs.readFileSync(s.settings.caCert) : undefined;
  const dispatcher = new Agent({ connect: ca ? { ca } : {}, connectTimeout: 10_000, bodyTimeout: 0, headersTimeout: 0 });
  try {
    let res;
    try {
      res = await request(url, {
        method: 'PUT',
        headers: {
          'content-type': 'application/octet-stream',
          'content-length': String(size),
          'x-auth-token': token,
          'user-agent': 'esi-cli',
        },
        body: fs.createReadStream(file),
        dispatcher,
      });
    } catch (err) {
      throw new CliError(`cannot upload to ${new URL(url).origin}: ${(err as Error).message}`);
    }
    const text = await res.body.text();
    if (res.statusCode >= 400) {
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: the text itself
      }
      throw new CliError(`${apiErrorMessage(body, res.statusCode)} (HTTP ${res.statusCode})`, res.statusCode);
    }
  } finally {
    await dispatcher.close();
  }
}
