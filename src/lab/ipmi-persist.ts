/**
 * IPMI lab nodes that keep their UDP ports across restarts: `ipmi-i` is started on the port the
 * lab state file of the data directory (./persist.ts) remembers for it, so the `ipmi_port` of an
 * enrolled node stays right. A kept port that another process holds is an error naming the node
 * and the port — never a silent new port; with `force` the node moves to a free port and the
 * move is returned to be printed (the enrolled node's driver_info must then be updated). New
 * nodes get free ports, which are remembered; kept nodes past the count stay in the file.
 */
import dgram from 'node:dgram';
import { startIpmiLab, type IpmiLab } from './ipmi.ts';
import { labStatePath, readLabState, updateLabState, type PersistedIpmiNode } from './persist.ts';

/** An IPMI node that `force` moved off its kept port. */
export interface IpmiPortMove {
  /** `ipmi-<i>`. */
  readonly name: string;
  readonly host: string;
  /** The kept port, held by another process. */
  readonly from: number;
  /** The port it runs on now. */
  readonly to: number;
}

/** An IPMI lab started by {@link startPersistentIpmiLab}. */
export interface PersistentIpmiLab extends IpmiLab {
  /** Nodes moved to a new port (empty unless `force`). */
  readonly moved: readonly IpmiPortMove[];
}

/**
 * Starts `count` IPMI lab nodes on `host` with the ports kept in `<dataDir>/lab/lab-state.json`
 * (a kept node on another host starts on a free port of `host`), then records every node's port.
 *
 * @throws Error `IPMI lab node ipmi-<i>: its UDP port <host>:<port> … is in use …` when a kept port
 *   is taken and `force` is false (nothing is started); the errors of {@link startIpmiLab}
 */
export async function startPersistentIpmiLab(
  count: number,
  host: string,
  persist: { readonly dataDir: string; readonly force?: boolean },
): Promise<PersistentIpmiLab> {
  const kept = readLabState(persist.dataDir)?.ipmi ?? [];
  const ports: Array<number | undefined> = [];
  const moved: Array<{ name: string; host: string; from: number }> = [];
  const taken: string[] = [];
  for (let i = 0; i < count; i++) {
    const k = kept[i];
    if (k === undefined || k.host !== host) {
      ports.push(undefined);
      continue;
    }
    if (await udpPortFree(host, k.port)) ports.push(k.port);
    else if (persist.force === true) {
      ports.push(undefined);
      moved.push({ name: k.name, host, from: k.port });
    } else taken.push(`IPMI lab node ${k.name}: its UDP port ${host}:${k.port} is in use by another process`);
  }
  if (taken.length > 0)
    throw new Error(
      `${taken.join('\n')}\n(kept in ${labStatePath(persist.dataDir)} so that enrolled nodes keep their ipmi_port); ` +
        "free the port, or start with --force to move the node to a new port and then update the node's driver_info ipmi_port",
    );
  const lab = await startIpmiLab(count, host, ports);
  try {
    updateLabState(persist.dataDir, (s) => {
      const running: PersistedIpmiNode[] = lab.bmcs.map((b) => ({ name: b.name, host: b.host, port: b.port }));
      return {
        ...s,
        ipmi: [...running, ...s.ipmi.slice(running.length)],
        ipmiRun: { pid: process.pid, running: running.map((b) => b.name) },
      };
    });
  } catch (err) {
    await lab.close();
    throw err;
  }
  const byName = new Map(lab.bmcs.map((b) => [b.name, b.port]));
  let closed: Promise<void> | null = null;
  return {
    ...lab,
    moved: moved.map((m) => ({ ...m, to: byName.get(m.name)! })),
    close: () =>
      (closed ??= lab.close().then(() => {
        try {
          if (readLabState(persist.dataDir)?.ipmiRun?.pid === process.pid)
            updateLabState(persist.dataDir, (s) => ({ ...s, ipmiRun: s.ipmiRun === null ? null : { ...s.ipmiRun, pid: null } }));
        } catch {
          // A data directory removed under a closing lab leaves nothing to mark.
        }
      })),
  };
}

/** Whether UDP `host:port` can be bound now (false when another socket holds it). */
export function udpPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
    sock.once('error', () => {
      sock.close();
      resolve(false);
    });
    sock.bind(port, host, () => sock.close(() => resolve(true)));
  });
}
