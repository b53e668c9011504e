/**
 * `DnsmasqServer`: one supervised dnsmasq (Debian's `dnsmasq-base`, /usr/sbin/dnsmasq)
 * serving one subnet (or, with `moreSubnets`, all DHCP subnets of one network) on one
 * interface, as Neutron's DHCP agent runs it for Ironic's `pxe` and `ipxe` boot interfaces. docs/network-boot.md describes the whole; ./config.ts what dnsmasq
 * is told.
 *
 * - Files: `<dataDir>/dhcp/<id>/` holds `conf`, `hosts`, `opts` (each written atomically),
 *   `pid` (dnsmasq's) and `log` (dnsmasq's output with esi's supervision events, rotated at
 *   16 MiB to `log.1`).
 * - Process: dnsmasq runs in the foreground as esi's child (in the subnet's namespace through
 *   `ip netns exec`), drops to `nobody` once its sockets are open, and counts as serving once
 *   it has logged reading its options file, the last step of its start-up. Every directory
 *   above its files and the TFTP root must therefore be searchable by others (checked at start).
 * - `setHosts` rewrites the hosts file and sends SIGHUP (dnsmasq re-reads its hosts and options
 *   files, same pid), resolving once dnsmasq has logged reading them; a host list with tags is
 *   applied by a restart instead (dnsmasq 2.90 crashes on SIGHUP once a tagged host has a lease).
 * - Supervision: if dnsmasq exits, it is restarted with the last configuration after a back-off
 *   of 0.5 s doubling to 30 s (reset after 30 s of service), each exit and restart logged.
 *   Before each start, any dnsmasq still running with this subnet's configuration (its pid
 *   file, or found in /proc) is ended: never two servers for one subnet.
 * - Rogue DHCP check (./rogue.ts) at start and every `rogueCheckIntervalS`: other servers are
 *   logged as a warning and left alone.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { DhcpError, type DhcpHost, type DhcpServer, type DhcpSubnetConfig, type OtherDhcpServer } from '../../domain/networking/dhcp.ts';
import {
  allSubnets,
  checkHosts,
  checkSubnet,
  dnsmasqCommand,
  dnsmasqPaths,
  renderConfFile,
  renderHostsFile,
  renderOptsFile,
  type CheckedHost,
  type CheckedSubnet,
  type DnsmasqPaths,
} from './config.ts';
import { dnsmasqsUsing, RotatingLog, terminate, unreachableForOthers, writeFileAtomic } from './files.ts';
import { cidrContains, parseIp } from '../../domain/networking/ipam.ts';
import { DnsmasqProcess } from './process.ts';
import { detectOtherDhcpServers } from './rogue.ts';

/** Where messages for the operator go. */
export type DhcpLog = (level: 'info' | 'warn' | 'error', msg: string) => void;

/** Options of {@link DnsmasqServer}. */
export interface DnsmasqServerOptions {
  /** esi's data directory; the server's files go to `<dataDir>/dhcp/<id>/`. */
  readonly dataDir: string;
  readonly log: DhcpLog;
  /** The dnsmasq program (default /usr/sbin/dnsmasq). */
  readonly binary?: string;
  /** The user dnsmasq drops to (default `nobody`, dnsmasq's own default); `root` skips the permission check. */
  readonly user?: string;
  /** Seconds between rogue DHCP checks (default 300); 0 turns the check off, the one at start included. */
  readonly rogueCheckIntervalS?: number;
  /** How long one rogue check listens for offers, ms (default 5000: dnsmasq pings an address up to 3 s before offering it). */
  readonly rogueCheckTimeoutMs?: number;
  /** How long dnsmasq may take to start serving, ms (default 10,000). */
  readonly startTimeoutMs?: number;
}

const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 30_000;
const STOP_GRACE_MS = 5_000;
const RELOAD_TIMEOUT_MS = 10_000;
const LOG_MAX_BYTES = 16 * 1024 * 1024;

/** One dnsmasq serving one subnet; see the module documentation. */
export class DnsmasqServer implements DhcpServer {
  readonly #cfg: CheckedSubnet;
  readonly #paths: DnsmasqPaths;
  readonly #o: DnsmasqServerOptions;
  readonly #binary: string;
  readonly #user: string;
  #hosts: CheckedHost[] = [];
  #run: DnsmasqProcess | null = null;
  #started = false;
  #stopping = false;
  #backoffMs = BACKOFF_FIRST_MS;
  #restartTimer: NodeJS.Timeout | null = null;
  #rogueTimer: NodeJS.Timeout | null = null;
  #rogueAbort: AbortController | null = null;
  #rogueCheck: Promise<void> | null = null;
  #otherServers: readonly OtherDhcpServer[] = [];
  #queue: Promise<void> = Promise.resolve();
  #logFile: RotatingLog | null = null;

  /**
   * @param cfg the subnet; checked here
   * @throws DhcpError for a configuration that cannot work (see ./config.ts `checkSubnet`)
   */
  constructor(cfg: DhcpSubnetConfig, opts: DnsmasqServerOptions) {
    this.#cfg = checkSubnet(cfg);
    this.#paths = dnsmasqPaths(opts.dataDir, this.#cfg.id);
    this.#o = opts;
    this.#binary = opts.binary ?? '/usr/sbin/dnsmasq';
    this.#user = opts.user ?? 'nobody';
    if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(this.#user)) throw new DhcpError(`user: '${this.#user}' is not a user name`);
  }

  /** dnsmasq's pid while one runs (serving or starting), else null. */
  get pid(): number | null {
    return this.#run?.pid ?? null;
  }

  /** The files of this server. */
  get paths(): DnsmasqPaths {
    return this.#paths;
  }

  /** The other DHCP servers the last rogue check heard (empty before the first check). */
  get otherDhcpServers(): readonly OtherDhcpServer[] {
    return this.#otherServers;
  }

  #where(): string {
    return `${this.#cfg.interface}${this.#cfg.netns ? ` (namespace ${this.#cfg.netns})` : ''}`;
  }

  #say(level: 'info' | 'warn' | 'error', msg: string): void {
    const text = `dnsmasq for subnet ${this.#cfg.id} on ${this.#where()}: ${msg}`;
    this.#logFile?.write(`esi ${new Date().toISOString()} ${level}: ${msg}\n`);
    this.#o.log(level, text);
  }

  /**
   * Write the configuration, end any dnsmasq left from an earlier run of this subnet, start
   * dnsmasq and resolve once it serves; supervision and rogue checks begin.
   * @throws DhcpError for invalid hosts, files dnsmasq could not read as its user, or a dnsmasq
   *   that exits or stays silent at start (its last output in the message); nothing keeps running then
   */
  async start(hosts: readonly DhcpHost[]): Promise<void> {
    if (this.#started) throw new DhcpError(`dnsmasq for subnet ${this.#cfg.id} is already started`);
    this.#hosts = checkHosts(this.#cfg, hosts);
    this.#started = true;
    this.#stopping = false;
    this.#backoffMs = BACKOFF_FIRST_MS;
    try {
      await fs.mkdir(this.#paths.dir, { recursive: true, mode: 0o755 });
      await fs.chmod(this.#paths.dir, 0o755);
      await this.#checkAccess();
      this.#logFile = await RotatingLog.open(this.#paths.log, LOG_MAX_BYTES);
      await this.#spawn();
    } catch (err) {
      await this.stop();
      throw err instanceof DhcpError ? err : new DhcpError(`dnsmasq for subnet ${this.#cfg.id}: ${(err as Error).message}`);
    }
    this.#say('info', `serving ${this.#hosts.length} host(s), pid ${this.pid}`);
    await this.#checkAddress();
    this.#scheduleRogueChecks();
  }

  async #checkAccess(): Promise<void> {
    if (this.#user === 'root') return;
    const why = await unreachableForOthers(this.#paths.dir);
    if (why) throw new DhcpError(`dnsmasq runs as ${this.#user} and must re-read its files in ${this.#paths.dir}: ${why}`);
    const boot = this.#cfg.boot;
    if (!boot) return;
    const root = await unreachableForOthers(boot.tftpRoot);
    if (root) throw new DhcpError(`dnsmasq runs as ${this.#user} and serves TFTP from ${boot.tftpRoot}: ${root}`);
    for (const f of [boot.biosFile, boot.uefiFile]) {
      const file = `${boot.tftpRoot}/${f}`;
      const why = await unreachableForOthers(file);
      if (why) this.#say('warn', `boot file ${file} cannot be served yet: ${why}`);
    }
  }

  /** Warn when the interface has no address in a subnet: dnsmasq then answers nobody there, silently. */
  async #checkAddress(): Promise<void> {
    const { netns, interface: iface } = this.#cfg;
    const out = await new Promise<string | null>((resolve) =>
      execFile('ip', [...(netns ? ['-n', netns] : []), '-j', '-4', 'addr', 'show', 'dev', iface], { timeout: 10_000 }, (err, stdout) =>
        resolve(err ? null : stdout),
      ),
    );
    if (out === null) return;
    const addrs = (JSON.parse(out || '[]') as Array<{ addr_info?: Array<{ local?: string }> }>).flatMap((l) => l.addr_info ?? []);
    for (const { cidr } of allSubnets(this.#cfg)) {
      const inside = addrs.some((a) => {
        const ip = parseIp(a.local);
        return ip !== null && ip.version === 4 && cidrContains(cidr, ip.value);
      });
      if (!inside) this.#say('warn', `${iface} has no IPv4 address in ${cidr.text}: dnsmasq answers no request until it has one`);
    }
  }

  /** End leftovers, write every file, start dnsmasq and wait until it serves. */
  async #spawn(): Promise<void> {
    for (const pid of await dnsmasqsUsing(this.#paths.conf, this.#paths.pid)) {
      this.#say('warn', `ending dnsmasq pid ${pid} left from an earlier run of this subnet`);
      await terminate(pid, STOP_GRACE_MS);
    }
    await writeFileAtomic(this.#paths.conf, renderConfFile(this.#cfg, this.#paths, { user: this.#user }));
    await writeFileAtomic(this.#paths.opts, renderOptsFile(this.#cfg));
    await writeFileAtomic(this.#paths.hosts, renderHostsFile(this.#hosts));
    await fs.rm(this.#paths.pid, { force: true });
    if (this.#stopping) throw new DhcpError(`dnsmasq for subnet ${this.#cfg.id} was stopped while starting`);
    const { command, args } = dnsmasqCommand(this.#cfg, this.#paths, this.#binary);
    const run: DnsmasqProcess = new DnsmasqProcess(command, args, {
      readyMessage: `read ${this.#paths.opts}`,
      startTimeoutMs: this.#o.startTimeoutMs ?? 10_000,
      output: (text) => this.#logFile?.write(text),
      ended: (how) => this.#onExit(run, how),
    });
    this.#run = run;
    try {
      await run.ready;
    } catch (err) {
      await run.terminate('SIGKILL', STOP_GRACE_MS);
      if (this.#run === run) this.#run = null;
      throw err instanceof DhcpError ? new DhcpError(`dnsmasq for subnet ${this.#cfg.id}: ${err.message}`) : err;
    }
  }

  /** A dnsmasq ended: restart it unless we are stopping or it never served. */
  #onExit(run: DnsmasqProcess, how: string): void {
    if (this.#run !== run) return;
    this.#run = null;
    if (this.#stopping || run.readyAt === null) return;
    if (Date.now() - run.readyAt >= BACKOFF_MAX_MS) this.#backoffMs = BACKOFF_FIRST_MS;
    const out = run.lastOutput(1);
    const last = out ? `; last output: ${out}` : '';
    this.#say('warn', `pid ${run.pid} exited (${how})${last}; restarting in ${this.#backoffMs / 1000} s`);
    this.#scheduleRestart();
  }

  #scheduleRestart(): void {
    const delay = this.#backoffMs;
    this.#backoffMs = Math.min(delay * 2, BACKOFF_MAX_MS);
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = null;
      this.#spawn().then(
        () => this.#say('info', `restarted, pid ${this.pid}`),
        (err: Error) => {
          if (this.#stopping) return;
          this.#say('error', `restart failed: ${err.message}; next try in ${this.#backoffMs / 1000} s`);
          this.#scheduleRestart();
        },
      );
    }, delay);
  }

  /**
   * Replace the hosts answered: the hosts file is rewritten atomically and dnsmasq re-reads it
   * on SIGHUP (same pid). Resolves once dnsmasq has logged reading it, or at once when no
   * dnsmasq runs right now (the next start reads the new file). Calls are applied in order.
   * @throws DhcpError for an invalid host list (nothing changed), when the server is not
   *   started, or when dnsmasq reports it cannot read its files
   */
  setHosts(hosts: readonly DhcpHost[]): Promise<void> {
    if (!this.#started || this.#stopping) return Promise.reject(new DhcpError(`dnsmasq for subnet ${this.#cfg.id} is not started`));
    const checked = checkHosts(this.#cfg, hosts);
    const next = this.#queue.then(() => this.#applyHosts(checked));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #applyHosts(hosts: CheckedHost[]): Promise<void> {
    const tagged = [...this.#hosts, ...hosts].some((h) => h.tags.length > 0);
    this.#hosts = hosts;
    await writeFileAtomic(this.#paths.hosts, renderHostsFile(hosts));
    const run = this.#run;
    if (!run) return;
    if (tagged) {
      await this.#restartWith(run);
      return;
    }
    try {
      await run.ready;
    } catch {
      return;
    }
    if (this.#run !== run) return;
    const optsRead = `read ${this.#paths.opts}`;
    const reread = new Promise<string | null>((resolve) => {
      const timer = setTimeout(() => {
        unwatch();
        resolve(`dnsmasq did not confirm re-reading within ${RELOAD_TIMEOUT_MS / 1000} s`);
      }, RELOAD_TIMEOUT_MS);
      const unwatch = run.watch((msg: string): boolean => {
        const failed = msg !== '' && (msg.includes(this.#paths.hosts) || msg.includes(this.#paths.opts)) && !msg.startsWith('read ');
        if (msg === optsRead || msg === '' || failed) {
          clearTimeout(timer);
          resolve(failed ? msg : null);
          return true;
        }
        return false;
      });
    });
    run.kill('SIGHUP');
    const problem = await reread;
    if (problem) throw new DhcpError(`dnsmasq for subnet ${this.#cfg.id} did not take the new hosts: ${problem}`);
  }

  /**
   * Apply a host list with tags by restarting dnsmasq instead of SIGHUP: dnsmasq 2.90 (Debian 12)
   * aborts or crashes on SIGHUP once a host whose hosts-file line sets a tag (`set:host-boot`)
   * holds a lease (seen here: SIGABRT/SIGSEGV on every reload after a tagged host's lease).
   * A restart takes ~0.1 s and loses nothing: every address is static.
   */
  async #restartWith(run: DnsmasqProcess): Promise<void> {
    try {
      await run.ready;
    } catch {
      return;
    }
    if (this.#run !== run || this.#stopping) return;
    this.#run = null;
    await run.terminate('SIGTERM', STOP_GRACE_MS);
    if (this.#stopping) return;
    await this.#spawn();
    this.#say('info', `restarted with ${this.#hosts.length} host(s), pid ${this.pid}`);
  }

  #scheduleRogueChecks(): void {
    const every = this.#o.rogueCheckIntervalS ?? 300;
    if (every <= 0) return;
    const check = (): void => {
      if (this.#rogueCheck || this.#stopping) return;
      this.#rogueCheck = this.#checkRogue().finally(() => (this.#rogueCheck = null));
    };
    check();
    this.#rogueTimer = setInterval(check, every * 1000);
    this.#rogueTimer.unref();
  }

  async #checkRogue(): Promise<void> {
    const abort = new AbortController();
    this.#rogueAbort = abort;
    try {
      const others = await detectOtherDhcpServers(this.#cfg.interface, this.#cfg.netns, this.#o.rogueCheckTimeoutMs ?? 5000, abort.signal);
      if (abort.signal.aborted) return;
      this.#otherServers = others;
      if (others.length > 0) {
        const names = others.map((o) => `${o.serverId ?? o.sourceIp}${o.offeredIp ? ` (offered ${o.offeredIp})` : ''}`).join(', ');
        this.#say(
          'warn',
          `another DHCP server answers on this network: ${names}; esi keeps serving its own hosts — find and stop the other server`,
        );
      }
    } catch (err) {
      if (!abort.signal.aborted) this.#say('warn', `rogue DHCP check failed: ${(err as Error).message}`);
    } finally {
      this.#rogueAbort = null;
    }
  }

  /** Stop dnsmasq (SIGTERM, SIGKILL after 5 s) and its supervision and checks; removes the pid file. Never throws. */
  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#restartTimer) clearTimeout(this.#restartTimer);
    this.#restartTimer = null;
    if (this.#rogueTimer) clearInterval(this.#rogueTimer);
    this.#rogueTimer = null;
    this.#rogueAbort?.abort();
    await this.#rogueCheck;
    const run = this.#run;
    if (run) {
      await run.terminate('SIGTERM', STOP_GRACE_MS);
      this.#say('info', `stopped (pid ${run.pid})`);
    }
    this.#run = null;
    await this.#queue;
    await fs.rm(this.#paths.pid, { force: true }).catch(() => undefined);
    await fs.rm(`${this.#paths.dir}/leases`, { force: true }).catch(() => undefined);
    await this.#logFile?.close();
    this.#logFile = null;
    this.#started = false;
  }
}
