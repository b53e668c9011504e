/**
 * A node's serial console in the browser: a console auth token
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

/** The console of one node (default export: lazy-loaded). */
export default function Console({ node }: { node: string }): ReactNode {
  const host = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState('connecting');

  useEffect(() => {
    const term = new Terminal({ convertEol: false, fontSize: 14, cursorBlink: true });
    if (host.current) term.open(host.current);
    let socket: WebSocket | null = null;
    let closed = false;
    void (async () => {
      try {
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
