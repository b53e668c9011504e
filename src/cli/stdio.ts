/**
 * The order of the `esi` command's output when stdout and stderr go to pipes (`esi … 2>&1 |
 * tee log`, CI logs, a supervisor's socket, tests): messages must arrive in the order they were
 * written, whichever of the two streams each was written to.
 *
 * Node writes to a pipe asynchronously: what the pipe cannot take at once (its reader is slow,
 * or more than its 64 KiB buffer is waiting) is queued on that stream, and a later write to the
 * other stream — the same pipe with `2>&1` — gets through first. A progress line or an `esi:`
 * message on stderr then lands before, or in the middle of, output written earlier to stdout,
 * and what is still queued at `process.exit` is lost. Writes to terminals (on Linux) and files
 * are already synchronous; {@link keepOutputInOrder} makes pipe writes synchronous too, so each
 * write is complete before the next one starts.
 */

/** A stream's libuv handle, as Node keeps it (`setBlocking` exists on pipe handles). */
interface PipeHandle {
  setBlocking?(blocking: boolean): number;
}

/**
 * Make the writes of `streams` that are pipes (or local sockets) synchronous: each
 * `stream.write` returns once the bytes are in the pipe. Terminals and files are left as they
 * are. Call once, before the first write.
 * @param streams default stdout and stderr
 */
export function keepOutputInOrder(streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    if (stream.isTTY) continue;
    // Node's own way for its stdio (it does this for terminals, and for pipes on Windows); the
    // handle is internal, hence the optional calls: without it writes stay as they were.
    const handle = (stream as unknown as { _handle?: PipeHandle })._handle;
    handle?.setBlocking?.(true);
  }
}
