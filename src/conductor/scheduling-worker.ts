/**
 * The scheduling worker of a conductor process (a `BackgroundWorker`): it processes
 * `allocating` allocations (Ironic's conductor does this in `do_allocate`,
 * `ironic/conductor/allocations.py`) and runs the compute area's periodic sweep (servers whose
 * delete waits for their node, src/domain/compute/).
 *
 * - Woken at once by `notifyAllocation` (the API's `AllocationRelay`) and every `pollMs` by a
 *   poll of `listAllocating` — the safety net, and how allocations created through another
 *   process's API are found.
 * - Which conductor processes an allocation: rendezvous hashing of its UUID over the live
 *   conductors (as nodes are spread), so several conductors share the work; two conductors
 *   that both try one allocation are harmless — its claim is conditional on `allocating`
 *   (src/store/scheduling/allocation-repository.ts).
 * - One allocation at a time per process (placement is fast; claims serialise on the database).
 */
import type { Conductor as ConductorRecord } from '../domain/inventory/model.ts';
import type { ConductorDirectory } from '../domain/inventory/conductors.ts';
import type { AllocationProcessor, AllocationRelay, AllocationRepository, AllocationWaker } from '../domain/scheduling/index.ts';
import { fnv1a } from '../domain/scheduling/weighers.ts';
import type { BackgroundWorker } from './worker.ts';
import type { ConductorLog } from './runtime.ts';

/** What the worker needs. */
export interface SchedulingWorkerDeps {
  readonly allocations: AllocationRepository;
  readonly processor: AllocationProcessor;
  readonly relay: AllocationRelay;
  readonly directory: ConductorDirectory;
  readonly hostname: string;
  readonly log: ConductorLog;
  /** Poll interval, ms. */
  readonly pollMs: number;
  /** A periodic task run after each poll (the compute sweep); must not throw. */
  readonly sweep?: () => Promise<void>;
}

/** The conductor responsible for an allocation (see the module documentation). */
export function allocationConductor(uuid: string, alive: readonly Pick<ConductorRecord, 'hostname'>[]): string | null {
  let best: string | null = null;
  let bestScore = -1;
  for (const c of alive) {
    const score = fnv1a(`${c.hostname}\u0000${uuid}`);
    if (score > bestScore || (score === bestScore && best !== null && c.hostname < best)) {
      best = c.hostname;
      bestScore = score;
    }
  }
  return best;
}

/** Processes allocations and runs the compute sweep (see the module documentation). */
export class SchedulingWorker implements BackgroundWorker, AllocationWaker {
  readonly name = 'scheduling';
  #timer: NodeJS.Timeout | null = null;
  #running = false;
  #queue = new Set<string>();
  #draining: Promise<void> | null = null;
  #polling: Promise<void> | null = null;

  constructor(private readonly deps: SchedulingWorkerDeps) {}

  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    this.deps.relay.attach(this);
    const tick = (): void => {
      if (!this.#running) return;
      this.#timer = setTimeout(() => void this.poll().finally(tick), this.deps.pollMs);
      this.#timer.unref();
    };
    void this.poll().finally(tick);
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.deps.relay.attach(null);
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#polling;
    await this.#draining;
  }

  /** An allocation was created by this process's API: process it now. */
  notifyAllocation(uuid: string): void {
    if (!this.#running) return;
    this.#queue.add(uuid);
    this.#drain();
  }

  /** Resolves when nothing is queued or being processed (tests). */
  async idle(): Promise<void> {
    while (this.#draining !== null) await this.#draining;
  }

  /** One poll: queue the allocations that map here, then run the sweep. Concurrent calls share it. */
  poll(): Promise<void> {
    this.#polling ??= this.#poll().finally(() => {
      this.#polling = null;
    });
    return this.#polling;
  }

  async #poll(): Promise<void> {
    try {
      const waiting = await this.deps.allocations.listAllocating(64);
      if (waiting.length > 0) {
        const alive = await this.deps.directory.alive();
        const live = alive.some((c) => c.hostname === this.deps.hostname) ? alive : [...alive, { hostname: this.deps.hostname }];
        for (const a of waiting) if (allocationConductor(a.uuid, live) === this.deps.hostname) this.#queue.add(a.uuid);
        this.#drain();
      }
    } catch (err) {
      this.deps.log.error({ err }, 'scheduling worker: allocation poll failed');
    }
    if (this.deps.sweep && this.#running) await this.deps.sweep();
  }

  #drain(): void {
    if (this.#draining !== null) return;
    this.#draining = (async () => {
      while (this.#running && this.#queue.size > 0) {
        const uuid = this.#queue.values().next().value!;
        this.#queue.delete(uuid);
        try {
          const r = await this.deps.processor.process(uuid);
          if (r.state === 'error') this.deps.log.warn({ allocation: uuid, error: r.message }, 'allocation failed');
          else if (r.state === 'active') this.deps.log.debug({ allocation: uuid, node: r.nodeUuid }, 'allocation active');
        } catch (err) {
          this.deps.log.error({ err, allocation: uuid }, 'scheduling worker: processing an allocation failed');
        }
      }
    })().finally(() => {
      this.#draining = null;
    });
  }
}
