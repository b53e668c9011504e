/**
 * The conductor: reconciles nodes with the intent the API recorded on them (docs/architecture.md
 * "State and concurrency"; Ironic 21.4's conductor, `ironic/conductor/` in
 * https://opendev.org/openstack/ironic).
 *
 * - **Tasks.** Woken by `notifyNode(uuid)` (the inventory's `ConductorRelay`, right after the
 *   API recorded a target, or when PostgreSQL notifies a change another process made:
 *   src/server/change-events.ts) and by a short periodic poll of `NodeRepository.listPending`
 *   (the safety net; `resync` polls at once), it keeps the nodes
 *   that map to this conductor (`conductorFor` over the live conductors), locks each one
 *   (`reserve`; a node another task holds is skipped and found again later), runs its work
 *   (src/conductor/tasks/: the pending power change first, then the stage of its working
 *   provision state, stage after stage while there is work), writes each outcome with
 *   `applyConductorResult` (each stage logged and timed: ./stage-report.ts), and always
 *   releases the lock. At most `workers` tasks run at once and never two for one node
 *   (src/conductor/task-pool.ts).
 * - **Power sync** every `powerSyncIntervalMs` (src/conductor/power-sync.ts).
 * - **Agent command watch** every `pollIntervalMs`: long agent commands (image writes, disk
 *   erases) run while their node waits, unlocked; the watcher resumes it when they end
 *   (src/conductor/agent/command-watch.ts).
 * - **Take-over and wait timeouts** every `checkIntervalMs` (src/conductor/takeover.ts,
 *   src/conductor/timeouts.ts); on start, the nodes still reserved under this hostname (a
 *   crash) are failed safely first; and at once when a conductor left the live set
 *   ({@link Conductor.afterHeartbeat}). Node writes are fenced (src/conductor/fence.ts).
 * - `stop()` stops the timers, detaches from the relay and waits for the running tasks and
 *   loops; queued tasks are dropped (their intent stays recorded on the nodes).
 * - `workers = 0` makes a *paused* conductor: it starts nothing (its heartbeat, a separate
 *   worker, still registers it).
 */
import type { Clock } from '../domain/clock.ts';
import type { HardwareRegistry } from '../domain/hardware/interfaces.ts';
import { conductorFor, type ConductorDirectory, type ConductorRelay } from '../domain/inventory/conductors.ts';
import type { Conductor as ConductorRecord, Node } from '../domain/inventory/model.ts';
import type { ConductorChanges, ConductorPort, NodeRepository } from '../domain/inventory/ports.ts';
import type { SecretBox } from '../domain/secrets.ts';
import type { BackgroundWorker } from './worker.ts';
import { describeError } from './errors.ts';
import { NodeLocks } from './node-lock.ts';
import { PowerSync, type PowerSyncReport } from './power-sync.ts';
import { NO_HISTORY, type ConductorLog, type ConductorRuntime, type Mine } from './runtime.ts';
import type { NodeHistory } from '../domain/inventory/history.ts';
import { KeyedTaskPool } from './task-pool.ts';
import { OrphanWatch, takeOverOrphans } from './takeover.ts';
import { fencedNodes, NodeLockLost } from './fence.ts';
import { AgentCommandWatch, type CommandWatchReport } from './agent/command-watch.ts';
import { failTimedOutWaits, type WaitTimeouts } from './timeouts.ts';
import { failedStageChanges, runWork } from './tasks/run.ts';
import type { BootMediaEnv, NetworkBootEnv, TaskSettings } from './tasks/context.ts';
import type { AgentEnv } from './agent/env.ts';
import type { InspectionEnv } from './inspect/env.ts';
import type { BiosSettingsRepository } from '../domain/inventory/node-hardware.ts';
import type { DeployTemplateLookup } from '../domain/inventory/deploy-templates.ts';
import { nextWork } from './tasks/work.ts';
import { NO_OBSERVER, reportStage, type ConductorObserver } from './stage-report.ts';

/** What the conductor is built from. */
export interface ConductorDeps {
  readonly nodes: NodeRepository;
  readonly directory: ConductorDirectory;
  /** The inventory's relay; the conductor attaches itself on start. */
  readonly relay: ConductorRelay;
  readonly hardware: HardwareRegistry;
  readonly secrets: SecretBox;
  readonly clock: Clock;
  readonly log: ConductorLog;
  /** Node history (power-sync mismatches); none records nothing. */
  readonly history?: NodeHistory;
  /** The deploy agent flows (src/conductor/agent/); `record` is supplied by the conductor. */
  readonly agent?: Omit<AgentEnv, 'record'>;
  /** Inspection storage and rules (src/conductor/inspect/); `host` is supplied by the conductor. */
  readonly inspection?: Omit<InspectionEnv, 'host'>;
  /** The BIOS settings cache that cleaning refreshes. */
  readonly bios?: BiosSettingsRepository;
  /** The deploy templates that deployments apply (absent: none). */
  readonly deployTemplates?: DeployTemplateLookup;
  /** The provisioning network's switch settling (absent: none configured). */
  readonly network?: NetworkBootEnv;
  /** Per-node virtual media ISOs (absent: only ready ISOs are inserted). */
  readonly bootMedia?: BootMediaEnv;
  /** Told each stage's duration (the metrics; absent: nobody). */
  readonly observer?: ConductorObserver;
}

/** Settings of the conductor (from `config.conductor`). */
export interface ConductorOptions extends TaskSettings, WaitTimeouts {
  /** This conductor's hostname (its registration and the `reservation` it writes). */
  readonly hostname: string;
  /** Its conductor group ('' by default). */
  readonly group: string;
  /** Tasks at once; 0 = paused (see the module documentation). */
  readonly workers: number;
  /** Period of the pending-work poll, ms (1000). */
  readonly pollIntervalMs: number;
  /** Period of the power sync, ms (Ironic 60 s). */
  readonly powerSyncIntervalMs: number;
  /** Failed power reads tolerated before maintenance (Ironic 3). */
  readonly powerSyncMaxRetries: number;
  /** BMC reads at once during a power sync (Ironic 8). */
  readonly powerSyncParallelism: number;
  /** Push the recorded power state to the BMC on a mismatch (Ironic `force_power_state_during_sync`). */
  readonly forcePowerStateDuringSync: boolean;
  /** Deadline of one power-state read by the sync, seconds. */
  readonly bmcTimeoutS: number;
  /** Period of the take-over and timeout checks, ms (Ironic 60 s). */
  readonly checkIntervalMs: number;
}

/** Most stages one task runs in a row before letting other nodes go first. */
const MAX_STAGES = 8;

/** The conductor worker (see the module documentation). */
export class Conductor implements BackgroundWorker, ConductorPort {
  readonly name = 'conductor';
  readonly #rt: ConductorRuntime;
  readonly #observer: ConductorObserver;
  #pool: KeyedTaskPool;
  readonly #sync: PowerSync;
  readonly #watch: AgentCommandWatch | null;
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #loops = new Set<Promise<unknown>>();
  #running = false;
  #stopping = false;
  #polling = false;
  #syncing = false;
  #checking = false;
  #watching = false;
  readonly #orphans: OrphanWatch;

  constructor(
    private readonly deps: ConductorDeps,
    private readonly options: ConductorOptions,
  ) {
    const log = deps.log;
    this.#observer = deps.observer ?? NO_OBSERVER;
    const nodes = fencedNodes(deps.nodes, options.hostname);
    const locks = new NodeLocks(nodes, options.hostname, (uuid, err) =>
      log.error({ err, node: uuid }, 'conductor: releasing a node lock failed'),
    );
    this.#rt = {
      nodes,
      locks,
      env: {
        hardware: deps.hardware,
        secrets: deps.secrets,
        clock: deps.clock,
        settings: { powerTimeoutS: options.powerTimeoutS, automatedClean: options.automatedClean },
        ...(deps.inspection ? { inspection: { ...deps.inspection, host: options.hostname } } : {}),
        ...(deps.bios ? { bios: deps.bios } : {}),
        ...(deps.deployTemplates ? { deployTemplates: deps.deployTemplates } : {}),
        ...(deps.network ? { network: deps.network } : {}),
        ...(deps.bootMedia ? { bootMedia: deps.bootMedia } : {}),
        record: async (uuid: string, changes: ConductorChanges) => void (await nodes.applyConductorResult(uuid, changes, deps.clock.now())),
        ...(deps.agent
          ? {
              agent: {
                ...deps.agent,
                record: async (uuid: string, changes: ConductorChanges) =>
                  void (await nodes.applyConductorResult(uuid, changes, deps.clock.now())),
              },
            }
          : {}),
      },
      log,
      host: options.hostname,
      history: deps.history ?? NO_HISTORY,
    };
    this.#pool = this.#newPool();
    this.#orphans = new OrphanWatch(
      this.#rt,
      deps.directory,
      () => this.mapper(),
      () => this.#stopping,
    );
    const agentEnv = this.#rt.env.agent;
    this.#watch = agentEnv ? new AgentCommandWatch(this.#rt, agentEnv, (uuid) => this.notifyNode(uuid)) : null;
    this.#sync = new PowerSync(this.#rt, {
      maxRetries: options.powerSyncMaxRetries,
      parallelism: options.powerSyncParallelism,
      force: options.forcePowerStateDuringSync,
      readTimeoutMs: options.bmcTimeoutS * 1000,
      intervalMs: options.powerSyncIntervalMs,
    });
  }

  /** Recover this host's own locks, attach to the relay, start the loops. */
  async start(): Promise<void> {
    if (this.#running) return;
    if (this.options.workers === 0) {
      this.deps.log.info({ conductor: this.options.hostname }, 'conductor: paused (0 workers); recorded intent stays pending');
      return;
    }
    this.#running = true;
    this.#stopping = false;
    if (this.#pool.closed) this.#pool = this.#newPool();
    await this.#guard('start-up take-over', () => this.recoverOwnLocks());
    this.deps.relay.attach(this);
    const every = (ms: number, fn: () => Promise<unknown>): void => {
      const t = setInterval(() => void this.#track(fn()), ms);
      t.unref();
      this.#timers.push(t);
    };
    every(this.options.pollIntervalMs, () => this.poll());
    if (this.#watch) every(this.options.pollIntervalMs, () => this.watchAgentCommands());
    every(this.options.powerSyncIntervalMs, () => this.syncPowerStates());
    every(this.options.checkIntervalMs, () => this.checkProvisionStates());
    void this.#track(this.poll());
  }

  /** Stop the loops and wait for the running tasks (see the module documentation). */
  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#stopping = true;
    for (const t of this.#timers.splice(0)) clearInterval(t);
    this.deps.relay.attach(null);
    await Promise.allSettled([...this.#loops]);
    await this.#pool.close();
    this.#running = false;
  }

  /** The API recorded work for a node: run it soon (never throws). */
  notifyNode(nodeUuid: string): void {
    if (!this.#running || this.#stopping) return;
    this.#pool.submit(nodeUuid, () => this.#runNode(nodeUuid));
  }

  /** Another process's changes may have been missed (lost notifications): poll now, when running (never throws). */
  resync(): void {
    if (this.#running && !this.#stopping) void this.#track(this.poll());
  }

  /** A heartbeat of an agent running a long command: look at the command now (never throws). */
  notifyAgentCommand(nodeUuid: string): void {
    const watch = this.#watch;
    if (watch === null || !this.#running || this.#stopping) return;
    void this.#track(
      this.mapper()
        .then((mine) => watch.checkNow(nodeUuid, mine))
        .catch(() => undefined),
    );
  }

  /** Node tasks waiting for a worker and running now (the `esi_conductor_tasks` gauge). */
  taskDepth(): { readonly queued: number; readonly running: number } {
    return { queued: this.#pool.queued, running: this.#pool.running };
  }

  /** Resolves when no task is running or queued (tests). */
  idle(): Promise<void> {
    return this.#pool.idle();
  }

  /** One poll of the pending work: queue the nodes that map here (also run by the timer). */
  async poll(): Promise<void> {
    if (this.#polling || this.#stopping) return;
    this.#polling = true;
    try {
      await this.#guard('poll', async () => {
        if (this.#pool.queued > 4 * this.options.workers) return;
        const pending = await this.deps.nodes.listPending(Math.max(64, 8 * this.options.workers));
        const mine = await this.mapper();
        for (const n of pending)
          if (nextWork(n) !== null && mine(n) && !this.#rt.locks.isHeld(n.uuid)) this.#pool.submit(n.uuid, () => this.#runNode(n.uuid));
      });
    } finally {
      this.#polling = false;
    }
  }

  /** One round of the long agent command watcher (also run by the timer). @returns its report, or null when skipped */
  async watchAgentCommands(): Promise<CommandWatchReport | null> {
    if (this.#watch === null || this.#watching || this.#stopping) return null;
    this.#watching = true;
    try {
      const watch = this.#watch;
      return await this.#guard('agent command watch', async () => watch.run(await this.mapper(), () => this.#stopping));
    } finally {
      this.#watching = false;
    }
  }

  /** One power-sync round (also run by the timer). @returns its report, or null when skipped */
  async syncPowerStates(): Promise<PowerSyncReport | null> {
    if (this.#syncing || this.#stopping) return null;
    this.#syncing = true;
    try {
      return await this.#guard('power sync', async () => this.#sync.run(await this.mapper(), () => this.#stopping));
    } finally {
      this.#syncing = false;
    }
  }

  /** One take-over and wait-timeout check (also run by the timer). */
  async checkProvisionStates(): Promise<{ takenOver: number; timedOut: number } | null> {
    if (this.#checking || this.#stopping) return null;
    this.#checking = true;
    try {
      return await this.#guard('provision state check', async () => {
        await this.#rt.locks.retryLeaked();
        const mine = await this.mapper();
        const takenOver = await this.#orphans.takeOverOnce(mine);
        const timedOut = await failTimedOutWaits(this.#rt, mine, this.options);
        return { takenOver, timedOut };
      });
    } finally {
      this.#checking = false;
    }
  }

  /**
   * After each heartbeat of this conductor: `OrphanWatch.afterHeartbeat` (./takeover.ts), then,
   * when the live set shrank, a poll for the work that maps here now (never throws).
   */
  async afterHeartbeat(silenceMs: number, deadAfterMs: number): Promise<void> {
    if (!this.#running || this.#stopping) return;
    if (await this.#track(this.#orphans.afterHeartbeat(silenceMs, deadAfterMs))) void this.#track(this.poll());
  }

  /**
   * Fail safely the nodes still reserved under this hostname (run at start; the process made
   * sure first that no other live process uses the name: src/server/conductor-name.ts).
   * @returns how many
   */
  async recoverOwnLocks(): Promise<number> {
    return takeOverOrphans(
      this.#rt,
      () => true,
      () => true,
      true,
    );
  }

  /**
   * Which nodes map to this conductor: `conductorFor` over the live conductors, counting this
   * one as live even when its own heartbeat is late (it is running).
   */
  async mapper(): Promise<Mine> {
    const alive = await this.deps.directory.alive();
    const me = this.options.hostname;
    const self: ConductorRecord = {
      hostname: me,
      conductor_group: this.options.group,
      drivers: this.deps.hardware.names(),
      created_at: 0,
      updated_at: this.deps.clock.now(),
    };
    const list = alive.some((c) => c.hostname === me) ? alive : [...alive, self];
    return (n) => conductorFor(n, list) === me;
  }

  /** The task of one node: check, lock, run its work stage after stage, release. */
  async #runNode(uuid: string): Promise<void> {
    if (this.#stopping) return;
    const first = await this.deps.nodes.get(uuid);
    if (first === null || first.reservation !== null || nextWork(first) === null) return;
    if (!(await this.mapper())(first)) return;
    await this.#rt.locks.with(uuid, async () => {
      let node: Node | null = await this.deps.nodes.get(uuid);
      for (let i = 0; node !== null && i < MAX_STAGES; i++) {
        const work = nextWork(node);
        if (work === null) return;
        let changes: ConductorChanges;
        const before: Node = node;
        const started = performance.now();
        try {
          changes = await runWork(this.#rt.env, node, work);
        } catch (err) {
          if (err instanceof NodeLockLost) throw err;
          this.deps.log.error({ err, node: uuid, work }, 'conductor: task failed unexpectedly');
          changes = failedStageChanges(node, work, `Unexpected conductor failure: ${describeError(err)}`, this.deps.clock.now());
        }
        node = await this.#rt.nodes.applyConductorResult(uuid, changes, this.deps.clock.now());
        reportStage(this.deps.log, this.#observer, before, work, node, performance.now() - started);
      }
      // More stages are left: queue the node again so that others get a turn.
      if (node !== null && nextWork(node) !== null) this.#pool.submit(uuid, () => this.#runNode(uuid));
    });
  }

  #newPool(): KeyedTaskPool {
    return new KeyedTaskPool(Math.max(1, this.options.workers), (uuid, err) =>
      err instanceof NodeLockLost
        ? this.deps.log.warn({ node: uuid }, err.message)
        : this.deps.log.error({ err, node: uuid }, 'conductor: node task failed unexpectedly'),
    );
  }

  async #guard<T>(what: string, fn: () => Promise<T>): Promise<T | null> {
    try {
      return await fn();
    } catch (err) {
      this.deps.log.error({ err }, `conductor: ${what} failed`);
      return null;
    }
  }

  #track<T>(p: Promise<T>): Promise<T> {
    this.#loops.add(p);
    void p.finally(() => this.#loops.delete(p)).catch(() => {});
    return p;
  }
}
