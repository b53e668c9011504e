/**
 * The console websocket pipe (src/api/common/console-ws.ts) with an in-memory socket, for what a
 * real connection cannot produce on demand: a client that reads too slowly (output dropped, then
 * a notice), error-to-close-code mapping (no internal detail leaks), RFC 6455's 123-byte reason
 * limit, and the grant checks ending a session with 4401 or 4409.
 */
import { describe, expect, it } from 'vitest';
import {
  closeFor,
  closeSocket,
  DROPPED_NOTICE,
  MAX_BUFFERED_OUTPUT,
  READ_ONLY_NOTICE,
  serveConsole,
  type ConsoleSocket,
} from '../../../src/api/common/console-ws.ts';
import { NotFoundError, UnauthorizedError } from '../../../src/domain/errors.ts';
import type { ConsoleSession } from '../../../src/domain/hardware/console.ts';
import { HardwareError } from '../../../src/domain/hardware/interfaces.ts';
import type { GrantEnded, OpenConsole } from '../../../src/domain/inventory/node-console.ts';

class MemorySocket implements ConsoleSocket {
  readyState = 1;
  bufferedAmount = 0;
  sent: string[] = [];
  closedWith: { code?: number; reason?: string } | null = null;
  readonly #listeners: Record<string, Array<(x?: any) => void>> = {};
  send(data: Buffer): void {
    this.sent.push(data.toString());
  }
  close(code?: number, reason?: string): void {
    if (this.closedWith) return;
    this.closedWith = { code, reason };
    this.readyState = 3;
    for (const l of this.#listeners.close ?? []) l();
  }
  on(event: string, listener: (x?: any) => void): void {
    (this.#listeners[event] ??= []).push(listener);
  }
  type(s: string): void {
    for (const l of this.#listeners.message ?? []) l(Buffer.from(s));
  }
}

function memorySession(): ConsoleSession & { emit(s: string): void; written: string[]; closed: boolean } {
  const data: Array<(c: Buffer) => void> = [];
  const s = {
    written: [] as string[],
    closed: false,
    emit: (x: string) => data.forEach((l) => l(Buffer.from(x))),
    onData: (l: (c: Buffer) => void) => void data.push(l),
    onClose: () => undefined,
    write: (c: Buffer) => void s.written.push(c.toString()),
    close: async () => {
      s.closed = true;
    },
  };
  return s;
}

const log = { debug() {}, warn() {}, error() {}, info() {} } as any;

function grant(session: ConsoleSession, writable: boolean, check: () => Promise<GrantEnded | null> = async () => null): OpenConsole {
  return { nodeUuid: 'n', writable, session, check };
}

describe('serveConsole', () => {
  it('drops output while the client is too slow, then says so once', async () => {
    const sock = new MemorySocket();
    const session = memorySession();
    await serveConsole(sock, async () => grant(session, true), log);
    session.emit('one');
    sock.bufferedAmount = MAX_BUFFERED_OUTPUT + 1;
    session.emit('lost-1');
    session.emit('lost-2');
    sock.bufferedAmount = 0;
    session.emit('two');
    expect(sock.sent).toEqual(['one', DROPPED_NOTICE, 'two']);
    sock.close(1000);
    await new Promise((r) => setImmediate(r));
    expect(session.closed).toBe(true);
  });

  it('types for a writable grant (also what arrived while opening), drops for a read-only one with one notice', async () => {
    const sock = new MemorySocket();
    const session = memorySession();
    let release!: () => void;
    const opened = serveConsole(sock, () => new Promise<OpenConsole>((r) => (release = () => r(grant(session, true)))), log);
    sock.type('early');
    release();
    await opened;
    sock.type('late');
    expect(session.written).toEqual(['early', 'late']);

    const ro = new MemorySocket();
    const roSession = memorySession();
    await serveConsole(ro, async () => grant(roSession, false), log);
    ro.type('a');
    ro.type('b');
    expect(roSession.written).toEqual([]);
    expect(ro.sent).toEqual([READ_ONLY_NOTICE]);
  });

  it('closes with 4401 when the token ends and 4409 when the console is disabled', async () => {
    for (const [why, code] of [
      ['token', 4401],
      ['disabled', 4409],
      ['access', 4409],
    ] as const) {
      const sock = new MemorySocket();
      const session = memorySession();
      await serveConsole(sock, async () => grant(session, true, async () => ({ why, message: `ended: ${why}` })), log);
      await expect.poll(() => sock.closedWith, { timeout: 3000 }).toEqual({ code, reason: `ended: ${why}` });
      await expect.poll(() => session.closed).toBe(true);
    }
  });

  it('maps open failures to close codes; an unexpected error says nothing more', async () => {
    const cases: Array<[unknown, number, RegExp]> = [
      [new UnauthorizedError('bad token'), 4401, /bad token/],
      [new NotFoundError('node', 'x'), 4404, /x/],
      [new HardwareError('BMC at http://b unreachable', { reason: 'unreachable', nodeUuid: 'n', operation: 'o' }), 4502, /unreachable/],
      [new Error('db password is hunter2'), 1011, /^Internal error; see the server log\.$/],
    ];
    for (const [err, code, reason] of cases) {
      const sock = new MemorySocket();
      await serveConsole(
        sock,
        async () => {
          throw err;
        },
        log,
      );
      expect(sock.closedWith?.code).toBe(code);
      expect(sock.closedWith?.reason).toMatch(reason);
    }
    expect(closeFor(new Error('x')).reason).not.toContain('x');
  });

  it('cuts close reasons to 123 bytes of UTF-8', () => {
    const sock = new MemorySocket();
    closeSocket(sock, 4400, 'é'.repeat(200));
    expect(Buffer.byteLength(sock.closedWith!.reason!, 'utf8')).toBeLessThanOrEqual(123);
    expect(sock.closedWith!.reason!.endsWith('…')).toBe(true);
  });
});
