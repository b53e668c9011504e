/**
 * `esi ramdisk build` and `esi ramdisk iso`: esi's deploy ramdisk (src/ramdisk/,
 * docs/ramdisk.md), built on this machine from its Debian packages or taken from the cache
 * (`--cache-dir`, else `$ESI_CACHE_DIR`, else `~/.cache/esi`).
 *
 * - `build [--force]` prints the kernel's, the initramfs' and the ISO's paths and sizes
 *   (bytes), the cache key, and the build's seconds (empty when it came from the cache);
 * - `iso --params "<kernel parameters>" --output FILE` writes an ISO of the ramdisk (built
 *   first if needed) that boots with those parameters (e.g. `ipa-api-url=…`), as the conductor
 *   does per node for virtual media boot, and prints its path and size.
 *
 * `--json` is `-f json`. Progress goes to standard error.
 */
import type { Command } from 'commander';
import { cacheRoot } from '../../osimage/cache.ts';
import { buildNodeIso, buildRamdisk, type Ramdisk } from '../../ramdisk/index.ts';
import { addOutputOptions, printShow, type OutputOptions } from '../output.ts';
import { CliError } from '../session.ts';

interface RamdiskOptions extends OutputOptions {
  cacheDir?: string;
  force?: boolean;
  json?: boolean;
}

interface IsoOptions extends RamdiskOptions {
  params: string;
  output: string;
}

/** The output options, `--json` meaning `-f json`. */
function output(o: RamdiskOptions): OutputOptions {
  return { format: o.json ? 'json' : o.format, column: o.column };
}

/** Build or take the ramdisk, turning failures into one-line CLI errors. */
async function ramdisk(o: RamdiskOptions): Promise<Ramdisk> {
  return buildRamdisk({
    cacheDir: o.cacheDir ?? cacheRoot(process.env),
    force: o.force === true,
    log: (line) => process.stderr.write(`${line}\n`),
  }).catch((err: unknown) => {
    throw new CliError((err as Error).message);
  });
}

/** Register `ramdisk build` and `ramdisk iso`. */
export function registerRamdiskCommands(program: Command): void {
  const group = program.command('ramdisk').description("esi's deploy ramdisk (the agent on real machines)");
  addOutputOptions(
    group
      .command('build')
      .description('build (or take from the cache) the deploy ramdisk: kernel, initramfs and a BIOS/UEFI ISO')
      .option('--cache-dir <dir>', 'cache directory (default $ESI_CACHE_DIR, else ~/.cache/esi)')
      .option('--force', 'build even when the cache has the ramdisk, and replace it')
      .option('--json', 'print JSON (-f json)'),
  ).action(async (o: RamdiskOptions) => {
    const r = await ramdisk(o);
    printShow(
      [
        ['kernel', r.kernel],
        ['kernel_bytes', r.sizes.kernel],
        ['initramfs', r.initramfs],
        ['initramfs_bytes', r.sizes.initramfs],
        ['iso', r.iso],
        ['iso_bytes', r.sizes.iso],
        ['key', r.key],
        ['built', r.built],
        ['build_seconds', r.buildSeconds === null ? '' : Math.round(r.buildSeconds * 10) / 10],
      ],
      output(o),
    );
  });
  addOutputOptions(
    group
      .command('iso')
      .description('write an ISO of the deploy ramdisk booting with the given kernel parameters')
      .requiredOption('--params <params>', 'kernel parameters, e.g. "ipa-api-url=http://10.0.0.1:8585/baremetal"')
      .requiredOption('--output <file>', 'the ISO file to write')
      .option('--cache-dir <dir>', 'cache directory (default $ESI_CACHE_DIR, else ~/.cache/esi)')
      .option('--force', 'rebuild the ramdisk first even when the cache has it')
      .option('--json', 'print JSON (-f json)'),
  ).action(async (o: IsoOptions) => {
    const r = await ramdisk(o);
    const { bytes } = await buildNodeIso(r, { kernelParams: o.params, out: o.output }).catch((err: unknown) => {
      throw new CliError((err as Error).message);
    });
    printShow(
      [
        ['iso', o.output],
        ['iso_bytes', bytes],
        ['key', r.key],
      ],
      output(o),
    );
  });
}
