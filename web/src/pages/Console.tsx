/**
 * A node's serial console in the browser: the console is enabled if it is off, then a console
 * auth token
 * (`POST /lease/v1/console_auth_tokens`, esi-leap's API) opens the websocket at its
 * `access_url` (same origin), whose frames carry the serial port's bytes both ways
 * (src/api/common/console-ws.ts); xterm.js draws them. A read-only session or a closed one says
 * why, in the terminal. Loaded on demand (its own chunk), so the first page stays small.
 */
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { call } from '../lib/api.ts';
import { ErrorNote } from '../ui/common.tsx';

/**
 * Enable the node's console when it is off (`PUT …/states/console {enabled: true}`, which the
 * conductor applies shortly after its 202) and wait until it is on (up to 15 s).
 * @throws ApiError when the caller may not enable it, or Error when it does not come on
 */
async function enableConsole(node: string, cancelled: () => boolean): Promise<void> {
  const state = async (): Promise<boolean> =>
    (await call<{ console_enabled: boolean }>('GET', `/baremetal/v1/nodes/${node}/states/console`)).body.console_enabled;
  if (await state()) return;
  await call('PUT', `/baremetal/v1/nodes/${node}/states/console`, { body: { enabled: true } });
  for (let delay = 100, waited = 0; waited < 15_000 && !cancelled(); waited += delay, delay = Math.min(delay * 2, 1000)) {
    await new Promise((r) => setTimeout(r, delay));
    if (await state()) return;
  }
  if (!cancelled()) throw new Error('The console did not come on within 15 s; try again.');
}

/** The console of one node (default export: lazy-loaded). */
export default function Console({ node }: { node: string }): ReactNode {
  const host = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState('connecting');

  useEffect(() => {
    const term = new Terminal({ convertEol: true, fontSize: 14, cursorBlink: true });
    if (host.current) term.open(host.current);
    let socket: WebSocket | null = null;
    let closed = false;
    void (async () => {
      try {
        await enableConsole(node, () => closed);
        if (closed) return;
        const res = await call<{ access_url: string }>('POST', '/lease/v1/console_auth_tokens', { body: { node_uuid_or_name: node } });
        if (closed) return;
        const given = new URL(res.body.access_url);
        const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${given.pathname}${given.search}`;
        socket = new WebSocket(url);
        socket.binaryType = 'arraybuffer';
        socket.onopen = () => setStatus('open');
        socket.onmessage = (m) => term.write(typeof m.data === 'string' ? m.data : new Uint8Array(m.data as ArrayBuffer));
        socket.onclose = (e) => {
          setStatus('closed');
          term.write(`\r\n[console closed${e.reason ? `: ${e.reason}` : ''}]\r\n`);
        };
        term.onData((d) => socket?.readyState === WebSocket.OPEN && socket.send(new TextEncoder().encode(d)));
      } catch (e) {
        setError(e);
      }
    })();
    return () => {
      closed = true;
      socket?.close();
      term.dispose();
    };
  }, [node]);

  return (
    <section aria-label="Serial console">
      <h2>
        Serial console <span className="muted">({status})</span>
      </h2>
      <ErrorNote error={error} />
      <div className="console" ref={host} data-testid="console" />
    </section>
  );
}
