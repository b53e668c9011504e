/**
 * Running the host programs an image build needs (debootstrap, sfdisk, mkfs.*, mtools,
 * grub-mkimage, qemu-img, …): each run's output goes line by line to the build's log, and a
 * failure becomes an {@link ImageBuildError} that names the command and ends with the last lines
 * it printed.
 */
import { spawn } from 'node:child_process';
import { missingToolError } from '../drivers/host-tools.ts';

/** A build step failed: a program exited non-zero, a tool is missing, the result is wrong. */
export class ImageBuildError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ImageBuildError';
  }
}

/** A sink for build progress lines (no trailing newline). */
export type BuildLog = (line: string) => void;

/** Options of {@link run}. */
export interface RunOptions {
  readonly log?: BuildLog;
  /** Extra environment variables (added to this process's environment). */
  readonly env?: Readonly<Record<string, string>>;
  /** Bytes or text written to the program's standard input (then closed). */
  readonly input?: string | Buffer;
  /** Keep standard output in the result instead of logging it. */
  readonly capture?: boolean;
}

/** How many of the last output lines an error message repeats. */
const TAIL_LINES = 15;

/**
 * Run `command args…` to completion.
 * @returns standard output when `capture` is set, else ''
 * @throws ImageBuildError when the program cannot start (e.g. not installed) or exits non-zero
 */
export function run(command: string, args: readonly string[], options: RunOptions = {}): Promise<string> {
  const { log = () => undefined, env, input, capture = false } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: env ? { ...process.env, ...env } : process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const tail: string[] = [];
    const out: Buffer[] = [];
    const lines = (prefix: string) => {
      let rest = '';
      return (chunk: Buffer) => {
        const parts = (rest + chunk.toString('utf8')).split('\n');
        rest = parts.pop() ?? '';
        for (const line of parts) {
          tail.push(line);
          if (tail.length > TAIL_LINES) tail.shift();
          log(prefix + line);
        }
      };
    };
    if (capture) child.stdout.on('data', (c: Buffer) => out.push(c));
    else child.stdout.on('data', lines(''));
    child.stderr.on('data', lines(''));
    child.on('error', (err) => {
      const missing = missingToolError(command, err);
      const why = missing !== null ? missing.message : `${err.message} (is it installed? see docs/os-images.md)`;
      reject(new ImageBuildError(`cannot run ${command}: ${why}`, { cause: err }));
    });
    child.on('close', (code, signal) => {
      if (code === 0) return resolve(capture ? Buffer.concat(out).toString('utf8') : '');
      const why = signal ? `was killed by ${signal}` : `exited with status ${code}`;
      reject(new ImageBuildError(`${command} ${why}${tail.length > 0 ? `; its last output:\n${tail.join('\n')}` : ''}`));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input ?? '');
  });
}
