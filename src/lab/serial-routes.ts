/**
 * The lab BMC's serial-over-LAN service, an OEM extension of the system resource (Redfish has no
 * standard serial stream; vendors offer SSH/IPMI SOL, this lab offers a websocket):
 *
 * - `GET /redfish/v1/Systems/{id}/Oem/EsiLab/SerialConsole` (plain HTTP) describes it:
 *   `{ "@odata.id", "Id": "SerialConsole", "ServiceEnabled": true, "MaxConcurrentSessions",
 *   "ConnectedSessions", "ConnectTypesSupported": ["Oem"], "Oem": {"EsiLab": {"WebSocket": <uri>}} }`;
 * - the same URI upgraded to a websocket (RFC 6455) is the stream: on connect the BMC sends the
 *   system's scrollback, then every byte the system prints, as binary frames; binary (or text)
 *   frames from the client are typed at the system (src/lab/serial.ts echoes them while it is on).
 *
 * Authentication is the BMC's (src/lab/http.ts): HTTP Basic or a session `X-Auth-Token` on the
 * upgrade request, else 401 and no upgrade. More than {@link MAX_SESSIONS} sessions on one system
 * are closed at once with code 1013 ("try again later").
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sendLabError } from './http.ts';
import { REDFISH_ROOT } from './render-system.ts';
import type { LabSerialPorts } from './serial.ts';
import { LabError, type LabState } from './state.ts';

/** Sessions one system's serial console accepts at once. */
export const MAX_SESSIONS = 8;

/** The OEM serial console URI of system `id`. */
export function serialConsoleUri(id: string): string {
  return `${REDFISH_ROOT}/Systems/${id}/Oem/EsiLab/SerialConsole`;
}

/** The subset of a `ws` WebSocket this module uses (the type @fastify/websocket hands over). */
interface LabSocket {
  readonly readyState: number;
  send(data: Buffer): void;
  close(code?: number, reason?: string): void;
  on(event: 'message', listener: (data: Buffer | ArrayBuffer | Buffer[]) => void): void;
  on(event: 'close' | 'error', listener: () => void): void;
}

/**
 * Registers the serial console resource. The app must have `@fastify/websocket` registered.
 */
export function registerSerialRoutes(app: FastifyInstance, state: LabState, serial: LabSerialPorts): void {
  // An upgrade request the BMC refuses (401 from the auth hook, which runs before
  // @fastify/websocket's own hooks) is answered over the raw socket: end that socket after the
  // answer, or it would stay open and keep the lab from closing.
  app.addHook('onResponse', async (req) => {
    if (req.raw.headers.upgrade !== undefined) req.raw.socket?.destroy();
  });
  app.route<{ Params: { id: string } }>({
    method: 'GET',
    url: `${REDFISH_ROOT}/Systems/:id/Oem/EsiLab/SerialConsole`,
    handler: async (req, reply) => {
      const id = systemId(state, req);
      if (id === null) return sendLabError(reply, new LabError(404, 'ResourceMissingAtURI', [req.url]));
      const uri = serialConsoleUri(id);
      return reply.type('application/json; charset=utf-8').send({
        '@odata.id': uri,
        '@odata.type': '#EsiLabSerialConsole.v1_0_0.EsiLabSerialConsole',
        Id: 'SerialConsole',
        Name: `Serial console of ${id}`,
        ServiceEnabled: true,
        MaxConcurrentSessions: MAX_SESSIONS,
        ConnectedSessions: serial.listeners(id),
        ConnectTypesSupported: ['Oem'],
        Oem: { EsiLab: { WebSocket: uri } },
      });
    },
    wsHandler: (socket: unknown, req) => {
      const ws = socket as LabSocket;
      const id = systemId(state, req);
      if (id === null) {
        ws.close(1008, 'no such system');
        return;
      }
      if (serial.listeners(id) >= MAX_SESSIONS) {
        ws.close(1013, `system ${id} already has ${MAX_SESSIONS} console sessions`);
        return;
      }
      const scrollback = serial.scrollback(id);
      if (scrollback.length > 0) ws.send(scrollback);
      const detach = serial.attach(id, (chunk) => {
        if (ws.readyState === 1) ws.send(chunk);
      });
      ws.on('message', (data) => {
        const chunk = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
        try {
          serial.input(id, chunk);
        } catch {
          // The system disappeared: nothing to type at.
        }
      });
      ws.on('close', detach);
      ws.on('error', detach);
    },
  });
}

function systemId(state: LabState, req: FastifyRequest<{ Params: { id: string } }>): string | null {
  const id = req.params.id;
  try {
    return state.system(id).id;
  } catch {
    return null;
  }
}
