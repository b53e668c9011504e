/**
 * Bootable ISO images of the deploy ramdisk, for BIOS (SeaBIOS, El Torito and a hybrid MBR) and
 * UEFI (OVMF, the El Torito EFI image and a GPT EFI partition), booting GRUB, which loads
 * `/esi/vmlinuz` and `/esi/initramfs` with the kernel parameters of `/boot/grub/grub.cfg`:
 *
 * - {@link prepareGrubTree} runs `grub-mkrescue` (grub-common, with grub-pc-bin and
 *   grub-efi-amd64-bin; xorriso and mtools) once per ramdisk build to get GRUB's boot images
 *   and modules for both firmwares, and keeps the extracted tree (without the fonts, locales,
 *   themes and Mac files) and `boot_hybrid.img` in the cache;
 * - {@link writeIso} writes an ISO from that tree with `xorriso -as mkisofs` — the same options
 *   grub-mkrescue gives it, minus HFS+ — grafting in the kernel, the initramfs and a grub.cfg
 *   made for the kernel parameters. Nothing is copied first, so a per-node ISO takes about as
 *   long as writing its bytes (a fraction of a second for ~60 MB).
 *
 * Every ISO gets the same volume modification date (GRUB's EFI image finds its configuration by
 * the ISO's UUID, which GRUB derives from that date).
 */
import { execFile, type ExecFileOptions } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { missingToolError } from '../drivers/host-tools.ts';

const execFileAsync = promisify(execFile);

/**
 * Run `file` to completion (execFile).
 * @returns its stdout and stderr
 * @throws ToolNotFoundError naming the Debian package when `file` is not installed; execFile's error when it fails
 */
async function run(file: string, args: readonly string[], options: ExecFileOptions = {}): Promise<{ stdout: string; stderr: string }> {
  try {
    return await execFileAsync(file, args, { ...options, encoding: 'utf8' });
  } catch (err) {
    throw missingToolError(file, err) ?? err;
  }
}

/** Kernel parameters when none are given: serial console first for the logs, then the screen. */
export const DEFAULT_KERNEL_PARAMS = 'console=ttyS0,115200 console=tty0';
/** The ISO volume's modification date (and so GRUB's UUID of it), fixed. */
const ISO_DATE = '2024010100000000';
/** The ISO's volume id. */
const VOLUME_ID = 'ESI_RAMDISK';
/** x86's kernel command line limit, bytes (COMMAND_LINE_SIZE). */
const MAX_CMDLINE = 2048;

/**
 * The kernel parameters a node ISO boots with: `params`, after the default console parameters
 * unless `params` names a console itself.
 * @throws Error for a newline or a longer command line than the kernel takes
 */
export function bootParams(params: string): string {
  if (/[\r\n]/.test(params)) throw new Error('kernel parameters must be one line');
  const words = params.trim().split(/\s+/).filter(Boolean);
  const all = words.some((w) => w.startsWith('console=')) ? words : [...DEFAULT_KERNEL_PARAMS.split(' '), ...words];
  const line = all.join(' ');
  if (line.length > MAX_CMDLINE - 64) throw new Error(`kernel parameters too long (${line.length} characters)`);
  return line;
}

/** A GRUB word quoted so that GRUB's parser passes it as is (`'…'`, a quote as `'\''`). */
function grubQuote(word: string): string {
  return `'${word.replace(/'/g, "'\\''")}'`;
}

/** The grub.cfg of a ramdisk ISO booting with `params` (see {@link bootParams}). */
export function grubConfig(params: string): string {
  const words = bootParams(params).split(' ').map(grubQuote).join(' ');
  return [
    'insmod all_video',
    'serial --unit=0 --speed=115200',
    'terminal_input serial console',
    'terminal_output serial console',
    'set timeout=1',
    'set default=0',
    'menuentry "esi deploy ramdisk" {',
    `  linux /esi/vmlinuz ${words}`,
    '  initrd /esi/initramfs',
    '}',
    '',
  ].join('\n');
}

/**
 * Put GRUB's boot tree for BIOS and UEFI into `dir/iso-tree` and its hybrid MBR into
 * `dir/boot_hybrid.img` (see the module documentation).
 * @throws Error when grub-mkrescue or xorriso fails
 */
export async function prepareGrubTree(dir: string): Promise<void> {
  const work = await fs.mkdtemp(path.join(dir, '.grub-'));
  try {
    const src = path.join(work, 'src');
    await fs.mkdir(path.join(src, 'boot/grub'), { recursive: true });
    await fs.writeFile(path.join(src, 'boot/grub/grub.cfg'), '\n');
    const iso = path.join(work, 'grub.iso');
    await run('grub-mkrescue', ['-o', iso, '--fonts=', '--locales=', '--themes=', src], { maxBuffer: 16 * 1024 * 1024 });
    const tree = path.join(dir, 'iso-tree');
    await run('xorriso', ['-osirrox', 'on', '-indev', iso, '-extract', '/', tree], { maxBuffer: 16 * 1024 * 1024 });
    // osirrox keeps the ISO's read-only modes; the cache must stay removable.
    await run('chmod', ['-R', 'u+w', tree]);
    for (const gone of ['System', 'mach_kernel', 'boot.catalog', 'boot/grub/grub.cfg'])
      await fs.rm(path.join(tree, gone), { recursive: true, force: true });
    await fs.copyFile('/usr/lib/grub/i386-pc/boot_hybrid.img', path.join(dir, 'boot_hybrid.img'));
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/**
 * Write an ISO of the ramdisk in `dir` (kernel `dir/vmlinuz`, initramfs `dir/initramfs`, the
 * GRUB tree of {@link prepareGrubTree}) booting with `params`, to `out` (through a temporary
 * file renamed into place).
 * @returns the ISO's size, bytes
 * @throws Error when xorriso fails or the parameters are not acceptable
 */
export async function writeIso(dir: string, params: string, out: string): Promise<number> {
  const cfg = grubConfig(params);
  const tmp = `${out}.${process.pid}.${Date.now()}.tmp`;
  const cfgFile = `${tmp}.grub.cfg`;
  await fs.writeFile(cfgFile, cfg);
  try {
    await run(
      'xorriso',
      [
        '-as',
        'mkisofs',
        '-graft-points',
        `--modification-date=${ISO_DATE}`,
        '-V',
        VOLUME_ID,
        '-b',
        'boot/grub/i386-pc/eltorito.img',
        '-no-emul-boot',
        '-boot-load-size',
        '4',
        '-boot-info-table',
        '--grub2-boot-info',
        '--grub2-mbr',
        path.join(dir, 'boot_hybrid.img'),
        '--efi-boot',
        'efi.img',
        '-efi-boot-part',
        '--efi-boot-image',
        '--protective-msdos-label',
        '-o',
        tmp,
        '-r',
        path.join(dir, 'iso-tree'),
        `esi/vmlinuz=${path.join(dir, 'vmlinuz')}`,
        `esi/initramfs=${path.join(dir, 'initramfs')}`,
        `boot/grub/grub.cfg=${cfgFile}`,
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    await fs.rename(tmp, out);
    return (await fs.stat(out)).size;
  } catch (err) {
    await fs.rm(tmp, { force: true });
    const e = err as Error & { stderr?: string };
    throw new Error(`xorriso failed writing ${out}: ${(e.stderr ?? e.message).trim().split('\n').slice(-3).join(' ')}`, { cause: err });
  } finally {
    await fs.rm(cfgFile, { force: true });
  }
}
