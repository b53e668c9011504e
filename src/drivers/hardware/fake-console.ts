/**
 * The `fake` console interface of `fake-hardware`: an in-memory serial line with a terminal's
 * echo. Ironic's fake console starts and stops nothing; esi's opens a stream so that a fake
 * node's console can be attached end to end: it first prints `fake-hardware serial console of
 * node <uuid>` and then echoes every byte typed at it (CR → CR LF).
 */
import type { ConsoleInterface, ConsoleSession } from '../../domain/hardware/console.ts';
import type { DriverNode } from '../../domain/hardware/interfaces.ts';

/** The `fake` console interface (see the module documentation). */
export class FakeConsole implements ConsoleInterface {
  readonly name = 'fake';

  /** Opens an echoing in-memory stream; never fails. */
  async open(node: DriverNode): Promise<ConsoleSession> {
    const data = new Set<(chunk: Buffer) => void>();
    const closeListeners = new Set<(reason: string) => void>();
    let closed: string | null = null;
    const emit = (chunk: Buffer): void => {
      // Delivered asynchronously, as bytes from a wire are.
      setImmediate(() => {
        if (closed === null) for (const l of [...data]) l(chunk);
      });
    };
    emit(Buffer.from(`fake-hardware serial console of node ${node.uuid}\r\n`));
    return {
      onData: (l) => void data.add(l),
      onClose: (l) => (closed !== null ? l(closed) : void closeListeners.add(l)),
      write: (chunk) => {
        if (closed === null) emit(Buffer.from(chunk.toString('latin1').replace(/\r/g, '\r\n'), 'latin1'));
      },
      close: async () => {
        if (closed !== null) return;
        closed = 'closed';
        for (const l of [...closeListeners]) l('closed');
        closeListeners.clear();
        data.clear();
      },
    };
  }
}
