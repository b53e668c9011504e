/**
 * The agent's "serial console": every line the deploy agent prints goes to stdout (or stderr)
 * and, when `--console-log` is given, is appended to that file with an ISO-8601 UTC timestamp,
 * the way a ramdisk's output lands on a node's serial console. Secrets (the agent token) are
 * never passed to it.
 */
import fs from 'node:fs';

/** A line sink for the agent's console output. */
export class AgentConsole {
  /**
   * @param logPath file to append every line to (created if missing), or undefined
   * @param stream where lines are also written (default stdout)
   */
  constructor(
    private readonly logPath: string | undefined,
    private readonly stream: NodeJS.WritableStream = process.stdout,
  ) {}

  /** Print one line `<UTC time> esi-agent: <text>`. Console failures are ignored (best effort). */
  line(text: string): void {
    const out = `${new Date().toISOString()} esi-agent: ${text}\n`;
    try {
      this.stream.write(out);
    } catch {
      // a closed stdout must not stop the agent
    }
    if (this.logPath === undefined) return;
    try {
      fs.appendFileSync(this.logPath, out);
    } catch {
      // best effort, like a serial console
    }
  }
}
