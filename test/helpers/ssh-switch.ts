/**
 * A switch CLI over SSH for tests: an ssh2 server on loopback that logs in with a password,
 * answers in an interactive shell like a Cisco NX-OS or Arista EOS CLI (prompts per mode,
 * `% Invalid …` for commands it does not know), records every command line, and keeps a
 * model of the running and startup configuration (VLANs; per interface: layer 2, mode, access
 * VLAN, native VLAN, allowed VLANs, shutdown).
 *
 * Vendor differences it enforces: NX-OS ports start in layer 3 and refuse `switchport …`
 * sub-commands until `switchport`; NX-OS saves with `copy running-config startup-config`,
 * EOS with `write memory`; EOS can put the login in user mode (`>`) and require `enable`.
 */
import { createHash } from 'node:crypto';
import ssh2 from 'ssh2';

const { Server, utils } = ssh2;

/** One interface as the switch holds it. */
export interface IfaceState {
  l2: boolean;
  mode: 'access' | 'trunk';
  access: number | null;
  native: number | null;
  allowed: number[] | 'all';
  shutdown: boolean;
}

/** The switch's configuration. */
export interface SwitchConfig {
  vlans: Set<number>;
  ifaces: Map<string, IfaceState>;
}

/** Options of {@link startSshSwitch}. */
export interface SshSwitchOptions {
  readonly vendor: 'cisco_nxos' | 'arista_eos';
  readonly username?: string;
  readonly password?: string;
  readonly hostname?: string;
  /** Land in user mode (`>`) and require `enable` with this secret (EOS). */
  readonly enableSecret?: string;
  /** A VLAN the switch refuses (`% VLAN … is reserved`). */
  readonly reservedVlan?: number;
}

/** A running fake switch. */
export interface SshSwitch {
  readonly port: number;
  /** SHA-256 fingerprint of the host key (hex). */
  readonly hostKeySha256: string;
  /** Every command line received, in order. */
  readonly commands: string[];
  running: SwitchConfig;
  startup: SwitchConfig;
  /** Lose the running configuration (a switch rebooted without its saved config). */
  wipe(): void;
  close(): Promise<void>;
}

function empty(): SwitchConfig {
  return { vlans: new Set([1]), ifaces: new Map() };
}

function clone(c: SwitchConfig): SwitchConfig {
  return {
    vlans: new Set(c.vlans),
    ifaces: new Map([...c.ifaces].map(([k, v]) => [k, { ...v, allowed: v.allowed === 'all' ? 'all' : [...v.allowed] }])),
  };
}

/**
 * An ed25519 host key pair that ssh2 can read back: its generator drops a public key's leading
 * zero byte (mscdex/ssh2#1390, #1513), so about 1 pair in 256 is unreadable; such pairs are
 * generated again.
 */
function hostKeys(): ReturnType<typeof utils.generateKeyPairSync> {
  for (let i = 0; ; i++) {
    const keys = utils.generateKeyPairSync('ed25519');
    const readable = !(utils.parseKey(keys.public) instanceof Error) && !(utils.parseKey(keys.private) instanceof Error);
    if (readable || i >= 20) return keys;
  }
}

/** Start a fake switch on a random loopback port. */
export async function startSshSwitch(o: SshSwitchOptions): Promise<SshSwitch> {
  const keys = hostKeys();
  const blob = Buffer.from(keys.public.split(' ')[1]!, 'base64');
  const host = o.hostname ?? (o.vendor === 'cisco_nxos' ? 'nx1' : 'eos1');
  const user = o.username ?? 'admin';
  const pass = o.password ?? 'switch-pw';
  const ifaceRe = o.vendor === 'cisco_nxos' ? /^Ethernet\d+\/\d+$/ : /^Ethernet\d+(\/\d+)?$/;
  const invalid = o.vendor === 'cisco_nxos' ? "% Invalid command at '^' marker." : '% Invalid input';
  const sw: SshSwitch = {
    port: 0,
    hostKeySha256: createHash('sha256').update(blob).digest('hex'),
    commands: [],
    running: empty(),
    startup: empty(),
    wipe() {
      sw.running = empty();
    },
    close: async () => undefined,
  };

  const server = new Server({ hostKeys: [keys.private] }, (client) => {
    client.on('authentication', (ctx) => {
      if (ctx.method === 'password' && ctx.username === user && ctx.password === pass) ctx.accept();
      else ctx.reject(['password']);
    });
    client.on('error', () => undefined);
    client.on('ready', () => {
      client.on('session', (accept) => {
        const session = accept();
        session.on('pty', (acceptPty) => acceptPty?.());
        session.on('shell', (acceptShell) => {
          const stream = acceptShell();
          let mode: 'user' | 'exec' | 'config' | 'vlan' | 'if' | 'enable-password' = o.enableSecret ? 'user' : 'exec';
          let iface: IfaceState | null = null;
          const prompt = (): string =>
            mode === 'user'
              ? `${host}>`
              : mode === 'exec'
                ? `${host}#`
                : mode === 'config'
                  ? `${host}(config)#`
                  : mode === 'vlan'
                    ? `${host}(config-vlan)#`
                    : mode === 'if'
                      ? `${host}(config-if)#`
                      : 'Password: ';
          const out = (text: string): void => void stream.write(text.replace(/\n/g, '\r\n'));
          out(`Welcome to the ${o.vendor} test switch\n${prompt()}`);
          const handle = (line: string): string | null => {
            const c = sw.running;
            if (mode === 'enable-password') {
              mode = line === o.enableSecret ? 'exec' : 'user';
              return mode === 'exec' ? null : '% Bad secret';
            }
            if (mode === 'user') {
              if (line === 'enable') {
                mode = 'enable-password';
                return null;
              }
              return line === 'terminal length 0' ? null : invalid;
            }
            if (mode === 'exec') {
              if (line === 'terminal length 0') return null;
              if (line === 'configure terminal') return ((mode = 'config'), null);
              if (line === (o.vendor === 'cisco_nxos' ? 'copy running-config startup-config' : 'write memory')) {
                sw.startup = clone(sw.running);
                return o.vendor === 'cisco_nxos'
                  ? '[########################################] 100%\nCopy complete.'
                  : 'Copy completed successfully.';
              }
              if (line === 'exit') return (stream.end(), null);
              return invalid;
            }
            if (line === 'end') return ((mode = 'exec'), (iface = null), null);
            if (mode === 'config') {
              let m = /^vlan (\d+)$/.exec(line);
              if (m) {
                const v = Number(m[1]);
                if (v === o.reservedVlan) return `% VLAN ${v} is reserved`;
                c.vlans.add(v);
                return ((mode = 'vlan'), null);
              }
              m = /^interface (\S+)$/.exec(line);
              if (m && ifaceRe.test(m[1]!)) {
                iface = c.ifaces.get(m[1]!) ?? {
                  l2: o.vendor !== 'cisco_nxos',
                  mode: 'access',
                  access: 1,
                  native: 1,
                  allowed: 'all',
                  shutdown: false,
                };
                c.ifaces.set(m[1]!, iface);
                return ((mode = 'if'), null);
              }
              if (line === 'exit') return ((mode = 'exec'), null);
              return invalid;
            }
            if (mode === 'vlan') return line === 'exit' ? ((mode = 'config'), null) : /^name \S+$/.test(line) ? null : invalid;
            const i = iface!;
            if (line === 'exit') return ((mode = 'config'), (iface = null), null);
            if (line === 'switchport') return ((i.l2 = true), null);
            if (line === 'shutdown') return ((i.shutdown = true), null);
            if (line === 'no shutdown') return ((i.shutdown = false), null);
            if (line.startsWith('switchport ') || line.startsWith('no switchport ')) {
              if (!i.l2) return '% Invalid command: the interface is in layer 3 mode (use "switchport" first)';
              let m = /^switchport mode (access|trunk)$/.exec(line);
              if (m) return ((i.mode = m[1] as 'access' | 'trunk'), null);
              m = /^switchport access vlan (\d+)$/.exec(line);
              if (m) return ((i.access = Number(m[1])), null);
              if (line === 'no switchport access vlan') return ((i.access = 1), null);
              m = /^switchport trunk native vlan (\d+)$/.exec(line);
              if (m) return ((i.native = Number(m[1])), null);
              if (line === 'no switchport trunk native vlan') return ((i.native = 1), null);
              m = /^switchport trunk allowed vlan (none|\d+(,\d+)*)$/.exec(line);
              if (m) return ((i.allowed = m[1] === 'none' ? [] : m[1]!.split(',').map(Number)), null);
            }
            return invalid;
          };
          let buf = '';
          stream.on('data', (d: Buffer) => {
            buf += d.toString('utf8');
            let idx: number;
            while ((idx = buf.search(/\r?\n|\r/)) >= 0) {
              const line = buf.slice(0, idx).trim();
              buf = buf.slice(idx + (buf[idx] === '\r' && buf[idx + 1] === '\n' ? 2 : 1));
              const echo = mode === 'enable-password' ? '\n' : `${line}\n`;
              if (mode !== 'enable-password') sw.commands.push(line);
              const answer = line === '' ? null : handle(line);
              // One write per answer, as a switch's CLI sends it (no Nagle stalls on loopback).
              if (stream.writable) out(`${echo}${answer === null ? '' : `${answer}\n`}${prompt()}`);
            }
          });
        });
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  (sw as { port: number }).port = (server.address() as { port: number }).port;
  sw.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return sw;
}
