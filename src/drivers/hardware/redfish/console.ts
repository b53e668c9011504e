/**
 * The `redfish-serial` console interface: a node's serial console through its BMC's
 * serial-over-LAN websocket, as the esi lab's BMC offers it (an OEM extension of the
 * ComputerSystem, src/lab/serial-routes.ts; Redfish itself standardises no serial stream).
 *
 * Opening a console:
 * 1. `GET <system>/Oem/EsiLab/SerialConsole` through the redfish client (its session or Basic
 *    auth, timeouts and error mapping): a 4xx/5xx is a `refused` {@link HardwareError} (404: the
 *    BMC has no such service), no answer `unreachable`; `ServiceEnabled: false` is `refused`;
 * 2. a websocket (RFC 6455, undici's client) to the URI it names — on the BMC's own origin only —
 *    with HTTP Basic credentials from `driver_info` (`redfish_username`/`redfish_password`),
 *    TLS verified as `redfish_verify_ca` says. Bytes flow as binary frames both ways.
 *
 * Only the esi server opens it: the BMC's address and credentials never reach users
 * (docs/console.md).
 */
import fs from 'node:fs';
import { Agent, WebSocket } from 'undici';
import type { ConsoleInterface, ConsoleSession } from '../../../domain/hardware/console.ts';
import { HardwareError, type DriverNode } from '../../../domain/hardware/interfaces.ts';
import type { RedfishClient, RequestContext } from './client.ts';
import { parseRedfishDriverInfo, type RedfishDriverInfo } from './driver-info.ts';
import { invalidResponse, systemPath } from './system.ts';

/** Options of {@link RedfishSerialConsole}. */
export interface RedfishConsoleOptions {
  /** Deadline of the websocket handshake, milliseconds (default 10 000). */
  readonly connectTimeoutMs?: number;
}

/** The `redfish-serial` console interface (see the module documentation). */
export class RedfishSerialConsole implements ConsoleInterface {
  readonly name = 'redfish-serial';
  readonly #timeoutMs: number;

  constructor(
    private readonly client: RedfishClient,
    options: RedfishConsoleOptions = {},
  ) {
    this.#timeoutMs = options.connectTimeoutMs ?? 10_000;
  }

  /**
   * Opens the node's serial console (see the module documentation).
   * @throws InvalidInputError for invalid `driver_info`; HardwareError when the BMC cannot be
   *   reached, refuses, has no serial console service, or the websocket handshake fails
   */
  async open(node: DriverNode): Promise<ConsoleSession> {
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'open the serial console' };
    const system = await systemPath(this.client, info, ctx);
    const res = await this.client.send(info, ctx, 'GET', `${system}/Oem/EsiLab/SerialConsole`);
    const doc = res.json ?? {};
    if (doc.ServiceEnabled === false) {
      throw new HardwareError(
        `Redfish BMC at ${info.address} refused ${ctx.operation} for node ${node.uuid}: its serial console service is disabled`,
        {
          reason: 'refused',
          nodeUuid: node.uuid,
          operation: ctx.operation,
        },
      );
    }
    const uri = (doc.Oem as { EsiLab?: { WebSocket?: unknown } } | undefined)?.EsiLab?.WebSocket;
    if (typeof uri !== 'string' || !uri.startsWith('/')) throw invalidResponse(info, ctx, 'a serial console without a websocket URI');
    const url = new URL(uri, info.address);
    if (url.origin !== info.address) throw invalidResponse(info, ctx, 'a serial console URI on another host');
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    return connect(url, info, ctx, this.#timeoutMs);
  }
}

/** Opens the websocket and resolves once it is open. */
async function connect(url: URL, info: RedfishDriverInfo, ctx: RequestContext, timeoutMs: number): Promise<ConsoleSession> {
  const headers: Record<string, string> = {};
  if (info.username !== null)
    headers.authorization = `Basic ${Buffer.from(`${info.username}:${info.password ?? ''}`, 'utf8').toString('base64')}`;
  let dispatcher: Agent | undefined;
  if (url.protocol === 'wss:') {
    const tls: Record<string, unknown> = { rejectUnauthorized: info.verifyCa !== false };
    if (typeof info.verifyCa === 'string') tls.ca = fs.readFileSync(info.verifyCa);
    dispatcher = new Agent({ connect: tls });
  }
  const ws = new WebSocket(url, { headers, ...(dispatcher ? { dispatcher } : {}) });
  ws.binaryType = 'arraybuffer';
  const fail = (why: string): HardwareError =>
    new HardwareError(`Redfish BMC at ${info.address} is unreachable for ${ctx.operation} of node ${ctx.nodeUuid}: ${why}`, {
      reason: 'unreachable',
      nodeUuid: ctx.nodeUuid,
      operation: ctx.operation,
    });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(fail(`no websocket handshake within ${timeoutMs / 1000} s`)), timeoutMs);
      ws.addEventListener('open', () => {
        clearTimeout(timer);
        resolve();
      });
      ws.addEventListener('close', (e) => {
        clearTimeout(timer);
        reject(fail(`the websocket handshake failed (close code ${e.code}${e.reason ? `: ${e.reason}` : ''})`));
      });
    });
  } catch (err) {
    try {
      ws.close();
    } catch {
      // already closed
    }
    await dispatcher?.close();
    throw err;
  }
  return new WebSocketConsoleSession(ws, dispatcher);
}

/** A {@link ConsoleSession} over an open undici websocket. */
class WebSocketConsoleSession implements ConsoleSession {
  readonly #data = new Set<(chunk: Buffer) => void>();
  readonly #close = new Set<(reason: string) => void>();
  #closedReason: string | null = null;

  constructor(
    private readonly ws: WebSocket,
    private readonly dispatcher: Agent | undefined,
  ) {
    ws.addEventListener('message', (e) => {
      const d: unknown = e.data;
      const chunk = typeof d === 'string' ? Buffer.from(d, 'utf8') : d instanceof ArrayBuffer ? Buffer.from(d) : null;
      if (chunk === null || chunk.length === 0) return;
      for (const l of [...this.#data]) l(chunk);
    });
    ws.addEventListener('close', (e) =>
      this.#ended(
        e.code === 1000 || e.code === 1005
          ? 'the BMC closed the serial console'
          : `the BMC closed the serial console (code ${e.code}${e.reason ? `: ${e.reason}` : ''})`,
      ),
    );
  }

  onData(listener: (chunk: Buffer) => void): void {
    this.#data.add(listener);
  }

  onClose(listener: (reason: string) => void): void {
    if (this.#closedReason !== null) listener(this.#closedReason);
    else this.#close.add(listener);
  }

  write(chunk: Buffer): void {
    if (this.#closedReason === null && this.ws.readyState === WebSocket.OPEN) this.ws.send(chunk);
  }

  async close(): Promise<void> {
    if (this.#closedReason === null) {
      try {
        this.ws.close(1000);
      } catch {
        // already closing
      }
      this.#ended('closed');
    }
    await this.dispatcher?.close().catch(() => undefined);
  }

  #ended(reason: string): void {
    if (this.#closedReason !== null) return;
    this.#closedReason = reason;
    this.#data.clear();
    const listeners = [...this.#close];
    this.#close.clear();
    for (const l of listeners) l(reason);
  }
}
