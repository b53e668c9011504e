/**
 * File and process chores of the dnsmasq supervisor (./dnsmasq.ts): atomic file writes, the
 * permission check for dnsmasq's unprivileged user, its log file with rotation, and finding and
 * ending a dnsmasq left over from an earlier run.
 */
import { closeSync, fstatSync, openSync, renameSync, writeSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Write `content` to `file` atomically: a temporary file in the same directory, flushed, then
 * renamed over `file` — a reader (dnsmasq re-reading on SIGHUP) sees the old or the new file,
 * never half of one.
 * @param mode permission bits of the file (default 0644: dnsmasq re-reads it as `nobody`)
 */
export async function writeFileAtomic(file: string, content: string, mode = 0o644): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  const fh = await fs.open(tmp, 'w', mode);
  try {
    await fh.writeFile(content);
    await fh.chmod(mode);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}

/**
 * Why an unprivileged process (not the owner, not in the group) cannot reach `target`, or
 * null when it can: every directory from `/` down must be searchable by others (o+x), and the
 * target itself readable (o+r, and o+x for a directory). Only permission bits are read (no
 * ACLs); paths owned by `allowUid` pass.
 */
export async function unreachableForOthers(target: string, allowUid: number | null = null): Promise<string | null> {
  const abs = path.resolve(target);
  const parts = abs.split(path.sep).filter((p) => p !== '');
  let current: string = path.sep;
  for (let i = 0; i <= parts.length; i++) {
    if (i > 0) current = path.join(current, parts[i - 1]!);
    let st;
    try {
      st = await fs.stat(current);
    } catch (err) {
      return `${current}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
    }
    if (allowUid !== null && st.uid === allowUid) continue;
    const last = i === parts.length;
    const need = st.isDirectory() ? (last ? 0o005 : 0o001) : 0o004;
    if ((st.mode & need) !== need)
      return `${current} (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}) is not ${need === 0o004 ? 'readable' : 'searchable'} by others`;
  }
  return null;
}

/**
 * An append-only log file that keeps one old generation (`<file>.1`) once it passes
 * `maxBytes`. Writes are synchronous (a few lines at a time to a local file), so lines keep
 * their order across a rotation.
 */
export class RotatingLog {
  #fd: number | null;
  #size: number;

  private constructor(
    private readonly file: string,
    private readonly maxBytes: number,
  ) {
    this.#fd = RotatingLog.#open(file);
    this.#size = this.#fd === null ? 0 : fstatSync(this.#fd).size;
  }

  static #open(file: string): number | null {
    try {
      return openSync(file, 'a', 0o640);
    } catch {
      return null;
    }
  }

  /** Open (append to) `file`. @param maxBytes size at which it is rotated, bytes */
  static async open(file: string, maxBytes: number): Promise<RotatingLog> {
    return new RotatingLog(file, maxBytes);
  }

  /** Append text (lines with their newlines). Never throws: a log that cannot be written is dropped. */
  write(text: string): void {
    const bytes = Buffer.from(text);
    if (this.#size > 0 && this.#size + bytes.length > this.maxBytes) this.#rotate();
    if (this.#fd === null) return;
    try {
      writeSync(this.#fd, bytes);
      this.#size += bytes.length;
    } catch {
      // A full or vanished disk: the line is lost, dnsmasq keeps serving.
    }
  }

  #rotate(): void {
    this.#closeFd();
    try {
      renameSync(this.file, `${this.file}.1`);
    } catch {
      // The old log stays; the new lines follow it.
    }
    this.#fd = RotatingLog.#open(this.file);
    this.#size = 0;
  }

  #closeFd(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }

  /** Close the file. */
  async close(): Promise<void> {
    this.#closeFd();
  }
}

/** The command line of process `pid` (argv), or null when there is no such process. */
export async function processArgv(pid: number): Promise<string[] | null> {
  try {
    const raw = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8');
    return raw === '' ? null : raw.replace(/\0$/, '').split('\0');
  } catch {
    return null;
  }
}

/** True when `pid` exists and is not a zombie. */
export async function processAlive(pid: number): Promise<boolean> {
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/**
 * The dnsmasq processes started with `--conf-file=<confPath>`: the one in `pidFile` (if it is
 * such a process: a recycled pid is left alone) and any other found in /proc.
 */
export async function dnsmasqsUsing(confPath: string, pidFile: string): Promise<number[]> {
  const isOurs = (argv: string[] | null): boolean =>
    argv !== null && argv.includes(`--conf-file=${confPath}`) && argv.some((a) => path.basename(a) === 'dnsmasq');
  const found = new Set<number>();
  const fromFile = Number((await fs.readFile(pidFile, 'utf8').catch(() => '')).trim());
  if (Number.isInteger(fromFile) && fromFile > 1 && isOurs(await processArgv(fromFile))) found.add(fromFile);
  for (const entry of await fs.readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid !== process.pid && !found.has(pid) && isOurs(await processArgv(pid))) found.add(pid);
  }
  return [...found];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * End a process that is not our child: SIGTERM, up to `graceMs` to go, then SIGKILL.
 * @returns once it is gone (or a zombie), or after a further `graceMs` when even SIGKILL did not end it
 */
export async function terminate(pid: number, graceMs: number): Promise<void> {
  for (const sig of ['SIGTERM', 'SIGKILL'] as const) {
    try {
      process.kill(pid, sig);
    } catch {
      return;
    }
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline) {
      if (!(await processAlive(pid))) return;
      await sleep(25);
    }
  }
}
